/**
 * One POST of a notification to a webhook, through undici with the URL policy's lookup (the address connected to
 * is one the policy checked). No redirect is followed (a 3xx is an answer like any other: not retried), at most
 * RESPONSE_BYTES of the answer are read, and only the headers built here are sent: the config's own `token` and
 * `authentication`, never the gateway's or the caller's credentials.
 *
 * What a URL yields (the policy's verdict on it as written, its origin and path, its span attributes) is the policy's
 * (PushUrlPolicy.verdict), worked out once per URL and kept there, not once per POST. Host names are still resolved
 * and checked at each connection (the policy's lookup).
 */
import { ATTR } from '../telemetry/attributes.js'
import { inSpan, injectTraceHeaders, SpanKind, type Context, type Span } from '../telemetry/tracing.js'
import { setMaxListeners } from 'node:events'
import { Agent, type Dispatcher } from 'undici'
import type { PushUrlPolicy } from './url-guard.js'
import { ERROR_CODES, isConverseError } from '../core/errors.js'

/** The most of a webhook's answer read (then the connection is dropped): nothing in it is used. */
export const RESPONSE_BYTES = 4096

/** The delivery id header: the same on every attempt of one delivery, so a receiver can drop a duplicate. */
export const DELIVERY_ID_HEADER = 'a2a-notification-id'
/** The config's `token` (the header the A2A SDKs use; A2A 1.0 does not name one). */
export const TOKEN_HEADER = 'x-a2a-notification-token'

export interface WebhookTarget {
  url: string
  token?: string
  authentication?: { scheme: string, credentials?: string }
}

export type PostOutcome =
  | { kind: 'delivered', status: number }
  /** Worth another attempt: a connection error, a timeout, 408, 429, 5xx; `retryAfterMs` from Retry-After. */
  | { kind: 'retry', reason: string, retryAfterMs?: number }
  /** Never worth another attempt: a refused URL or address, another 4xx, a 3xx. */
  | { kind: 'refused', reason: string }

export interface WebhookPoster {
  /** `traceContext`: the turn whose update this is (the POST's span is its child), else the active context. */
  post (target: WebhookTarget, body: string, deliveryId: string, traceContext?: Context): Promise<PostOutcome>
  close (): Promise<void>
}

export function webhookPoster (policy: PushUrlPolicy, options: { timeoutMs: number }): WebhookPoster {
  const dispatcher = new Agent({
    connect: { lookup: policy.lookup as never, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4000
  })
  const deadline = sharedDeadlines(options.timeoutMs)
  return {
    async post (target, body, deliveryId, traceContext) {
      const parsed = policy.verdict(target.url)
      if (parsed.refusal !== undefined) return { kind: 'refused', reason: `url ${parsed.refusal}` }
      const headers: Record<string, string> = {
        'content-type': 'application/a2a+json',
        [DELIVERY_ID_HEADER]: deliveryId,
        'user-agent': 'a2a-converse-push'
      }
      if (target.token !== undefined && target.token !== '') headers[TOKEN_HEADER] = target.token
      const auth = target.authentication
      if (auth !== undefined && auth.scheme !== '') {
        headers.authorization = auth.credentials === undefined || auth.credentials === '' ? auth.scheme : `${auth.scheme} ${auth.credentials}`
      }
      return await inSpan('push.webhook POST', SpanKind.CLIENT, parsed.attributes,
        async (span, spanContext) => await attempt(parsed, injectTraceHeaders(headers, spanContext), body, span, deadline()), { parent: traceContext })
    },
    async close () {
      await dispatcher.close()
    }
  }

  /** The POST and its outcome; the span gets the answer's status. `signal`: its deadline (sharedDeadlines). */
  async function attempt (target: { origin: string, path: string }, headers: Record<string, string>, body: string, span: Span, signal: AbortSignal): Promise<PostOutcome> {
    let response: Dispatcher.ResponseData
    try {
      response = await dispatcher.request({ origin: target.origin, path: target.path, method: 'POST', headers, body, signal })
    } catch (error) {
      if (isConverseError(error, ERROR_CODES.PUSH_FORBIDDEN_ADDRESS)) return { kind: 'refused', reason: error.message }
      const code = (error as { code?: unknown }).code
      return { kind: 'retry', reason: typeof code === 'string' ? code : (error as Error).name }
    }
    const status = response.statusCode
    span.setAttribute(ATTR.httpStatusCode, status)
    const retryAfter = response.headers['retry-after']
    // At most RESPONSE_BYTES read, then the connection dropped; a broken answer changes nothing (dump swallows its
    // error: the body is not used).
    await response.body.dump({ limit: RESPONSE_BYTES })
    if (status >= 200 && status < 300) return { kind: 'delivered', status }
    if (status === 408 || status === 429 || status >= 500) {
      return { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined) }
    }
    return { kind: 'refused', reason: `HTTP ${status}` }
  }
}

/**
 * The deadlines of attempts: those that start within one slot (a tenth of `timeoutMs`, at most 100 ms) share an
 * AbortController, aborted `timeoutMs` after the slot's end, so each attempt ends between `timeoutMs` and `timeoutMs`
 * plus a slot after it starts, however slowly its answer arrives. One controller and one timer per slot, not per POST:
 * a controller and a timer cleared when the attempt ends were ≈ a tenth of the push path's own CPU at a few hundred
 * turns per second, three POSTs each (docs/push.md, "What a notification costs"); AbortSignal.timeout before them
 * kept a signal and a timer alive for the whole `timeoutMs` after each POST, which the garbage collector paid for.
 */
export function sharedDeadlines (timeoutMs: number): () => AbortSignal {
  const slotMs = Math.min(100, Math.ceil(timeoutMs / 10))
  let slot: { signal: AbortSignal, ends: number } | undefined
  return () => {
    const now = performance.now()
    if (slot === undefined || now >= slot.ends) {
      const controller = new AbortController()
      // Every attempt of the slot listens to its signal until it ends (undici then removes its listener).
      setMaxListeners(0, controller.signal)
      // Not kept alive for it: a process with nothing else to do need not wait for a deadline nobody awaits.
      setTimeout(abortOnTimeout, timeoutMs + slotMs, controller).unref()
      slot = { signal: controller.signal, ends: now + slotMs }
    }
    return slot.signal
  }
}

/** Ends the attempts that outlived their time, with the reason AbortSignal.timeout gives (the outcome says TimeoutError). */
function abortOnTimeout (controller: AbortController): void {
  controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))
}

/** Retry-After (RFC 9110 §10.2.3): seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs (value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
