/**
 * The A2A 0.3 HTTP+JSON binding: the 0.3 REST paths under an agent's HTTP+JSON URL (`<…>/rest/v1/message:send`,
 * `/v1/tasks/{id}`, …, the 0.3 SDKs' RestTransport) → the A2A 1.0 call → the service → 0.3 proto-JSON bodies
 * (request-to-v1.ts `restSendToV1`, result-to-v0_3.ts `restResultToV03`). The `/v1/` prefix tells these requests
 * apart from the 1.0 routes, whatever `A2A-Version` says. As on 0.3 JSON-RPC: the call carries `A2A-Version: 1.0`,
 * `X-A2A-Extensions` joins `A2A-Extensions`, the echo goes back in the header the request used. Errors are the
 * 0.3 REST body `{code, message, data?}` (the A2A error's JSON-RPC code) with the 1.0 binding's HTTP status.
 */
import type { A2AResult, A2AService, StreamItem } from '../../a2a/service.js'
import type { ServiceLogger } from '../../protocol/backend.js'
import { internalError, invalidParams, type FieldViolation, type JsonRpcError } from '../../protocol/errors.js'
import { bodyError, type HttpJsonReply, type HttpJsonRequest } from '../http-json/binding.js'
import { restStatusOf } from '../http-json/errors.js'
import { SSE_HEADERS } from '../jsonrpc/sse.js'
import { echoHeaders, v1Headers } from './jsonrpc.js'
import { restPushConfigToV1, restSendToV1 } from '../../protocol/v0_3/request-to-v1.js'
import { restEventToV03, restResultToV03 } from '../../protocol/v0_3/rest-result-to-v0_3.js'
import type { V1MethodOf03 } from '../../protocol/v0_3/types.js'

/** The path prefix of every 0.3 HTTP+JSON route (after the agent's HTTP+JSON URL). */
export const V03_REST_PREFIX = '/v1/'

interface V03Route {
  method: V1MethodOf03
  params: (body: unknown, query: Readonly<Record<string, unknown>>, violations: FieldViolation[]) => unknown
  status?: number
}

/** Answers one 0.3 HTTP+JSON request (a path starting with /v1/) through the service. Never rejects. */
export async function answerRestV03 (service: A2AService, request: HttpJsonRequest): Promise<HttpJsonReply> {
  const route = matchV03Route(request.httpMethod, request.path)
  if (route === undefined) return errorReply({ code: -32601, message: `No A2A 0.3 HTTP+JSON route ${request.httpMethod} ${request.path.slice(0, 128)}` }, 404, {})
  if (route === 'undecodable') return errorReply(invalidParams([{ field: 'path', description: 'is not a valid percent-encoded path' }]), 400, {})
  let rejected = bodyError(request.body)
  let params: unknown
  if (rejected === undefined) {
    const violations: FieldViolation[] = []
    params = route.params(request.body.kind === 'json' ? request.body.value : undefined, request.query, violations)
    if (violations.length > 0) rejected = { status: 400, error: invalidParams(violations.slice(0, 20)) }
  }
  const result = await service.call({
    binding: 'http+json-0.3',
    agentId: request.agentId,
    method: route.method,
    params,
    rejected,
    headers: v1Headers(request.headers),
    query: request.query,
    signal: request.signal,
    caller: request.caller,
    log: request.log,
    doorRequest: request.doorRequest,
    clientAddress: request.clientAddress
  })
  const reply = toReply(route.method, result, route.status ?? 200, request.log)
  reply.headers = echoHeaders(reply.headers, request.headers)
  return reply
}

