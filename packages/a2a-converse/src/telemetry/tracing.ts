/**
 * Traces through @opentelemetry/api only: whoever registers an SDK (the gateway app from OTEL_* variables, or a
 * plugin user's own) gets the spans; with none, every call here meets the API's no-op tracer and propagator.
 *
 * W3C trace context comes in from a request's `traceparent` / `tracestate` headers (the propagator the SDK
 * registers reads them) and goes out on every request the gateway makes (`injectTraceHeaders`).
 */
import {
  context, INVALID_SPAN_CONTEXT, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags,
  type Context, type Span, type TextMapGetter, type Tracer, type TracerProvider
} from '@opentelemetry/api'
import type { Attributes } from './attributes.js'

export { SpanKind, SpanStatusCode, context, trace, type Context, type Span }

/** The instrumentation scope of every span of the package. */
export const TRACER_NAME = 'a2a-converse'

/** Request headers as Node gives them (lower-case names; a repeated header as an array). */
export type HeaderRecord = Readonly<Record<string, string | string[] | undefined>>

/** Reads Node's request headers for a propagator (W3C trace context reads named ones; others may list them). */
export const headerGetter: TextMapGetter<HeaderRecord> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()]
}

/** The context a request's trace headers name (the root context when they name none or no propagator is set). */
export function extractTraceContext (headers: HeaderRecord): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter)
}

/** Adds the active trace's `traceparent` / `tracestate` to outgoing headers (nothing when no span is active). */
export function injectTraceHeaders (headers: Record<string, string>, from: Context = context.active()): Record<string, string> {
  propagation.inject(from, headers)
  return headers
}

/** W3C trace context headers, as a store keeps them. */
export interface TraceHeaders {
  traceparent?: string
  tracestate?: string
}

/** version-traceId-parentId-flags, lower-case hex; an all-zero trace or parent id is invalid (W3C Trace Context §3.2). */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
/** The W3C limit a receiver must propagate at least, and the most a tracestate kept here may be (§3.3.1.5). */
export const TRACESTATE_LIMIT = 512

/**
 * Well-formed W3C trace headers out of untrusted values, or none: a malformed `traceparent` is dropped (as a W3C
 * receiver ignores it), a `tracestate` goes only with a `traceparent` and within TRACESTATE_LIMIT. What a store
 * keeps or an MCP `_meta` hands on passes here, so no client-controlled value is kept without a bound.
 */
export function w3cTraceHeaders (traceparent: unknown, tracestate: unknown): TraceHeaders {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return {}
  if (typeof tracestate !== 'string' || tracestate.length > TRACESTATE_LIMIT || tracestate.trim() === '') return { traceparent }
  return { traceparent, tracestate }
}

/**
 * The W3C headers that carry `from` (none for no context, or with no propagator registered), as a store keeps them:
 * the registered propagator writes them (a plugin user's own may write anything under those names), so they pass
 * `w3cTraceHeaders`.
 */
export function traceHeadersFor (from: Context | undefined): TraceHeaders {
  if (from === undefined) return {}
  const headers = injectTraceHeaders({}, from)
  return w3cTraceHeaders(headers.traceparent, headers.tracestate)
}

/** Only the trace context headers of a request (for a door that builds the service's headers itself). */
export function traceHeadersOf (headers: HeaderRecord): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const name of ['traceparent', 'tracestate']) {
    const value = headers[name]
    if (typeof value === 'string') picked[name] = value
  }
  return picked
}

/**
 * The ServerCallContext state entry through which a task store, and the push notifications a save queues, find the
 * span they belong under without an active context: a function returning the backend's trace context at that moment
 * (packages/a2a-converse/src/backends/local/local-backend.ts puts it there; the service keeps it current: the backend span's while the
 * backend works, the call's span later in a stream).
 */
export const TRACE_CONTEXT_STATE = 'a2a-converse.traceContext'

/** A call context's state naming `trace` (TRACE_CONTEXT_STATE), for work outside a request's own call context. */
export function traceContextState (trace: Context | undefined): Map<string, unknown> {
  return new Map(trace === undefined ? [] : [[TRACE_CONTEXT_STATE, () => trace]])
}

