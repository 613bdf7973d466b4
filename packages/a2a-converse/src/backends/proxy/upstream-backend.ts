/**
 * The upstream backend (proxy mode): every checked A2A request forwarded to another A2A agent's JSON-RPC endpoint
 * with undici (in 1.0, or in 0.3 through packages/a2a-converse/src/protocol/v0_3/ when the upstream's card is 0.3's), its `result`s handed
 * back to the service (which decorates or strips them and echoes the header, as for local agents). Framework-free.
 *
 * - Connections: the undici dispatcher given (an Agent per upstream: pooled keep-alive connections per origin,
 *   connect timeout).
 * - Headers: `A2A-Version` as the caller asked, the caller's `A2A-Extensions` minus the converse URI (the gateway
 *   serves it), the configured headers, and with `identity` the caller's assertion (auth/upstream-assertion.ts).
 *   Nothing else of the caller's request goes upstream.
 * - Time: deadlines, however slowly bytes arrive. A call has `timeoutMs` for the whole exchange (connection,
 *   headers, body: one timer per call); a stream `timeoutMs` for its response headers and `streamIdleTimeoutMs`
 *   between two A2A events (one timer per stream, re-armed per event; SSE comments and keep-alives do not count,
 *   and the time the caller takes to read an event does not either). The caller's abort (client gone, gateway
 *   closing) cancels the upstream request.
 * - Streams: SSE read event by event as the caller pulls (sse-events.ts), each event's JSON-RPC result yielded.
 * - Failures: upstream-errors.ts; replies read by upstream-replies.ts. An upstream JSON-RPC error reaches the
 *   caller as `errorDetails` allows (by default its code and a generic message), the original logged at warn.
 */
import { request as undiciRequest, type Dispatcher } from 'undici'
import type { A2ABackend, BackendContext, Caller, ServiceLogger } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { internalError, unsupportedOperation, type JsonRpcError } from '../../protocol/errors.js'
import { v03EventToV1, v03ResultToV1 } from '../../protocol/v0_3/request-to-v1.js'
import { v1CallToV03 } from '../../protocol/v0_3/result-to-v0_3.js'
import { sseEvents, SseEventTooLargeError } from './sse-events.js'
import type { UpstreamCard } from './upstream-card.js'
import { A2A_RPC_SERVICE, ATTR, serverAttributes, type Attributes } from '../../telemetry/attributes.js'
import { activeOr, failSpan, injectTraceHeaders, inSpan, SpanKind, startSpan, type Context } from '../../telemetry/tracing.js'
import {
  classifyNetworkError, upstreamInvalidResponse, upstreamTimeout, upstreamUnavailable, UpstreamError,
  type UpstreamErrorDetails
} from './upstream-errors.js'
import { isJsonRpcError, upstreamReplies } from './upstream-replies.js'

/** The abort reason of a call past its deadline (told apart from the caller's own abort). */
const DEADLINE = Symbol('upstream call deadline')

export interface UpstreamBackendOptions {
  agentId: string
  /** The upstream's current card (endpoint and capabilities); undefined until read. */
  card: () => UpstreamCard | undefined
  dispatcher: Dispatcher
  /** Added to every upstream request (an API key, say). */
  headers?: Record<string, string>
  /** A call's whole exchange, and a stream's response headers, in ms. */
  timeoutMs: number
  /** Longest wait for the next A2A event of a stream, in ms. */
  streamIdleTimeoutMs: number
  /** Largest reply body (a call) or SSE event (a stream), in bytes. */
  maxResponseBytes: number
  /** How much of an upstream JSON-RPC error reaches the caller. Default `code`. */
  errorDetails?: UpstreamErrorDetails
  /**
   * The caller's identity carried upstream: `tokenFor(caller)`'s token in `header` (lower case; `authorization`:
   * as `Bearer <token>`), on every request made for a caller. Default: none (the upstream sees the gateway).
   */
  identity?: UpstreamIdentity
}

export interface UpstreamIdentity {
  header: string
  tokenFor: (caller: Caller | undefined) => Promise<string>
}

/** Capabilities before the card was read: requests go to the backend, which answers "unavailable". */
const UNREAD_FACTS: AgentFacts = Object.freeze({
  capabilities: Object.freeze({ streaming: true, pushNotifications: false, extendedAgentCard: false }),
  requiredExtensions: Object.freeze([]) as readonly string[]
})

