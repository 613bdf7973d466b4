/**
 * Traces through @opentelemetry/api only: whoever registers an SDK (the gateway app from OTEL_* variables, or a
 * plugin user's own) gets the spans; with none, every call here meets the API's no-op tracer and propagator.
 *
 * W3C trace context comes in from a request's `traceparent` / `tracestate` headers (the propagator the SDK
 * registers reads them) and goes out on every request the gateway makes (`injectTraceHeaders`).
 */
import {
  context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace,
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

/** Only the trace context headers of a request (for a door that builds the service's headers itself). */
export function traceHeadersOf (headers: HeaderRecord): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const name of ['traceparent', 'tracestate']) {
    const value = headers[name]
    if (typeof value === 'string') picked[name] = value
  }
  return picked
}

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

/** A span started under `parent` (default: the active context), with the context that holds it. */
export function startSpan (name: string, kind: SpanKind, attributes: Attributes, parent: Context = context.active()): { span: Span, context: Context } {
  const span = currentTracer().startSpan(name, { kind, attributes }, parent)
  return { span, context: trace.setSpan(parent, span) }
}

/**
 * Runs `work` in a span of its own (a child of the active one), ended when `work` settles; a rejection marks the
 * span ERROR with the error's name (never its message: it may quote data) and is rethrown.
 */
export async function inSpan<T> (name: string, kind: SpanKind, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  // Under a span that is not recorded (sampled out), no child is started: it would not be recorded either (the
  // parent-based samplers), and the parent's context, still active, is what goes out in `traceparent`.
  const parent = trace.getSpan(context.active())
  if (parent !== undefined && !parent.isRecording()) return await work(parent)
  const { span, context: spanContext } = startSpan(name, kind, attributes)
  let result: T
  try {
    result = await context.with(spanContext, work, undefined, span)
  } catch (error) {
    failSpan(span, error)
    throw error
  } finally {
    span.end()
  }
  return result
}

/** Marks a span failed by `error`: status ERROR, `error.type` the error's code or name. */
export function failSpan (span: Span, error: unknown): void {
  const { code, name } = (error ?? {}) as { code?: unknown, name?: unknown }
  const type = typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error'
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR })
}
