/**
 * packages/a2a-converse/src/telemetry/ and the gateway's metrics module by themselves: trace context in and out (with the SDK's W3C
 * propagator registered, and without any SDK), span helpers, the envelope → attributes mapping, label bounds.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace-node'
import { propagation, SpanStatusCode, type TextMapPropagator } from '@opentelemetry/api'
import { answerAttributes, ATTR, serverAttributes, summarizeResult } from '../../../packages/a2a-converse/src/telemetry/attributes.js'
import {
  context, extractTraceContext, failSpan, headerGetter, injectTraceHeaders, inSpan, runActive, SpanKind, startSpan, trace, traceHeadersFor, traceHeadersOf, TRACESTATE_LIMIT
} from '../../../packages/a2a-converse/src/telemetry/tracing.js'
import { createGatewayMetrics } from '../../../src/gateway/metrics.js'
import { otlpProtocol, startTracing, tracePropagators, tracesExporter, tracesSampler, tracingConfig, type TracingConfig } from '../../../src/gateway/tracing-sdk.js'
import { ConfigError } from '../../../src/gateway/config.js'
import { tracedTaskStore } from '../../../packages/a2a-converse/src/stores/traced-task-store.js'
import { InMemoryTaskStore, type ServerCallContext } from '@a2a-js/sdk/server'
import { callerContext } from '../../../packages/a2a-converse/src/auth/sdk-user.js'
import { parsePrometheus, valueOf } from '../../fixtures/prometheus-text.js'
import { registerSdk } from '../../fixtures/tracing-sdk.js'

const KEY = 'urn:envelope'
const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

t.test('without an SDK: no context comes in, nothing goes out, spans are no-ops', async (t) => {
  const context = extractTraceContext({ traceparent: PARENT })
  t.equal(trace.getSpanContext(context), undefined)
  t.same(injectTraceHeaders({ accept: 'x' }), { accept: 'x' })
  t.equal(await inSpan('x', SpanKind.INTERNAL, {}, async (span) => span.isRecording()), false)
})

t.test('the sdk configuration from OTEL_* variables', async (t) => {
  t.equal(tracesExporter({}), undefined, 'nothing set: off')
  t.equal(tracesExporter({ OTEL_SERVICE_NAME: 'x' }), undefined, 'a name alone names no destination')
  t.equal(tracesExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), 'otlp')
  t.equal(tracesExporter({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }), 'otlp')
  t.equal(tracesExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), undefined, 'blank is unset')
  t.equal(tracesExporter({ OTEL_TRACES_EXPORTER: 'console' }), 'console')
  t.equal(tracesExporter({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), undefined)
  t.equal(tracesExporter({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), undefined)
  t.throws(() => tracesExporter({ OTEL_TRACES_EXPORTER: 'jaeger' }), ConfigError)
  t.equal(otlpProtocol({}), 'http/protobuf', 'the specification\'s default')
  t.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), 'http/json')
  t.equal(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }), 'http/protobuf', 'the traces variable wins')
  t.throws(() => otlpProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }), { message: /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/ })
  const warnings: Array<[object, string]> = []
  const log = { warn: (object: object, message: string) => { warnings.push([object, message]) } }
  t.equal(tracingConfig({}), undefined, 'off')
  t.same(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), {
    exporter: 'otlp', protocol: 'http/protobuf', sampler: { name: 'parentbased_always_on' }, propagators: { traceContext: true, baggage: false }
  }, 'defaults: the caller\'s sampled flag decides; traceparent only')
  t.same(tracesSampler({ OTEL_TRACES_SAMPLER: ' Always_On ' }), { name: 'always_on' })
  t.same(tracesSampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }), { name: 'parentbased_traceidratio', ratio: 0.25 })
  t.same(tracesSampler({ OTEL_TRACES_SAMPLER: 'traceidratio' }), { name: 'traceidratio', ratio: 1 }, 'the specification\'s default ratio')
  t.same(tracesSampler({ OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'x' }), { name: 'always_off' }, 'the argument of another sampler is not read')
  for (const [env, variable] of [
    [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_PROPAGATORS: 'tracecontext,b3' }, 'OTEL_PROPAGATORS'],
    [{ OTEL_PROPAGATORS: 'none,baggage' }, 'OTEL_PROPAGATORS']
  ] as const) t.throws(() => tracingConfig(env), { name: 'ConfigError', variable }, JSON.stringify(env))
  t.same(tracePropagators({ OTEL_PROPAGATORS: 'TraceContext, baggage' }), { traceContext: true, baggage: true })
  t.same(tracePropagators({ OTEL_PROPAGATORS: 'baggage' }), { traceContext: false, baggage: true })
  t.same(tracePropagators({ OTEL_PROPAGATORS: 'none' }), { traceContext: false, baggage: false })
  t.throws(() => tracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), ConfigError, 'a bad protocol stops the start even while tracing is off')
  t.equal(await startTracing(undefined, '0.0.0', log), undefined, 'off: nothing started')
  // The console exporter: started, registered, shut down (and unregistered) again.
  const defaults: Pick<TracingConfig, 'sampler' | 'propagators'> = { sampler: { name: 'parentbased_always_on' }, propagators: { traceContext: true, baggage: false } }
  const sdk = await startTracing({ exporter: 'console', protocol: 'http/protobuf', ...defaults }, '0.0.0', log)
  t.ok(sdk)
  t.ok(trace.getSpanContext(extractTraceContext({ traceparent: PARENT })), 'the W3C propagator is registered')
  t.equal(trace.getSpanContext(extractTraceContext({ traceparent: PARENT, tracestate: 'vendor=1' }))?.traceState, undefined, 'the caller\'s tracestate is dropped')
  t.same(propagation.fields(), ['traceparent', 'tracestate'], 'the headers it reads (baggage not among them by default)')
  await sdk?.shutdown()
  t.equal(trace.getSpanContext(extractTraceContext({ traceparent: PARENT })), undefined, 'and unregistered')
})

t.test('the SDK\'s own warnings become warn lines: an export to a collector that is down', async (t) => {
  const lines: string[] = []
  const warnings = { warn: (_object: unknown, message: string) => { lines.push(message) } }
  // A port nothing listens on (bound, then closed), through the JSON exporter (it reads the endpoint from the env).
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  // The batch exported after 10 ms: its failure goes to the SDK's error handler (diag), not to a caller.
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '10', OTEL_EXPORTER_OTLP_TIMEOUT: '300' }
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]))
  Object.assign(process.env, env)
  t.teardown(() => { for (const [name, value] of Object.entries(saved)) { if (value === undefined) delete process.env[name]; else process.env[name] = value } })
  const sdk = await startTracing({ exporter: 'otlp', protocol: 'http/json', sampler: { name: 'always_on' }, propagators: { traceContext: true, baggage: false } }, '0.0.0', warnings)
  trace.getTracer('test').startSpan('lost').end()
  for (let i = 0; i < 400 && lines.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25))
  await sdk?.shutdown()
  t.ok(lines.length > 0, 'the failed export is a warn line')
})

t.test('with an SDK: W3C trace context in and out, spans of their own, failures', async (t) => {
  const exporter = registerSdk(t)
  const parent = extractTraceContext({ traceparent: PARENT, tracestate: 'vendor=1' })
  t.equal(trace.getSpanContext(parent)?.traceId, '0af7651916cd43dd8448eb211c80319c')
  t.equal(trace.getSpanContext(extractTraceContext({ TraceParent: PARENT } as never))?.traceId, undefined, 'Node\'s names are lower case')
  const { span, context } = startSpan('outer', SpanKind.SERVER, { a: 1 }, parent)
  const headers = injectTraceHeaders({}, context)
  t.match(headers.traceparent, new RegExp(`^00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-01$`))
  t.equal(headers.tracestate, 'vendor=1')
  span.end()
  t.same(traceHeadersOf({ traceparent: PARENT, tracestate: ['a', 'b'], other: 'x' }), { traceparent: PARENT })
  t.same(headerGetter.keys({ traceparent: PARENT, other: 'x' }), ['traceparent', 'other'], 'a propagator that lists headers sees them all')
  t.equal(headerGetter.get({ traceparent: PARENT }, 'TraceParent'), PARENT, 'looked up by the lower-case name')

  await t.rejects(inSpan('failing', SpanKind.CLIENT, {}, async () => { throw Object.assign(new Error('secret text'), { code: 'E_UP' }) }), { code: 'E_UP' })
  const failing = exporter.getFinishedSpans().find((item) => item.name === 'failing')
  t.equal(failing?.status.code, SpanStatusCode.ERROR)
  t.equal(failing?.status.message, undefined, 'the error\'s message (it may quote data) is not on the span')
  t.equal(failing?.attributes['error.type'], 'E_UP')
  const named = startSpan('named', SpanKind.INTERNAL, {})
  failSpan(named.span, new TypeError('x'))
  failSpan(named.span, undefined)
  named.span.end()
  t.equal(exporter.getFinishedSpans().find((item) => item.name === 'named')?.attributes['error.type'], 'Error', 'the last failure: no name')
  const typed = startSpan('typed', SpanKind.INTERNAL, {})
  failSpan(typed.span, new TypeError('x'))
  typed.span.end()
  t.equal(exporter.getFinishedSpans().find((item) => item.name === 'typed')?.attributes['error.type'], 'TypeError')
})

t.test('what a store keeps of a trace is W3C and bounded, whatever the registered propagator writes', async (t) => {
  registerSdk(t)
  const { span, context: spanContext } = startSpan('turn', SpanKind.SERVER, {}, extractTraceContext({ traceparent: PARENT, tracestate: 'vendor=1' }))
  span.end()
  t.same(traceHeadersFor(undefined), {})
  const kept = traceHeadersFor(spanContext)
  t.match(kept, { traceparent: new RegExp(`^00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-01$`), tracestate: 'vendor=1' }, 'the W3C propagator\'s')
  // A plugin user's own propagator may write anything under the W3C names (a value of the caller's, say).
  let written: Record<string, string> = {}
  const own: TextMapPropagator = { inject: (_context, carrier) => { Object.assign(carrier as object, written) }, extract: (context) => context, fields: () => ['traceparent', 'tracestate'] }
  propagation.disable()
  t.ok(propagation.setGlobalPropagator(own))
  t.teardown(() => { propagation.disable() })
  const cases: Array<[string, Record<string, string>, Record<string, string>]> = [
    ['well-formed', { traceparent: PARENT, tracestate: 'k=v' }, { traceparent: PARENT, tracestate: 'k=v' }],
    ['a malformed traceparent: neither', { traceparent: 'x'.repeat(10_000), tracestate: 'k=v' }, {}],
    ['an all-zero trace id: neither', { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01', tracestate: 'k=v' }, {}],
    [`a tracestate over ${TRACESTATE_LIMIT} characters: the traceparent only`, { traceparent: PARENT, tracestate: 'k='.padEnd(TRACESTATE_LIMIT + 1, 'v') }, { traceparent: PARENT }],
    [`a tracestate of ${TRACESTATE_LIMIT} characters: kept`, { traceparent: PARENT, tracestate: 'k='.padEnd(TRACESTATE_LIMIT, 'v') }, { traceparent: PARENT, tracestate: 'k='.padEnd(TRACESTATE_LIMIT, 'v') }],
    ['a blank tracestate: the traceparent only', { traceparent: PARENT, tracestate: ' ' }, { traceparent: PARENT }],
    ['no traceparent: no tracestate either', { tracestate: 'k=v' }, {}]
  ]
  for (const [what, headers, expected] of cases) {
    written = headers
    t.same(traceHeadersFor(spanContext), expected, what)
  }
})

t.test('a traced task store: loads and saves are spans, everything else is the store\'s own', async (t) => {
  const exporter = registerSdk(t)
  class CountingStore extends InMemoryTaskStore {
    readonly label = 'counting'
    #loads = 0
    override async load (taskId: string, context: ServerCallContext): Promise<undefined> {
      this.#loads++
      return await super.load(taskId, context) as undefined
    }

    get loads (): number { return this.#loads }
  }
  const store = new CountingStore()
  const traced = tracedTaskStore(store, 'demo')
  const context = callerContext('caller-1')
  await inSpan('request', SpanKind.SERVER, {}, async () => {
    t.equal(await traced.load('t-1', context), undefined)
    t.equal(traced.loads, 1, 'the store\'s own getter (and private field) through the proxy')
    t.equal(traced.label, 'counting', 'a data member')
    t.ok(traced instanceof CountingStore)
    await traced.save({ id: 't-2', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } } as never, context)
  })
  t.ok(await store.load('t-2', context), 'saved in the store')
  const spans = exporter.getFinishedSpans()
  t.same(spans.map((span) => [span.name, span.attributes['a2a.task.id'], span.attributes['converse.store.operation']]),
    [['converse.store load', 't-1', 'load'], ['converse.store save', 't-2', 'save'], ['request', undefined, undefined]])
  t.equal(spans[0].parentSpanContext?.spanId, spans[2].spanContext().spanId, 'children of the request\'s span')
  // Outside any request's span (a background job): the store works, no span is started.
  await traced.load('t-2', context)
  t.equal(exporter.getFinishedSpans().length, 3)
})

t.test('a span not recorded is never made the active context; its context goes out explicitly', async (t) => {
  const exporter = registerSdk(t, new AlwaysOffSampler())
  const { span, context: callContext } = startSpan('server', SpanKind.SERVER, {}, extractTraceContext({}))
  t.equal(span.isRecording(), false)
  t.equal(runActive(span, callContext, () => trace.getSpan(context.active())), undefined, 'runActive leaves the active context alone')
  // A CLIENT span of the call, its parent given explicitly: the work gets the call's own span and context.
  const headers = await inSpan('upstream', SpanKind.CLIENT, {}, async (child, childContext) => {
    t.equal(child, span, 'no child under a span not recorded')
    t.equal(trace.getSpan(context.active()), undefined, 'nothing active')
    return injectTraceHeaders({}, childContext)
  }, { parent: callContext })
  t.equal(headers.traceparent, `00-${span.spanContext().traceId}-${span.spanContext().spanId}-00`, 'the decision not to sample goes on')
  // A child-only span with no span around it: none, and no context to carry.
  t.equal(await inSpan('store', SpanKind.INTERNAL, {}, async (none, noneContext) => {
    t.equal(none.isRecording(), false)
    return injectTraceHeaders({}, noneContext).traceparent
  }, { childOnly: true }), undefined)
  span.end()
  t.same(exporter.getFinishedSpans(), [])
})

t.test('a recorded span is the active context of its work; an explicit parent yields to an active span', async (t) => {
  const exporter = registerSdk(t)
  const { span, context: callContext } = startSpan('server', SpanKind.SERVER, {})
  const other = startSpan('other', SpanKind.INTERNAL, {})
  await runActive(span, callContext, async () => {
    t.equal(trace.getSpan(context.active()), span)
    await inSpan('backend', SpanKind.INTERNAL, {}, async (child) => {
      t.equal(trace.getSpan(context.active()), child, 'the child is active in its work')
    }, { parent: other.context })
  })
  other.span.end()
  span.end()
  const backend = exporter.getFinishedSpans().find((finished) => finished.name === 'backend')
  t.equal(backend?.parentSpanContext?.spanId, span.spanContext().spanId, 'the active span is the parent')
})

t.test('a span sampled out starts no children; its context still goes out', async (t) => {
  const exporter = registerSdk(t, new AlwaysOffSampler())
  const { span, context: parentContext } = startSpan('server', SpanKind.SERVER, {}, extractTraceContext({ traceparent: PARENT.replace(/-01$/, '-00') }))
  t.equal(span.isRecording(), false)
  const headers = await context.with(parentContext, async () => await inSpan('child', SpanKind.INTERNAL, {}, async (child) => {
    t.equal(child, span, 'the work gets the parent itself')
    return injectTraceHeaders({})
  }))
  t.equal(headers.traceparent, `00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-00`, 'the unsampled decision goes on')
  span.end()
  t.same(exporter.getFinishedSpans(), [])
})

t.test('server address and port of a URL, never its path or user info', async (t) => {
  t.same(serverAttributes('https://user:pw@example.com/a?b=c'), { 'server.address': 'example.com', 'server.port': 443 })
  t.same(serverAttributes('http://example.com/'), { 'server.address': 'example.com', 'server.port': 80 })
  t.same(serverAttributes('http://[::1]:8080/x'), { 'server.address': '::1', 'server.port': 8080 })
})

t.test('a result\'s summary and its attributes', async (t) => {
  t.equal(summarizeResult(null, KEY), undefined)
  t.equal(summarizeResult('x', KEY), undefined)
  t.equal(summarizeResult({ artifactUpdate: {} }, KEY), undefined, 'an artifact update says nothing of the answer')
  t.same(summarizeResult({ message: { taskId: 't', contextId: 'c', metadata: null } }, KEY), { taskId: 't', contextId: 'c' })
  const envelope = {
    author: 'agent',
    answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
    ownership: { state: 'ai_owned', suppressed: false },
    routine: { name: 'book', status: 'active' },
    invocation: { toolName: 'book_table', outcome: 'started' },
    citations: [{}, {}]
  }
  const summary = summarizeResult({ task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED', message: { metadata: { [KEY]: envelope } } } } }, KEY)
  t.same(answerAttributes(summary ?? {}), {
    [ATTR.taskId]: 't',
    [ATTR.contextId]: 'c',
    [ATTR.taskState]: 'TASK_STATE_COMPLETED',
    [ATTR.author]: 'agent',
    [ATTR.availability]: 'assessed',
    [ATTR.coverage]: 'answered',
    [ATTR.reason]: 'sufficient_evidence',
    [ATTR.ownershipState]: 'ai_owned',
    [ATTR.suppressed]: false,
    [ATTR.routineName]: 'book',
    [ATTR.routineStatus]: 'active',
    [ATTR.invocationTool]: 'book_table',
    [ATTR.invocationOutcome]: 'started',
    [ATTR.citationCount]: 2
  })
  t.same(summarizeResult({ statusUpdate: { taskId: 't', contextId: 'c', status: {} } }, KEY), { taskId: 't', contextId: 'c' }, 'members it does not have are absent')
  t.same(answerAttributes({ envelope: { invocation: { toolName: 'made up by the caller', outcome: 'unknown_tool' } } }), { [ATTR.invocationOutcome]: 'unknown_tool' },
    'an unknown tool\'s name (the caller\'s text) is left out')
  t.same(answerAttributes({ envelope: {} }), {})
})

t.test('metrics labels stay bounded whatever a record says', async (t) => {
  const metrics = createGatewayMetrics(['demo'])
  const base = { durationMs: 5, storeUnavailable: false }
  metrics.observer.callEnded({ ...base, agentId: 'demo', binding: 'carrier-pigeon', method: 'SendMessage', errorCode: 12345 })
  metrics.observer.callEnded({ ...base, agentId: 'someone else', binding: 'jsonrpc', method: 'tasks/x', errorCode: -32001 })
  metrics.observer.callEnded({
    ...base,
    agentId: 'demo',
    binding: 'grpc',
    method: 'SendMessage',
    answer: { envelope: { answerCoverage: { availability: 'odd', coverage: 'odd', reason: 'odd' }, routine: { status: 'odd' } } }
  })
  metrics.observer.callEnded({ ...base, agentId: 'demo', binding: 'grpc', method: 'SendMessage', answer: { envelope: {} } })
  metrics.observer.streamOpened('other', 'pigeon')
  metrics.observer.streamClosed('other', 'pigeon')
  metrics.rateLimited('a2a-grpc')
  const pool = new pg.Pool({ max: 1 })
  t.teardown(async () => await pool.end())
  metrics.watchPool(undefined)
  metrics.watchPool(pool)
  metrics.watchPush(undefined)
  metrics.watchPush({ delivered: 3, retried: 2, gaveUp: 1 })
  metrics.watchPush({ delivered: 1, retried: 0, gaveUp: 0 })
  const samples = parsePrometheus((await metrics.scrape()).text)
  const P = 'a2a_converse_'
  t.equal(valueOf(samples, `${P}requests_total`, { agent: 'demo', binding: 'other', method: 'SendMessage', code: 'other' }), 1)
  t.equal(valueOf(samples, `${P}requests_total`, { agent: 'unknown', binding: 'jsonrpc', method: 'unknown', code: '-32001' }), 1)
  t.equal(valueOf(samples, `${P}answers_total`, { agent: 'demo', availability: 'invalid', coverage: 'invalid', reason: 'invalid' }), 1)
  t.equal(valueOf(samples, `${P}answers_total`, { agent: 'demo', availability: 'invalid', coverage: 'none', reason: 'none' }), 1)
  t.equal(valueOf(samples, `${P}routine_turns_total`, { agent: 'demo', status: 'invalid' }), 1)
  t.equal(valueOf(samples, `${P}open_streams`, { agent: 'unknown', binding: 'other' }), 0)
  t.equal(valueOf(samples, `${P}rate_limited_total`, { door: 'a2a-grpc' }), 1)
  t.equal(valueOf(samples, `${P}pg_pool_connections`, { state: 'total' }), 0)
  t.equal(valueOf(samples, `${P}pg_pool_connections`, { state: 'idle' }), 0)
  t.equal(valueOf(samples, `${P}pg_pool_connections`, { state: 'waiting' }), 0)
  t.equal(valueOf(samples, `${P}push_deliveries_total`, { outcome: 'delivered' }), 4)
  t.equal(valueOf(samples, `${P}push_deliveries_total`, { outcome: 'retried' }), 2)
  t.equal(valueOf(samples, `${P}push_deliveries_total`, { outcome: 'gave_up' }), 1)
  const again = parsePrometheus((await metrics.scrape()).text)
  t.equal(valueOf(again, `${P}push_deliveries_total`, { outcome: 'delivered' }), 4, 'read again, not added again')
})

t.test('the HTTP attribute names spelled in http-server-spans.ts are the stable conventions\' own', async (t) => {
  const conventions = await import('@opentelemetry/semantic-conventions')
  const spelled = await import('../../../packages/a2a-converse/src/telemetry/http-server-spans.js')
  for (const name of ['ATTR_ERROR_TYPE', 'ATTR_HTTP_REQUEST_METHOD', 'ATTR_HTTP_RESPONSE_STATUS_CODE', 'ATTR_HTTP_ROUTE', 'ATTR_URL_SCHEME',
    'HTTP_REQUEST_METHOD_VALUE_OTHER'] as const) {
    t.equal(spelled[name], conventions[name], name)
  }
})
