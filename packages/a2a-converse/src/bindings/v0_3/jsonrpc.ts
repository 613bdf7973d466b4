/**
 * The A2A 0.3 JSON-RPC binding: a 0.3 request (`message/send`, …; no `A2A-Version`, or `0.3`) → the A2A 1.0 call
 * (request-to-v1.ts) → the service → the 0.3 result (result-to-v0_3.ts), on the same endpoint and wire as the 1.0
 * JSON-RPC binding (its body checks, reply and SSE framing). The call carries `A2A-Version: 1.0`, and the 0.3
 * extension header `X-A2A-Extensions` joins `A2A-Extensions` for negotiation; the echo goes back in the header(s)
 * the request used. Everything A2A (authentication, checks, the backend, decoration) is the service's, once.
 */
import type { A2AResult, A2AService, ServiceParameters, StreamItem } from '../../a2a/service.js'
import { EXTENSIONS_HEADER } from '../../core/uri.js'
import { mapBody, toReply, unknownAgentBody, type A2AReply, type A2AServiceRequest } from '../jsonrpc/binding.js'
import { requestToV1 } from '../../protocol/v0_3/request-to-v1.js'
import { resultToV03, streamEventToV03 } from '../../protocol/v0_3/result-to-v0_3.js'
import { V03_EXTENSIONS_HEADER, type V1MethodOf03 } from '../../protocol/v0_3/types.js'

const V1_EXTENSIONS = EXTENSIONS_HEADER.toLowerCase()
const V03_EXTENSIONS = V03_EXTENSIONS_HEADER.toLowerCase()

/** Answers one 0.3 JSON-RPC request through the service. Never rejects. */
export async function answerJsonRpcV03 (service: A2AService, request: A2AServiceRequest): Promise<A2AReply> {
  if (!service.serves(request.agentId)) return { kind: 'json', status: 404, headers: {}, body: unknownAgentBody(request.agentId) }
  const body = mapBody(request.body)
  let method = ''
  let params: unknown
  let rejected = body.rejected
  if (rejected === undefined) {
    const translated = requestToV1(body.method, body.params)
    if (translated.ok) ({ method, params } = translated)
    else rejected = { status: 200, error: translated.error }
  }
  const result = await service.call({
    binding: 'jsonrpc-0.3',
    agentId: request.agentId,
    method,
    params,
    rejected,
    id: body.id,
    headers: v1Headers(request.headers),
    query: request.query,
    signal: request.signal,
    caller: request.caller,
    log: request.log,
    doorRequest: request.doorRequest,
    clientAddress: request.clientAddress
  })
  const reply = toReply(body.id, toV03(method as V1MethodOf03, result), request.log)
  reply.headers = echoHeaders(reply.headers, request.headers)
  return reply
}

/** The request's service parameters as a 1.0 call's: `A2A-Version: 1.0`, both extension headers' URIs in one. */
export function v1Headers (headers: ServiceParameters): ServiceParameters {
  const extensions = [...listOf(headers[V1_EXTENSIONS]), ...listOf(headers[V03_EXTENSIONS])]
  return { ...headers, 'a2a-version': '1.0', [V1_EXTENSIONS]: extensions.length === 0 ? undefined : extensions }
}

/** The activated list echoed in the header(s) the request used: `X-A2A-Extensions` for 0.3's, `A2A-Extensions` for 1.0's. */
export function echoHeaders (replyHeaders: Record<string, string>, requestHeaders: ServiceParameters): Record<string, string> {
  const echo = replyHeaders[EXTENSIONS_HEADER]
  if (echo === undefined || requestHeaders[V03_EXTENSIONS] === undefined) return replyHeaders
  const { [EXTENSIONS_HEADER]: _v1, ...rest } = replyHeaders
  return { ...rest, [V03_EXTENSIONS_HEADER]: echo, ...(requestHeaders[V1_EXTENSIONS] === undefined ? {} : { [EXTENSIONS_HEADER]: echo }) }
}

function toV03 (method: V1MethodOf03, result: A2AResult): A2AResult {
  switch (result.kind) {
    case 'value':
      return { ...result, value: resultToV03(method, result.value) }
    case 'stream':
      return { ...result, events: eventsToV03(result.events) }
    default:
      return result
  }
}

async function * eventsToV03 (events: AsyncIterable<StreamItem>): AsyncGenerator<StreamItem, void, undefined> {
  for await (const item of events) yield item.kind === 'event' ? { kind: 'event', value: streamEventToV03(item.value) } : item
}

function listOf (value: string | string[] | undefined): string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value
}
