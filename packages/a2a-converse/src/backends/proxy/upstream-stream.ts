/**
 * Reading an upstream's answer to a streaming request (upstream-backend.ts opens it): SSE read event by event as
 * the caller pulls (sse-events.ts), each event's JSON-RPC result yielded, a JSON-RPC error before the first event
 * answered as the upstream's error, and `streamIdleTimeoutMs` between two A2A events (one timer per stream, re-armed
 * per event; SSE comments and keep-alives do not count, and the time the caller takes to read an event does not
 * either).
 */
import type { Dispatcher } from 'undici'
import type { BackendContext } from '../../protocol/backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { A2AReplyError } from '../local/local-backend.js'
import { sseEvents, SseEventTooLargeError } from './sse-events.js'
import { classifyNetworkError, upstreamInvalidResponse, upstreamTimeout, UpstreamError } from './upstream-errors.js'
import { isJsonRpcError, type UpstreamReplies } from './upstream-replies.js'

export interface UpstreamStreamReading {
  agentId: string
  /** Longest wait for the next A2A event, in ms. */
  streamIdleTimeoutMs: number
  /** Largest SSE event, in bytes. */
  maxResponseBytes: number
  replies: UpstreamReplies
  /** An event's result as the service wants it (a 0.3 upstream's translated). */
  toV1: (result: unknown) => unknown
}

/** The results of an upstream's streaming response; every failure an UpstreamError or the upstream's A2AReplyError. */
export async function * upstreamStreamResults (
  response: Dispatcher.ResponseData, request: CheckedRequest, context: BackendContext, reading: UpstreamStreamReading
): AsyncGenerator<unknown, void, undefined> {
  const { agentId, streamIdleTimeoutMs, maxResponseBytes, replies } = reading
  if (!/^text\/event-stream\b/i.test(String(response.headers['content-type'] ?? ''))) throw await notAStream(response, request, context, reading)
  // The wait for the next A2A event: armed while the upstream is read, not while the caller reads an event.
  let pulling = true
  let idle = false
  const timer = setTimeout(() => {
    if (!pulling) return
    idle = true
    response.body.destroy(new Error('no stream event in time'))
  }, streamIdleTimeoutMs)
  try {
    for await (const data of sseEvents(response.body, maxResponseBytes)) {
      const result = streamEventResult(agentId, data)
      if (isJsonRpcError(result.error)) throw replies.replyError(result.error, request, context)
      pulling = false
      yield reading.toV1(result.result)
      pulling = true
      timer.refresh()
    }
  } catch (error) {
    if (error instanceof A2AReplyError) throw error
    if (idle) throw new UpstreamError(upstreamTimeout(agentId, 'no stream event in time'), 'STREAM_IDLE')
    if (error instanceof SseEventTooLargeError) {
      throw new UpstreamError(upstreamInvalidResponse(agentId, `a stream event larger than ${maxResponseBytes} bytes`), 'TOO_LARGE')
    }
    throw classifyNetworkError(agentId, error, 'stream')
  } finally {
    clearTimeout(timer)
    // Ended early (the caller left, an error): the connection is not reused for the rest of this stream.
    if (!response.body.readableEnded) response.body.destroy()
  }
}

/**
 * The failure of a response that is not SSE: an error before the first event comes as a plain JSON-RPC response
 * (what @a2a-js/sdk servers do), thrown as the upstream's error; anything else is NOT_SSE.
 */
async function notAStream (
  response: Dispatcher.ResponseData, request: CheckedRequest, context: BackendContext, reading: UpstreamStreamReading
): Promise<UpstreamError> {
  let text: string
  try {
    text = await reading.replies.readText(response.body)
  } catch (error) {
    throw classifyNetworkError(reading.agentId, error, 'request')
  }
  reading.replies.resultOf(text, response.statusCode, request, context)
  return new UpstreamError(upstreamInvalidResponse(reading.agentId, 'a JSON result where a stream was expected'), 'NOT_SSE')
}

/** One SSE event's JSON-RPC response: its error, or its result; anything else an UpstreamError. */
export function streamEventResult (agentId: string, data: string): { result: unknown, error?: unknown } {
  let event: { jsonrpc?: unknown, result?: unknown, error?: unknown } | null
  try {
    event = JSON.parse(data)
  } catch {
    throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event that is not JSON'), 'NOT_JSON')
  }
  if (event === null || typeof event !== 'object' || event.jsonrpc !== '2.0') {
    throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event that is not JSON-RPC'), 'NOT_JSON_RPC')
  }
  if (isJsonRpcError(event.error)) return { result: undefined, error: event.error }
  if (event.result === undefined) {
    throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event without a result'), 'NOT_JSON_RPC')
  }
  return { result: event.result }
}
