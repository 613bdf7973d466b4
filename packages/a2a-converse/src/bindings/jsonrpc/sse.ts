/**
 * Server-Sent Events framing of JSON-RPC streams (A2A 1.0 §9.4.2): one `data:` frame per JSON-RPC response
 * carrying the request's id, and one `event: error` frame for an error.
 */
import { errorResponse, JSONRPC_VERSION, type JsonRpcError, type JsonRpcId } from '../../protocol/errors.js'

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no'
})

export function frame (id: JsonRpcId, result: unknown): string {
  return `data: ${JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, result })}\n\n`
}

export function errorFrame (id: JsonRpcId, error: JsonRpcError): string {
  return `event: error\ndata: ${JSON.stringify(errorResponse(id, error))}\n\n`
}
