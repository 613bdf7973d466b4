/**
 * The gateway app's OpenTelemetry trace SDK, configured from the standard OTEL_* variables (the library code only
 * uses @opentelemetry/api: see src/telemetry/). Started only when a destination is named (an OTLP endpoint, or
 * OTEL_TRACES_EXPORTER); otherwise nothing is loaded or registered and every span is the API's no-op one.
 *
 * What the SDK itself reads: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the resource; service.name defaults to
 * `a2a-converse`), OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default parentbased_always_on),
 * OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT / _HEADERS / _TIMEOUT / _COMPRESSION, OTEL_BSP_* (the batch processor).
 * Chosen here: OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL `http/protobuf` (the default) or `http/json`, and
 * OTEL_TRACES_EXPORTER `otlp` (the default), `console` or `none`.
 */
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

/** What the variables ask of the SDK; undefined: tracing stays off. Throws ConfigError (read before anything starts). */
export interface TracingConfig {
  exporter: 'otlp' | 'console'
  protocol: 'http/protobuf' | 'http/json'
}

export function tracingConfig (env: Env): TracingConfig | undefined {
  const exporter = tracesExporter(env)
  const protocol = otlpProtocol(env)
  return exporter === undefined ? undefined : { exporter, protocol }
}

/**
 * Starts and registers the SDK (tracer provider, W3C trace context and baggage propagators) for `config`; nothing
 * without one. The SDK modules are loaded only then. The SDK reads its other OTEL_* variables (endpoint, headers,
 * sampler, resource, batch settings) from the process environment itself.
 *
 * No context manager is registered: every span of the gateway is given its parent explicitly (the call's context
 * travels with the call: src/telemetry/tracing.ts), and the app loads no instrumentation that would need an active
 * one. The SDK's default, AsyncLocalStorage, turns on async_hooks' promise hooks on Node 20 and 22, a cost on every
 * promise of the process — about a tenth of a sampled call (docs/observability.md, docs/performance.md).
 */
export async function startTracing (config: TracingConfig | undefined, serviceVersion: string, log: TracingLogger): Promise<TracingSdk | undefined> {
  if (config === undefined) return undefined
  const { exporter: exporterKind, protocol } = config
  const [{ NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, resources, api] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/resources'), import('@opentelemetry/api')
  ])
  let exporter
  if (exporterKind === 'console') exporter = new ConsoleSpanExporter()
  else if (protocol === 'http/json') exporter = new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
  else exporter = new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter()
  // The gateway's name and version, under what OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say.
  const resource = resources.defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'a2a-converse', 'service.version': serviceVersion }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] })
  provider.register({ contextManager: null })
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
