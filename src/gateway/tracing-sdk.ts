/**
 * The gateway app's OpenTelemetry trace SDK, configured from the standard OTEL_* variables (the library code only
 * uses @opentelemetry/api: see packages/a2a-converse/src/telemetry/). Started only when a destination is named (an OTLP endpoint, or
 * OTEL_TRACES_EXPORTER); otherwise nothing is loaded or registered and every span is the API's no-op one.
 *
 * What the SDK itself reads: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the resource; service.name defaults to
 * `a2a-converse`), OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT / _HEADERS / _TIMEOUT / _COMPRESSION, OTEL_BSP_* (the batch
 * processor). Read and checked here (a bad value stops the start): OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL
 * `http/protobuf` (the default) or `http/json`, OTEL_TRACES_EXPORTER `otlp` (the default), `console` or `none`,
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default parentbased_always_on: the caller's sampled flag decides)
 * and OTEL_PROPAGATORS (which of the caller's trace headers are read and carried on: see `propagatorFor`).
 */
import type { Context, TextMapGetter, TextMapPropagator, TextMapSetter } from '@opentelemetry/api'
import { ConfigError } from './config.js'

type Env = Readonly<Record<string, string | undefined>>

export interface TracingSdk {
  /**
   * Exports what is still buffered, then stops (called when the gateway closes). Never rejects: spans that cannot be
   * exported (the collector is down) are reported to `warn` and dropped; the gateway still closes cleanly.
   */
  shutdown (): Promise<void>
}

/** Where the SDK's own problems go (a collector that refuses exports, a bad variable): the gateway's log. */
export interface TracingLogger {
  warn (object: object, message: string): void
}

const EXPORTERS = new Set(['otlp', 'console', 'none'])
const PROTOCOLS = new Set(['http/protobuf', 'http/json'])

function set (value: string | undefined): value is string {
  return value !== undefined && value.trim() !== ''
}

