/**
 * The HTTP+JSON binding (A2A 1.0 §11): an HTTP request under an agent's HTTP+JSON URL → one service call → a
 * ProtoJSON body with the binding's status (200; 201 for a created push config, 204 for a deleted one), an
 * AIP-193 error body (errors.ts), or SSE frames whose `data:` is a StreamResponse (§11.7) and, for a failure after
 * the first event, one `event: error` frame carrying the error body (the SDK's framing). Service parameters are the
 * headers (`A2A-Version` also as a query parameter, §3.6.1), so negotiation, the echo header, authentication and
 * every A2A check are the service's, identical to JSON-RPC.
 *
 * Wire checks only: the route (404 / 405 with Allow), the body (400 not JSON, 413 too large, 415 media type),
 * handed to the service as the call's `rejected` error so that they come after authentication, as on JSON-RPC.
 * Responses are JSON (§11.1; the examples' `application/a2a+json` is accepted on requests): a `json` reply's media
 * type is the door's to write, `application/json; charset=utf-8`, as for the JSON-RPC binding's replies.
 */
import type { A2AResult, A2AService, DoorRequest, StreamItem } from '../../a2a/service.js'
import type { ServiceLogger } from '../../protocol/backend.js'
import {
  contentTypeNotSupported, internalError, invalidParams, invalidRequest, parseError, type JsonRpcError
} from '../../protocol/errors.js'
import type { RequestBody, StreamReply } from '../jsonrpc/binding.js'
import { SSE_HEADERS } from '../jsonrpc/sse.js'
import { restErrorBody, restStatusOf } from './errors.js'
import { matchRoute } from './routes.js'

/** The path segment of an agent's HTTP+JSON URL, after its JSON-RPC URL: `<mount>/a2a/<id>/rest`. */
export const HTTP_JSON_PATH = '/rest'

/** One HTTP request under an agent's HTTP+JSON URL, as a door hands it over. */
/** An HTTP+JSON request as a door hands it down: the door's request (DoorRequest), the method, path and body. */
export interface HttpJsonRequest extends DoorRequest {
  /** GET, POST, DELETE, … */
  httpMethod: string
  /** The path after the agent's HTTP+JSON URL, as sent (percent-encoded): `/tasks/t-1:cancel`. */
  path: string
  query: Readonly<Record<string, unknown>>
  /** The body as the door read it (`absent` when the door reads none, as for GET). */
  body: RequestBody
}

/** A JSON body (none for a 204; the door writes its media type), or SSE frames. */
export type HttpJsonReply =
  | { kind: 'json', status: number, headers: Record<string, string>, body?: unknown }
  | StreamReply

/** Answers one HTTP+JSON request through the service. Never rejects. */
export async function answerHttpJson (service: A2AService, request: HttpJsonRequest): Promise<HttpJsonReply> {
  const route = matchRoute(request.httpMethod, request.path)
  if (route === undefined) return errorReply(invalidParams([{ field: 'path', description: 'is not a valid percent-encoded path' }]), 400, {})
  if (route.kind === 'not_found') {
    return errorReply({ code: -32601, message: `No HTTP+JSON route ${request.httpMethod} ${request.path.slice(0, 128)}` }, 404, {})
  }
  if (route.kind === 'method_not_allowed') {
    return errorReply({ code: -32601, message: `Method ${request.httpMethod} is not allowed on this route` }, 405, { allow: route.allow })
  }
  const rejected = bodyError(request.body)
  const body = request.body.kind === 'json' ? request.body.value : undefined
  const result = await service.call({
    binding: 'http+json',
    agentId: request.agentId,
    method: route.method,
    params: rejected === undefined ? route.params({ query: request.query, body }) : undefined,
    rejected,
    headers: request.headers,
    query: request.query,
    signal: request.signal,
    caller: request.caller,
    log: request.log,
    doorRequest: request.doorRequest,
    clientAddress: request.clientAddress
  })
  return toReply(result, route.status ?? 200, request.log)
}

/** A body the binding cannot read, as the call's `rejected` error (the 0.3 HTTP+JSON binding's too). */
export function bodyError (body: RequestBody): { status: number, error: JsonRpcError } | undefined {
  switch (body.kind) {
    case 'json':
    case 'absent':
      return undefined
    case 'too_large':
      return { status: 413, error: invalidRequest([{ field: 'request', description: `must not exceed ${body.limit} bytes` }], 'Request payload too large') }
    case 'unsupported_media_type':
      return { status: 415, error: contentTypeNotSupported(body.contentType) }
    default:
      return { status: 400, error: parseError() }
  }
}

function errorReply (error: JsonRpcError, status: number, headers: Record<string, string>): HttpJsonReply {
  return { kind: 'json', status, headers, body: restErrorBody(error, status) }
}

function toReply (result: A2AResult, status: number, log: ServiceLogger | undefined): HttpJsonReply {
  switch (result.kind) {
    case 'value':
      if (status === 204) return { kind: 'json', status, headers: result.headers }
      return { kind: 'json', status, headers: result.headers, body: result.value }
    case 'error':
      return errorReply(result.error, restStatusOf(result.error, result.status), result.headers)
    default:
      return { kind: 'stream', status: 200, headers: { ...result.headers, ...SSE_HEADERS }, frames: framesOf(result.events, log) }
  }
}

/** `data: <StreamResponse>` per event; a failure is an `event: error` frame with the error body (as the SDK's). */
async function * framesOf (events: AsyncIterable<StreamItem>, log: ServiceLogger | undefined): AsyncGenerator<string, void, undefined> {
  for await (const item of events) {
    let text: string
    try {
      text = item.kind === 'event'
        ? `data: ${JSON.stringify(item.value)}\n\n`
        : errorFrame(item.error)
    } catch (error) {
      log?.error({ err: error }, 'A2A stream event cannot be serialized')
      // Leaving the loop returns the events: the service stops the backend's stream.
      yield errorFrame(internalError())
      return
    }
    yield text
  }
}

function errorFrame (error: JsonRpcError): string {
  return `event: error\ndata: ${JSON.stringify(restErrorBody(error, restStatusOf(error)))}\n\n`
}
