/**
 * Sending to an upstream's JSON-RPC endpoint (upstream-backend.ts decides what, upstream-request.ts how it is
 * shaped): a call under one deadline for its whole exchange, and a stream's request opened (its events are
 * upstream-stream.ts's). Every failure comes out classified (upstream-errors.ts) or as the upstream's A2AReplyError.
 */
import { request as undiciRequest, type Dispatcher } from 'undici'
import type { BackendContext } from '../../protocol/backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { A2AReplyError } from '../local/local-backend.js'
import { classifyNetworkError, upstreamTimeout, UpstreamError } from './upstream-errors.js'
import type { UpstreamReplies } from './upstream-replies.js'

/** The abort reason of a call past its deadline (told apart from the caller's own abort). */
const DEADLINE = Symbol('upstream call deadline')

export interface UpstreamTransport {
  agentId: string
  dispatcher: Dispatcher
  /** A call's whole exchange, and a stream's response headers, in ms. */
  timeoutMs: number
  replies: UpstreamReplies
}

export interface UpstreamCallSend {
  url: string
  payload: string
  /** The request's headers, made under the call's deadline (a token exchange counts against it). */
  headers: () => Promise<Record<string, string>>
  /** The reply's result as the service wants it. */
  toV1: (result: unknown) => unknown
}

/** One call upstream: its result, within `timeoutMs` for the connection, the headers and the body together. */
export async function callWithDeadline (
  transport: UpstreamTransport, send: UpstreamCallSend, request: CheckedRequest, context: BackendContext
): Promise<unknown> {
  const { agentId, timeoutMs, replies } = transport
  // One controller and one timer per call (undici's own timers restart on every chunk, so a dribbling upstream
  // would outlive them); the caller's abort is passed on.
  const controller = new AbortController()
  const passAbort = (): void => { controller.abort(context.signal.reason) }
  if (context.signal.aborted) passAbort()
  else context.signal.addEventListener('abort', passAbort, { once: true })
  const timer = setTimeout(() => { controller.abort(DEADLINE) }, timeoutMs)
  let result: unknown
  try {
    const response = await undiciRequest(send.url, {
      dispatcher: transport.dispatcher,
      method: 'POST',
      headers: await send.headers(),
      body: send.payload,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs
    })
    result = send.toV1(replies.resultOf(await replies.readText(response.body), response.statusCode, request, context))
  } catch (error) {
    if (error instanceof A2AReplyError) throw error
    if (controller.signal.reason === DEADLINE) throw new UpstreamError(upstreamTimeout(agentId, 'no reply in time'), 'DEADLINE')
    throw classifyNetworkError(agentId, error, 'request')
  } finally {
    clearTimeout(timer)
    context.signal.removeEventListener('abort', passAbort)
  }
  return result
}

/** A streaming request sent: its response (headers within `timeoutMs`), or the network failure classified. */
export async function openUpstreamStream (
  transport: UpstreamTransport, url: string, headers: Record<string, string>, payload: string, context: BackendContext
): Promise<Dispatcher.ResponseData> {
  try {
    return await undiciRequest(url, {
      dispatcher: transport.dispatcher,
      method: 'POST',
      headers,
      body: payload,
      // Aborting destroys the body too: a pending read ends at once (the service stops waiting on abort).
      signal: context.signal,
      headersTimeout: transport.timeoutMs,
      // Not undici's body timer (any byte restarts it, a keep-alive comment included): upstream-stream.ts's.
      bodyTimeout: 0
    })
  } catch (error) {
    throw classifyNetworkError(transport.agentId, error, 'request')
  }
}