/** The exporter the variables ask for, or undefined when tracing stays off. Throws ConfigError on a value it cannot serve. */
export function tracesExporter (env: Env): 'otlp' | 'console' | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined
  const named = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase()
  if (set(named)) {
    if (!EXPORTERS.has(named)) throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp, console or none (got "${named.slice(0, 32)}")`)
    return named === 'none' ? undefined : named as 'otlp' | 'console'
  }
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ? 'otlp' : undefined
}

/** The OTLP protocol: the traces variable, else the general one, else http/protobuf. */
export function otlpProtocol (env: Env): 'http/protobuf' | 'http/json' {
  const variable = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = env[variable]?.trim() ?? ''
  if (protocol === '') return 'http/protobuf'
  if (!PROTOCOLS.has(protocol)) throw new ConfigError(variable, `must be http/protobuf or http/json (got "${protocol.slice(0, 32)}"; grpc is not bundled)`)
  return protocol as 'http/protobuf' | 'http/json'
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = typeof SAMPLERS[number]

/**
 * OTEL_TRACES_SAMPLER (default parentbased_always_on: a caller's sampled flag decides; always_on / traceidratio: the
 * gateway decides whatever the caller says) and, for the ratio samplers, OTEL_TRACES_SAMPLER_ARG (0 to 1, default 1).
 */
export function tracesSampler (env: Env): { name: SamplerName, ratio?: number } {
  const named = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase()
  const name = (set(named) ? named : 'parentbased_always_on') as SamplerName
  if (!SAMPLERS.includes(name)) throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${SAMPLERS.join(', ')} (got "${name.slice(0, 32)}")`)
  if (!name.endsWith('traceidratio')) return { name }
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim()
  const ratio = set(arg) ? Number(arg) : 1
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (got "${String(arg).slice(0, 32)}")`)
  return { name, ratio }
}

const PROPAGATORS = new Set(['tracecontext', 'baggage', 'none'])

/**
 * OTEL_PROPAGATORS: which of a caller's trace headers the gateway reads and carries on to the requests it makes
 * (proxied upstreams, webhooks, the envelope service). Default `tracecontext`: `traceparent` only — the caller's
 * `tracestate` is dropped where it comes in (the gateway adds no entry of its own), and `baggage` is not read. Listing
 * `baggage` reads the caller's baggage and forwards it unchanged (the operator trusts its callers' baggage); `none`
 * reads and writes no trace header. Other propagators (b3, jaeger, xray, ...) are not bundled.
 */
export function tracePropagators (env: Env): { traceContext: boolean, baggage: boolean } {
  const raw = env.OTEL_PROPAGATORS?.trim().toLowerCase()
  const names = (set(raw) ? raw : 'tracecontext').split(',').map((name) => name.trim()).filter((name) => name !== '')
  for (const name of names) {
    if (!PROPAGATORS.has(name)) throw new ConfigError('OTEL_PROPAGATORS', `lists "${name.slice(0, 32)}": tracecontext, baggage and none are bundled`)
  }
  if (names.includes('none') && names.length > 1) throw new ConfigError('OTEL_PROPAGATORS', 'lists none with others: none alone, or the others')
  return { traceContext: names.includes('tracecontext'), baggage: names.includes('baggage') }
}

/** What the variables ask of the SDK; undefined: tracing stays off. Throws ConfigError (read before anything starts). */
export interface TracingConfig {
  exporter: 'otlp' | 'console'
  protocol: 'http/protobuf' | 'http/json'
  sampler: { name: SamplerName, ratio?: number }
  propagators: { traceContext: boolean, baggage: boolean }
}

export function tracingConfig (env: Env): TracingConfig | undefined {
  const exporter = tracesExporter(env)
  const protocol = otlpProtocol(env)
  const sampler = tracesSampler(env)
  const propagators = tracePropagators(env)
  return exporter === undefined ? undefined : { exporter, protocol, sampler, propagators }
}

/**
 * W3C trace context that keeps a caller's `traceparent` and drops its `tracestate` as it comes in: the vendor
 * entries are the caller's words, and what the gateway's spans inherit is what its requests carry on.
 */
class TraceparentPropagator implements TextMapPropagator {
  constructor (private readonly w3c: TextMapPropagator, private readonly api: typeof import('@opentelemetry/api')) {}

  extract (context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const extracted = this.w3c.extract(context, carrier, getter)
    const spanContext = this.api.trace.getSpanContext(extracted)
    if (spanContext?.traceState === undefined) return extracted
    return this.api.trace.setSpanContext(extracted, { ...spanContext, traceState: undefined })
  }

  inject (context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.w3c.inject(context, carrier, setter)
  }

  fields (): string[] {
    return this.w3c.fields()
  }
}

/**
 * Starts and registers the SDK (tracer provider, W3C trace context and baggage propagators) for `config`; nothing
 * without one. The SDK modules are loaded only then. The SDK reads its other OTEL_* variables (endpoint, headers,
 * sampler, resource, batch settings) from the process environment itself.
 *
 * No context manager is registered: every span of the gateway is given its parent explicitly (the call's context
 * travels with the call: packages/a2a-converse/src/telemetry/tracing.ts), and the app loads no instrumentation that would need an active
 * one. The SDK's default, AsyncLocalStorage, turns on async_hooks' promise hooks on Node 20 and 22, a cost on every
 * promise of the process — about a tenth of a sampled call (docs/observability.md, docs/performance.md).
 */
export async function startTracing (config: TracingConfig | undefined, serviceVersion: string, log: TracingLogger): Promise<TracingSdk | undefined> {
  if (config === undefined) return undefined
  const { exporter: exporterKind, protocol } = config
  const [sdk, resources, api, core] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/resources'), import('@opentelemetry/api'), import('@opentelemetry/core')
  ])
  const { NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } = sdk
  let exporter
  if (exporterKind === 'console') exporter = new ConsoleSpanExporter()
  else if (protocol === 'http/json') exporter = new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
  else exporter = new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter()
  // The gateway's name and version, under what OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say.
  const resource = resources.defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'a2a-converse', 'service.version': serviceVersion }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const provider = new NodeTracerProvider({ resource, sampler: samplerFor(config.sampler, sdk), spanProcessors: [new BatchSpanProcessor(exporter)] })
  provider.register({ contextManager: null, propagator: propagatorFor(config.propagators, core, api) })
  // The SDK's warnings and errors (an export refused or timed out) as log lines at warn; the level keeps its chatter
  // (info, debug, verbose) from ever reaching the logger.
  const warn = (message: string): void => { log.warn({ source: 'opentelemetry' }, message.slice(0, 512)) }
  api.diag.setLogger({ error: warn, warn, info: warn, debug: warn, verbose: warn }, api.DiagLogLevel.WARN)
  return {
    async shutdown () {
      await provider.shutdown().catch((error: unknown) => {
        log.warn({ source: 'opentelemetry', code: (error as { code?: unknown }).code }, 'traces still buffered could not be exported at close')
      })
      api.diag.disable()
      // Unregistered, so a later SDK in this process (a test's) can register.
      api.trace.disable()
      api.propagation.disable()
      api.context.disable()
    }
  }
}

type Sdk = typeof import('@opentelemetry/sdk-trace-node')

function samplerFor ({ name, ratio }: TracingConfig['sampler'], sdk: Sdk): import('@opentelemetry/sdk-trace-node').Sampler {
  const root = name.endsWith('always_off') ? new sdk.AlwaysOffSampler() : name.endsWith('traceidratio') ? new sdk.TraceIdRatioBasedSampler(ratio) : new sdk.AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root
}

/** The registered propagator (`tracePropagators`); null: none registered (the API's no-op reads and writes nothing). */
function propagatorFor (
  { traceContext, baggage }: TracingConfig['propagators'], core: typeof import('@opentelemetry/core'), api: typeof import('@opentelemetry/api')
): TextMapPropagator | null {
  const propagators: TextMapPropagator[] = []
  if (traceContext) propagators.push(new TraceparentPropagator(new core.W3CTraceContextPropagator(), api))
  if (baggage) propagators.push(new core.W3CBaggagePropagator())
  return propagators.length === 0 ? null : new core.CompositePropagator({ propagators })
}
