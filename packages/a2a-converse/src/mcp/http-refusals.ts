/**
 * The MCP door's own HTTP refusals, written before the SDK sees a request: an unknown agent, a refused caller, a
 * body too large or not JSON, a batch too long or not admitted. Each has the shape (and, for the body errors, the
 * text) the SDK or the A2A door answers with, so a client cannot tell who refused.
 */
import type { ServerResponse } from 'node:http'
import type { AccessDecision } from '../a2a/service.js'
import { unknownAgentBody } from '../bindings/jsonrpc/binding.js'
import { errorResponse, rateLimited } from '../protocol/errors.js'
import type { McpRequest } from './mcp-service.js'

/** 404 with the body the doors answer an unknown agent with. */
export function notFound (response: ServerResponse, agentId: string): void {
  response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
  response.end(JSON.stringify(unknownAgentBody(agentId)))
}

/** 401 / 503 (the door answered an unknown agent before): the A2A door's JSON-RPC body. */
export function accessRefused (response: ServerResponse, access: Extract<AccessDecision, { kind: 'refused' }>): void {
  response.writeHead(access.status, { 'content-type': 'application/json; charset=utf-8', ...access.headers })
  response.end(JSON.stringify(errorResponse(null, access.error)))
}

/** An HTTP error with a JSON-RPC error body of id null, the shape (and, for body errors, the text) of the SDK's. */
export function jsonRpcError (response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/**
 * Whether the request's body was refused (and answered): too large, not JSON, or a batch (the older revisions'
 * JSON-RPC array) longer than maxBatch or not admitted — bounded, and each of its messages counted, before any runs.
 */
export async function bodyRefused (request: McpRequest, maxBatch: number): Promise<boolean> {
  const { body, response } = request
  if (body?.kind === 'too_large') {
    jsonRpcError(response, 413, -32000, `Payload Too Large: Request body must not exceed ${body.limit} bytes`)
    return true
  }
  if (body?.kind === 'invalid_json') {
    jsonRpcError(response, 400, -32700, 'Parse error: Invalid JSON')
    return true
  }
  if (body?.kind !== 'json' || !Array.isArray(body.value)) return false
  const messages = body.value.length
  // The SDK's own refusal past its bound (HTTP 400, -32600), at ours.
  if (messages > maxBatch) {
    jsonRpcError(response, 400, -32600, `Invalid Request: Batch must not exceed ${maxBatch} messages`)
    return true
  }
  const refusal = await request.admitBatch?.(messages)
  if (refusal === undefined) return false
  response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(refusal.retryAfterSec) })
  response.end(JSON.stringify(errorResponse(null, rateLimited(refusal.retryAfterSec))))
  return true
}