/** The trace context a call context's state holds (TRACE_CONTEXT_STATE), if any. */
export function traceContextIn (state: ReadonlyMap<string, unknown> | undefined): Context | undefined {
  const current = state?.get(TRACE_CONTEXT_STATE)
  return typeof current === 'function' ? (current as () => Context | undefined)() : undefined
}

/** What `work` gets for a span when there is none (a child-only span with nothing around it): records nothing. */
const INVALID_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT)

let cached: { provider: TracerProvider, tracer: Tracer } | undefined

/**
 * The package's tracer from the global provider: the API's proxy, which hands spans to an SDK registered later; asked
 * again when the global provider is replaced (an SDK unregistered with `trace.disable()`).
 */
function currentTracer (): Tracer {
  const provider = trace.getTracerProvider()
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(TRACER_NAME) }
  return cached.tracer
}

/**
 * A span started under `parent` (default: the active context), with the context that holds it; `startTime` (ms since
 * the epoch) for a span started after its work began (default: now).
 */
export function startSpan (
  name: string, kind: SpanKind, attributes: Attributes, parent: Context = context.active(), startTime?: number
): { span: Span, context: Context } {
  const span = currentTracer().startSpan(name, { kind, attributes, startTime }, parent)
  return { span, context: trace.setSpan(parent, span) }
}

/**
 * Runs `work` in a span of its own, a child of the active span, else of `options.parent` (the call's context, which
 * is not made active when its span is not recorded: `runActive`), ended when `work` settles; a
 * rejection marks the span ERROR with the error's name (never its message: it may quote data) and is rethrown.
 * `work` gets the span and the context holding it: a request `work` makes carries that context
 * (`injectTraceHeaders(headers, spanContext)`).
 *
 * Only a recorded span becomes the active context (`runActive`). Under a parent sampled out (its trace flags), no
 * child is started — it would not be recorded either (the parent-based samplers) — and `work` gets the parent. With
 * `childOnly` and no span in `parent` at all, neither: a child span with no request around it is not started.
 */
export async function inSpan<T> (
  name: string, kind: SpanKind, attributes: Attributes, work: (span: Span, spanContext: Context) => Promise<T>,
  options: { parent?: Context, childOnly?: boolean } = {}
): Promise<T> {
  const parent = activeOr(options.parent)
  const parentSpan = trace.getSpan(parent)
  if (parentSpan === undefined ? options.childOnly === true : !sampled(parentSpan)) return await work(parentSpan ?? INVALID_SPAN, parent)
  const { span, context: spanContext } = startSpan(name, kind, attributes, parent)
  let result: T
  try {
    result = await runActive(span, spanContext, work, span, spanContext)
  } catch (error) {
    failSpan(span, error)
    throw error
  } finally {
    span.end()
  }
  return result
}

/**
 * Whether children of `span` are sampled (under the parent-based samplers): its trace flags, not `isRecording()`, which
 * is false for a remote parent (an outbox row's `traceparent`) and for a local span already ended (a notification
 * delivered after its turn), whose children are still part of a sampled trace.
 */
function sampled (span: Span): boolean {
  return (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0
}

/**
 * The active context when it holds a span, else `fallback` (a call's context, not made active when its span is not
 * recorded: `runActive`), else the active one.
 */
export function activeOr (fallback: Context | undefined): Context {
  const active = context.active()
  return fallback === undefined || trace.getSpan(active) !== undefined ? active : fallback
}

/**
 * `work(...args)` with `spanContext` as the active context when `span` is recorded; else `work` as it is. Making a
 * context active turns on Node's AsyncLocalStorage (the SDK's context manager), which on Node 20 and 22 (async_hooks)
 * taxes every promise of the process from then on — about a fifth of a turn's CPU (docs/observability.md). A span that
 * is not recorded needs no active context: its children would not be recorded, and what it must carry out (its
 * `traceparent`) travels explicitly.
 */
export function runActive<A extends unknown[], R> (span: Span, spanContext: Context, work: (...args: A) => R, ...args: A): R {
  return span.isRecording() ? context.with(spanContext, work, undefined, ...args) : work(...args)
}

/** Marks a span failed by `error`: status ERROR, `error.type` the error's code or name. */
export function failSpan (span: Span, error: unknown): void {
  const { code, name } = (error ?? {}) as { code?: unknown, name?: unknown }
  const type = typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error'
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR })
}
