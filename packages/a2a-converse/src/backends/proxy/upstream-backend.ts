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
 * - Streams: SSE read event by event as the caller pulls (upstream-stream.ts), each event's JSON-RPC result yielded.
 * - What is sent, decided from the card before sending: upstream-request.ts; sent by upstream-call.ts.
 * - Failures: upstream-errors.ts; replies read by upstream-replies.ts. An upstream JSON-RPC error reaches the
 *   caller as `errorDetails` allows (by default its code and a generic message), the original logged at warn.
 */
import type { Dispatcher } from 'undici'
import type { A2ABackend, BackendContext, Caller, ServiceLogger } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { internalError, type JsonRpcError } from '../../protocol/errors.js'
import type { UpstreamCard } from './upstream-card-parse.js'
import { A2A_RPC_SERVICE } from '../../telemetry/attributes.js'
import { activeOr, failSpan, injectTraceHeaders, inSpan, SpanKind, startSpan, type Context } from '../../telemetry/tracing.js'
import { upstreamUnavailable, UpstreamError, type UpstreamErrorDetails } from './upstream-errors.js'
import { callWithDeadline, openUpstreamStream, type UpstreamTransport } from './upstream-call.js'
import { upstreamReplies } from './upstream-replies.js'
import { clientAttributes, factsOfCard, resultToV1, UNREAD_FACTS, upstreamBody, upstreamHeaders } from './upstream-request.js'
import { upstreamStreamResults } from './upstream-stream.js'

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

export function upstreamBackend (options: UpstreamBackendOptions): A2ABackend {
  const { agentId, dispatcher, timeoutMs, streamIdleTimeoutMs, maxResponseBytes } = options
  const configured = options.headers ?? {}
  const identity = options.identity
  const replies = upstreamReplies(agentId, options.errorDetails ?? 'code', maxResponseBytes)
  const transport: UpstreamTransport = { agentId, dispatcher, timeoutMs, replies }
  let factsOf: { card: UpstreamCard, facts: AgentFacts } | undefined

  function facts (): AgentFacts {
    const card = options.card()
    if (card === undefined) return UNREAD_FACTS
    if (factsOf?.card !== card) factsOf = { card, facts: factsOfCard(card) }
    return factsOf.facts
  }

  /** The card a request is sent by (its endpoint, its version), read once per request. */
  function cardNow (): UpstreamCard {
    const card = options.card()
    if (card === undefined) throw new UpstreamError(upstreamUnavailable(agentId, 'its agent card has not been read yet'), 'CARD_NOT_READ')
    return card
  }

  async function headersFor (context: BackendContext, accept: string, v03: boolean): Promise<Record<string, string>> {
    const token = identity === undefined ? undefined : { header: identity.header, token: await identity.tokenFor(context.caller) }
    return upstreamHeaders(configured, context, accept, v03, token)
  }

  function clientSpan (url: string, request: CheckedRequest, parent: Context | undefined): ReturnType<typeof startSpan> {
    return startSpan(`${A2A_RPC_SERVICE}/${request.method}`, SpanKind.CLIENT, clientAttributes(agentId, url, request), activeOr(parent))
  }

  /** The upstream call in its CLIENT span; the request carries the span's trace context (`traceparent`). */
  async function call (request: CheckedRequest, context: BackendContext): Promise<unknown> {
    const card = cardNow()
    const v03 = card.protocolVersion === '0.3'
    return await inSpan(`${A2A_RPC_SERVICE}/${request.method}`, SpanKind.CLIENT, clientAttributes(agentId, card.endpoint, request),
      async (_span, spanContext) => await callWithDeadline(transport, {
        url: card.endpoint,
        payload: upstreamBody(request, v03),
        headers: async () => injectTraceHeaders(await headersFor(context, 'application/json', v03), spanContext),
        toV1: (result) => resultToV1(request, result, false, v03)
      }, request, context), { parent: context.traceContext })
  }

  /** The upstream stream in its CLIENT span, ended with the stream. */
  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const card = cardNow()
    const v03 = card.protocolVersion === '0.3'
    const { span, context: spanContext } = clientSpan(card.endpoint, request, context.traceContext)
    try {
      const headers = injectTraceHeaders(await headersFor(context, 'text/event-stream', v03), spanContext)
      const response = await openUpstreamStream(transport, card.endpoint, headers, upstreamBody(request, v03), context)
      const toV1 = (result: unknown): unknown => resultToV1(request, result, true, v03)
      yield * upstreamStreamResults(response, request, context, { agentId, streamIdleTimeoutMs, maxResponseBytes, replies, toV1 })
    } catch (error) {
      failSpan(span, error)
      throw error
    } finally {
      span.end()
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
