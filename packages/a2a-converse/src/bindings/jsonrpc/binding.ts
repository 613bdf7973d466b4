/**
 * The JSON-RPC 2.0 binding (A2A 1.0 §9): a JSON-RPC body → one service call → a JSON-RPC response, or SSE frames
 * whose `data:` is a JSON-RPC response carrying the request's id. Wire checks only: the body (-32700, 413, 415)
 * and the envelope (-32600) are found here and handed to the service as the call's `rejected` error, which answers
 * it after negotiation and authentication, as before any A2A check. Every other decision is the service's.
 *
 * HTTP statuses: 200 for every A2A error (common practice, the SDK's), 400 / 413 / 415 for a body the binding
 * cannot read, and the service's own (401, 429, 503).
 */
import {
  type A2AResult, type A2AService, type DoorRequest, type StreamItem
} from '../../a2a/service.js'
import type { ServiceLogger } from '../../protocol/backend.js'
import { checkEnvelope, envelopeTooDeep } from '../../protocol/check-request.js'
import {
  contentTypeNotSupported, errorResponse, internalError, invalidRequest, parseError, successResponse,
  type JsonRpcError, type JsonRpcId, type JsonRpcResponse
} from '../../protocol/errors.js'
import { errorFrame, frame, SSE_HEADERS } from './sse.js'

/** The request body as the door read it. */
export type RequestBody =
  /** Parsed JSON (any JSON value: the checks decide). */
  | { kind: 'json', value: unknown }
  /** No body (an empty one included). */
  | { kind: 'absent' }
  /** Not JSON. */
  | { kind: 'invalid_json' }
  /** Larger than the body limit. */
  | { kind: 'too_large', limit: number }
  /** A Content-Type other than application/json or application/a2a+json. */
  | { kind: 'unsupported_media_type', contentType: string | undefined }

/** One HTTP request to an agent's JSON-RPC endpoint, as a door hands it over. */
/** A JSON-RPC request as a door hands it down: the door's request (DoorRequest) and the body it read. */
export interface A2AServiceRequest extends DoorRequest {
  body: RequestBody
}

export interface JsonReply {
  kind: 'json'
  status: number
  headers: Record<string, string>
  body: JsonRpcResponse | NotFoundBody
}

export interface StreamReply {
  kind: 'stream'
  status: 200
  headers: Record<string, string>
  /** SSE text, one complete frame per item. */
  frames: AsyncIterable<string>
}

/** What a door writes: a JSON body, or SSE frames. */
export type A2AReply = JsonReply | StreamReply

/** The body of a 404 for an unknown agent (Fastify's not-found shape). */
export interface NotFoundBody {
  statusCode: 404
  error: 'Not Found'
  message: string
}

export function unknownAgentBody (agentId: string): NotFoundBody {
  return { statusCode: 404, error: 'Not Found', message: `unknown agent "${agentId.slice(0, 128)}"` }
}

/** Answers one JSON-RPC request through the service. Never rejects. */
/** `versions`: what the endpoint answers, named by a -32009 (the bound service passes 0.3 and 1.0 when it translates 0.3). */
export async function answerJsonRpc (service: A2AService, request: A2AServiceRequest, versions?: readonly string[]): Promise<A2AReply> {
  if (!service.serves(request.agentId)) return { kind: 'json', status: 404, headers: {}, body: unknownAgentBody(request.agentId) }
  const { id, method, params, rejected } = mapBody(request.body)
  const result = await service.call({
    binding: 'jsonrpc',
    agentId: request.agentId,
    method,
    params,
    rejected,
    id,
    headers: request.headers,
    query: request.query,
    signal: request.signal,
    caller: request.caller,
    log: request.log,
    doorRequest: request.doorRequest,
    clientAddress: request.clientAddress,
    versions
  })
  return toReply(id, result, request.log)
}

/** The body as a call: its id, method and params, or the wire error found in it. */
export function mapBody (body: RequestBody): { id: JsonRpcId, method: string, params: unknown, rejected?: { status: number, error: JsonRpcError } } {
  if (body.kind !== 'json') return { id: null, method: '', params: undefined, rejected: bodyError(body) }
  const envelope = checkEnvelope(body.value)
  if (!envelope.ok) return { id: envelope.response.id, method: '', params: undefined, rejected: { status: 200, error: envelope.response.error } }
  const tooDeep = envelopeTooDeep(body.value as Record<string, unknown>)
  if (tooDeep !== undefined) return { id: envelope.id, method: envelope.method, params: undefined, rejected: { status: 200, error: tooDeep } }
  return { id: envelope.id, method: envelope.method, params: envelope.params }
}

function bodyError (body: Exclude<RequestBody, { kind: 'json' }>): { status: number, error: JsonRpcError } {
  switch (body.kind) {
    case 'too_large':
      return {
        status: 413,
        error: invalidRequest([{ field: 'request', description: `must not exceed ${body.limit} bytes` }], 'Request payload too large')
      }
    case 'unsupported_media_type':
      return { status: 415, error: contentTypeNotSupported(body.contentType) }
    default:
      return { status: 400, error: parseError() }
  }
}

/** A service result as the JSON-RPC reply (the 0.3 binding's too, once translated). */
export function toReply (id: JsonRpcId, result: A2AResult, log: ServiceLogger | undefined): A2AReply {
  switch (result.kind) {
    case 'value':
      return { kind: 'json', status: 200, headers: result.headers, body: successResponse(id, result.value) }
    case 'error':
      return { kind: 'json', status: result.status ?? 200, headers: result.headers, body: errorResponse(id, result.error) }
    default:
      return { kind: 'stream', status: 200, headers: { ...result.headers, ...SSE_HEADERS }, frames: framesOf(id, result.events, log) }
  }
}

/** One SSE frame per item; a result that cannot be serialized ends the stream with a -32603 frame (and is logged). */
async function * framesOf (id: JsonRpcId, events: AsyncIterable<StreamItem>, log: ServiceLogger | undefined): AsyncGenerator<string, void, undefined> {
  for await (const item of events) {
    let text: string
    try {
      text = item.kind === 'event' ? frame(id, item.value) : errorFrame(id, item.error)
    } catch (error) {
      log?.error({ err: error }, 'A2A stream event cannot be serialized')
      // Leaving the loop returns the events: the service stops the backend's stream.
      yield errorFrame(id, internalError())
      return
    }
    yield text
  }
}