export function upstreamBackend (options: UpstreamBackendOptions): A2ABackend {
  const { agentId, dispatcher, timeoutMs, streamIdleTimeoutMs, maxResponseBytes } = options
  const configured = options.headers ?? {}
  const errorDetails = options.errorDetails ?? 'code'
  const identity = options.identity
  const { replyError, resultOf, readText } = upstreamReplies(agentId, errorDetails, maxResponseBytes)
  let factsOf: { card: UpstreamCard, facts: AgentFacts } | undefined

  function facts (): AgentFacts {
    const card = options.card()
    if (card === undefined) return UNREAD_FACTS
    if (factsOf?.card !== card) {
      factsOf = {
        card,
        facts: {
          capabilities: { streaming: card.capabilities.streaming, pushNotifications: false, extendedAgentCard: false },
          requiredExtensions: card.requiredExtensions
        }
      }
    }
    return factsOf.facts
  }

  function endpoint (): string {
    const card = options.card()
    if (card === undefined) throw new UpstreamError(upstreamUnavailable(agentId, 'its agent card has not been read yet'), 'CARD_NOT_READ')
    return card.endpoint
  }

  /** Whether the upstream is spoken to in A2A 0.3 (its card is 0.3's): requests and results are translated. */
  function isV03 (): boolean {
    return options.card()?.protocolVersion === '0.3'
  }

  async function headersFor (context: BackendContext, accept: string): Promise<Record<string, string>> {
    const v03 = isV03()
    // 0.3 has no A2A-Version (its absence means 0.3) and names extensions in X-A2A-Extensions.
    const headers: Record<string, string> = { ...configured, 'content-type': 'application/json', accept }
    if (!v03) headers['a2a-version'] = context.version
    const extensions = context.requestedExtensions.filter((uri) => uri !== CONVERSE_EXTENSION_URI)
    if (extensions.length > 0) headers[v03 ? 'x-a2a-extensions' : 'a2a-extensions'] = extensions.join(', ')
    if (identity !== undefined) {
      const token = await identity.tokenFor(context.caller)
      headers[identity.header] = identity.header === 'authorization' ? `Bearer ${token}` : token
    }
    return headers
  }

  function body (request: CheckedRequest): string {
    if (!isV03()) return JSON.stringify({ jsonrpc: '2.0', id: request.id, method: request.method, params: request.params })
    const translated = v1CallToV03(request.method, request.params)
    if (translated === undefined) throw new A2AReplyError(unsupportedOperation(`${request.method} has no A2A 0.3 counterpart; the upstream agent speaks A2A 0.3`))
    return JSON.stringify({ jsonrpc: '2.0', id: request.id, ...translated })
  }

  /** A result (or stream event) as the service wants it: a 0.3 upstream's translated to 1.0. */
  function toV1 (request: CheckedRequest, result: unknown, event: boolean): unknown {
    if (!isV03()) return result
    return event ? v03EventToV1(result) : v03ResultToV1(request.method, result)
  }

  /** The attributes of an upstream call's CLIENT span (OpenTelemetry RPC conventions); the URL's host and port, never its path. */
  function clientAttributes (url: string, request: CheckedRequest): Attributes {
    return {
      [ATTR.rpcSystem]: 'jsonrpc',
      [ATTR.rpcService]: A2A_RPC_SERVICE,
      [ATTR.rpcMethod]: request.method,
      [ATTR.rpcJsonRpcVersion]: '2.0',
      [ATTR.agentId]: agentId,
      ...serverAttributes(url)
    }
  }

  function clientSpan (url: string, request: CheckedRequest, parent: Context | undefined): ReturnType<typeof startSpan> {
    return startSpan(`${A2A_RPC_SERVICE}/${request.method}`, SpanKind.CLIENT, clientAttributes(url, request), activeOr(parent))
  }

  /** The upstream call in its CLIENT span; the request carries the span's trace context (`traceparent`). */
  async function call (request: CheckedRequest, context: BackendContext): Promise<unknown> {
    const url = endpoint()
    return await inSpan(`${A2A_RPC_SERVICE}/${request.method}`, SpanKind.CLIENT, clientAttributes(url, request),
      async (_span, spanContext) => await callUpstream(url, request, context, spanContext), { parent: context.traceContext })
  }

  async function callUpstream (url: string, request: CheckedRequest, context: BackendContext, spanContext: Context): Promise<unknown> {
    const payload = body(request)
    // The call's deadline: one controller and one timer per call (undici's own timers restart on every chunk, so a
    // dribbling upstream would outlive them); the caller's abort is passed on.
    const controller = new AbortController()
    const passAbort = (): void => { controller.abort(context.signal.reason) }
    if (context.signal.aborted) passAbort()
    else context.signal.addEventListener('abort', passAbort, { once: true })
    const timer = setTimeout(() => { controller.abort(DEADLINE) }, timeoutMs)
    let result: unknown
    try {
      const response = await undiciRequest(url, {
        dispatcher,
        method: 'POST',
        headers: injectTraceHeaders(await headersFor(context, 'application/json'), spanContext),
        body: payload,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs
      })
      result = toV1(request, resultOf(await readText(response.body), response.statusCode, request, context), false)
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

  /** The upstream stream in its CLIENT span, ended with the stream. */
  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const url = endpoint()
    const { span, context: spanContext } = clientSpan(url, request, context.traceContext)
    try {
      yield * streamUpstream(url, injectTraceHeaders(await headersFor(context, 'text/event-stream'), spanContext), request, context)
    } catch (error) {
      failSpan(span, error)
      throw error
    } finally {
      span.end()
    }
  }

  async function * streamUpstream (
    url: string, headers: Record<string, string>, request: CheckedRequest, context: BackendContext
  ): AsyncGenerator<unknown, void, undefined> {
    const payload = body(request)
    let response: Dispatcher.ResponseData
    try {
      response = await undiciRequest(url, {
        dispatcher,
        method: 'POST',
        headers,
        body: payload,
        // Aborting destroys the body too: a pending read ends at once (the service stops waiting on abort).
        signal: context.signal,
        headersTimeout: timeoutMs,
        // Not undici's body timer (any byte restarts it, a keep-alive comment included): ours below.
        bodyTimeout: 0
      })
    } catch (error) {
      throw classifyNetworkError(agentId, error, 'request')
    }
    const type = String(response.headers['content-type'] ?? '')
    if (!/^text\/event-stream\b/i.test(type)) {
      // An error before the first event comes as a plain JSON-RPC response (what @a2a-js/sdk servers do).
      let text: string
      try {
        text = await readText(response.body)
      } catch (error) {
        throw classifyNetworkError(agentId, error, 'request')
      }
      resultOf(text, response.statusCode, request, context)
      throw new UpstreamError(upstreamInvalidResponse(agentId, 'a JSON result where a stream was expected'), 'NOT_SSE')
    }
    // The wait for the next A2A event: armed while the upstream is read, not while the caller reads an event.
    let reading = true
    let idle = false
    const timer = setTimeout(() => {
      if (!reading) return
      idle = true
      response.body.destroy(new Error('no stream event in time'))
    }, streamIdleTimeoutMs)
    try {
      for await (const data of sseEvents(response.body, maxResponseBytes)) {
        let event: { jsonrpc?: unknown, result?: unknown, error?: unknown } | null
        try {
          event = JSON.parse(data)
        } catch {
          throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event that is not JSON'), 'NOT_JSON')
        }
        if (event === null || typeof event !== 'object' || event.jsonrpc !== '2.0') {
          throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event that is not JSON-RPC'), 'NOT_JSON_RPC')
        }
        if (isJsonRpcError(event.error)) throw replyError(event.error, request, context)
        if (event.result === undefined) {
          throw new UpstreamError(upstreamInvalidResponse(agentId, 'a stream event without a result'), 'NOT_JSON_RPC')
        }
        reading = false
        yield toV1(request, event.result, true)
        reading = true
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

  return {
    get facts () { return facts() },
    call,
    stream,
    toError (error: unknown, request: CheckedRequest, log?: ServiceLogger): JsonRpcError {
      if (error instanceof A2AReplyError) return error.error
      if (error instanceof UpstreamError) {
        log?.warn({ agentId, method: request.method, code: error.error.code, cause: error.causeCode }, 'upstream agent failed')
        return error.error
      }
      /* c8 ignore next 2 -- every failure above is classified; this guards against the unforeseen */
      log?.error({ agentId, method: request.method, err: error }, 'upstream backend failed')
      return internalError()
    }
  }
}