/** The 0.3 route of a method and path, 'undecodable' for a segment that is not valid percent-encoding. */
export function matchV03Route (httpMethod: string, path: string): V03Route | 'undecodable' | undefined {
  const segments = path.slice(V03_REST_PREFIX.length).split('/')
  let ids: string[]
  try {
    ids = segments.map((segment) => decodeURIComponent(segment.replace(/:(cancel|subscribe)$/, '')))
  } catch {
    return 'undecodable'
  }
  const [root, second, third, fourth] = segments
  const verb = httpMethod.toUpperCase()
  if (segments.length === 1 && verb === 'POST' && root === 'message:send') return { method: 'SendMessage', params: sendParams }
  if (segments.length === 1 && verb === 'POST' && root === 'message:stream') return { method: 'SendStreamingMessage', params: sendParams }
  if (segments.length === 1 && verb === 'GET' && root === 'card') return { method: 'GetExtendedAgentCard', params: () => ({}) }
  if (root !== 'tasks' || second === undefined || second === '') return undefined
  const taskId = ids[1]
  if (segments.length === 2) {
    if (verb === 'POST' && second.endsWith(':cancel')) return { method: 'CancelTask', params: () => ({ id: taskId }) }
    if ((verb === 'POST' || verb === 'GET') && second.endsWith(':subscribe')) return { method: 'SubscribeToTask', params: () => ({ id: taskId }) }
    if (verb === 'GET') return { method: 'GetTask', params: (_body, query) => getTaskParams(taskId, query) }
    return undefined
  }
  if (third !== 'pushNotificationConfigs') return undefined
  if (segments.length === 3 && verb === 'POST') return { method: 'CreateTaskPushNotificationConfig', params: (body) => ({ ...restPushConfigToV1(body), taskId }) }
  if (segments.length === 3 && verb === 'GET') return { method: 'ListTaskPushNotificationConfigs', params: () => ({ taskId }) }
  if (segments.length === 4 && fourth !== '' && verb === 'GET') return { method: 'GetTaskPushNotificationConfig', params: () => ({ taskId, id: ids[3] }) }
  if (segments.length === 4 && fourth !== '' && verb === 'DELETE') return { method: 'DeleteTaskPushNotificationConfig', params: () => ({ taskId, id: ids[3] }), status: 204 }
  return undefined
}

const sendParams: V03Route['params'] = (body, _query, violations) => restSendToV1(body, violations)

/** `historyLength` from the query, a number when it is one (else as it came, for the params check to answer). */
function getTaskParams (id: string, query: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const raw = query.historyLength
  if (raw === undefined) return { id }
  return { id, historyLength: typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : raw }
}

function errorReply (error: JsonRpcError, status: number, headers: Record<string, string>): HttpJsonReply {
  return { kind: 'json', status, headers, body: errorBody(error) }
}

/** The 0.3 REST error body: what the 0.3 SDK's RestTransport reads (`code`, `message`). */
function errorBody (error: JsonRpcError): Record<string, unknown> {
  return error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data }
}

function toReply (method: V1MethodOf03, result: A2AResult, status: number, log: ServiceLogger | undefined): HttpJsonReply {
  switch (result.kind) {
    case 'value':
      if (status === 204) return { kind: 'json', status, headers: result.headers }
      return { kind: 'json', status, headers: result.headers, body: restResultToV03(method, result.value) }
    case 'error':
      return errorReply(result.error, restStatusOf(result.error, result.status), result.headers)
    default:
      return { kind: 'stream', status: 200, headers: { ...result.headers, ...SSE_HEADERS }, frames: framesOf(result.events, log) }
  }
}

/** `data: <0.3 StreamResponse>` per event; a failure is an `event: error` frame with the 0.3 error body. */
async function * framesOf (events: AsyncIterable<StreamItem>, log: ServiceLogger | undefined): AsyncGenerator<string, void, undefined> {
  for await (const item of events) {
    let text: string
    try {
      text = item.kind === 'event' ? `data: ${JSON.stringify(restEventToV03(item.value))}\n\n` : errorFrame(item.error)
    } catch (error) {
      log?.error({ err: error }, 'A2A stream event cannot be serialized')
      yield errorFrame(internalError())
      return
    }
    yield text
  }
}

function errorFrame (error: JsonRpcError): string {
  return `event: error\ndata: ${JSON.stringify(errorBody(error))}\n\n`
}
