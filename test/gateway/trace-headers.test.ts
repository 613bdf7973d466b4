/**
 * What of a caller's trace headers crosses the gateway (issue 41, finding 3), with the gateway's own tracing SDK
 * (src/gateway/tracing-sdk.ts, as main.ts starts it from OTEL_* variables) exporting to a real OTLP receiver: a
 * proxied upstream (an @a2a-js/sdk agent) and a webhook receiver record the headers they get. By default only
 * `traceparent` goes on (the caller's `tracestate` and `baggage` do not); OTEL_PROPAGATORS with `baggage` forwards
 * baggage; `none` forwards nothing. And OTEL_TRACES_SAMPLER decides whether a caller's unsampled request is traced.
 */
import t, { type Test } from 'tap'
import { randomBytes, randomUUID } from 'node:crypto'
import { startTracing, tracingConfig } from '../../src/gateway/tracing-sdk.js'
import { startGateway } from '../fixtures/gateway-helpers.js'
import { startOtlpReceiver } from '../fixtures/otlp-receiver.js'
import { startUpstream } from '../fixtures/upstream-agent.js'
import { webhookReceiver } from '../fixtures/webhook-receiver.js'

t.setTimeout(120_000)

const BAGGAGE = 'user.id=admin,role=superuser'
const TRACESTATE = 'caller=t61rcWkgMzE,other=secret'
const silent = { warn: () => {} }

/** The gateway's SDK from `env` (plus an OTLP/JSON receiver's endpoint), shut down at the test's end. */
async function tracing (t: Test, env: Record<string, string> = {}) {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  // The OTLP exporter reads its endpoint and the batch delay from the process environment (as in main.ts).
  const exporterEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' }
  const saved = Object.fromEntries(Object.keys(exporterEnv).map((name) => [name, process.env[name]]))
  Object.assign(process.env, exporterEnv)
  const sdk = await startTracing(tracingConfig({ ...exporterEnv, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...env }), '0.0.0', silent)
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  t.teardown(async () => await sdk?.shutdown())
  return { receiver, shutdown: async () => await sdk?.shutdown() }
}

function callerHeaders (traceId: string, flags = '01'): Record<string, string> {
  return {
    'content-type': 'application/json',
    'a2a-version': '1.0',
    traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}`,
    tracestate: TRACESTATE,
    baggage: BAGGAGE
  }
}

function sendMessage (text: string, configuration?: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration }
  })
}

/** What a proxied upstream gets from one caller's request through a gateway traced with `env`. */
async function atUpstream (t: Test, env: Record<string, string>, traceId: string) {
  await tracing(t, env)
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const proxy = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }] })
  const proxied = await fetch(`${proxy.base}/a2a/shop`, { method: 'POST', headers: callerHeaders(traceId), body: sendMessage('hello') })
  t.equal(proxied.status, 200)
  t.equal((await proxied.json() as { error?: unknown }).error, undefined)
  return upstream.seen.at(-1) ?? {}
}

/**
 * What a webhook gets for one caller's request (an inline push config) through a gateway traced with `env`; `state`:
 * the gateway's (memory: delivered from the notification in process; embedded: from the outbox's row).
 */
async function atWebhook (t: Test, env: Record<string, string>, traceId: string, state: Record<string, string> = {}) {
  await tracing(t, env)
  const receiver = await webhookReceiver(t)
  const gateway = await startGateway(t, { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', ...state })
  const pushed = await fetch(`${gateway.base}/a2a/demo`, {
    method: 'POST', headers: callerHeaders(traceId), body: sendMessage('book a table', { taskPushNotificationConfig: { url: receiver.url } })
  })
  t.equal(pushed.status, 200)
  await pushed.arrayBuffer()
  const [webhook] = await receiver.waitFor(1)
  return webhook.headers
}

for (const [who, at] of [['upstream', atUpstream], ['webhook', atWebhook]] as const) {
  t.test(`${who}, by default: only traceparent crosses, not the caller's tracestate or baggage`, async (t) => {
    const traceId = randomBytes(16).toString('hex')
    const headers = await at(t, {}, traceId)
    t.match(headers.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the caller\'s trace goes on')
    t.equal(headers.tracestate, undefined, 'no tracestate')
    t.equal(headers.baggage, undefined, 'no baggage')
  })

  t.test(`${who}, OTEL_PROPAGATORS=tracecontext,baggage: the operator forwards the caller's baggage, still no tracestate`, async (t) => {
    const traceId = randomBytes(16).toString('hex')
    const headers = await at(t, { OTEL_PROPAGATORS: 'tracecontext,baggage' }, traceId)
    t.match(headers.traceparent, new RegExp(`^00-${traceId}-`))
    t.equal(headers.baggage, BAGGAGE, 'the baggage, unchanged')
    t.equal(headers.tracestate, undefined, 'no tracestate')
  })

  t.test(`${who}, OTEL_PROPAGATORS=none: no trace header is read or sent`, async (t) => {
    const headers = await at(t, { OTEL_PROPAGATORS: 'none' }, randomBytes(16).toString('hex'))
    t.same([headers.traceparent, headers.tracestate, headers.baggage], [undefined, undefined, undefined])
  })
}

t.test('a webhook from the embedded outbox: traceparent only, by default and with baggage forwarded (a row keeps no baggage)', async (t) => {
  for (const env of [{}, { OTEL_PROPAGATORS: 'tracecontext,baggage' }] as Array<Record<string, string>>) {
    await t.test(JSON.stringify(env), async (t) => {
      const traceId = randomBytes(16).toString('hex')
      const headers = await atWebhook(t, env, traceId, { STATE: 'embedded', DATA_DIR: t.testdir({}) })
      t.match(headers.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the caller\'s trace, from the row')
      t.same([headers.tracestate, headers.baggage], [undefined, undefined], 'no tracestate, no baggage')
    })
  }
})

/** Whether the gateway exported a span of the caller's trace for one SendMessage whose traceparent has `flags`. */
async function traced (t: Test, env: Record<string, string>, flags: string): Promise<boolean> {
  const { receiver, shutdown } = await tracing(t, env)
  const gateway = await startGateway(t)
  const traceId = randomBytes(16).toString('hex')
  const response = await fetch(`${gateway.base}/a2a/demo`, { method: 'POST', headers: callerHeaders(traceId, flags), body: sendMessage('hello') })
  t.equal(response.status, 200)
  await response.arrayBuffer()
  // The shutdown exports what is buffered: after it, the receiver has every span there will be.
  await shutdown()
  const spans = receiver.spans()
  t.ok(spans.every((span) => span.service === 'a2a-converse'), 'the gateway\'s spans')
  return spans.some((span) => span.traceId === traceId && span.name === 'lf.a2a.v1.A2AService/SendMessage')
}

// OTEL_TRACES_SAMPLER: by default the caller's sampled flag decides; the operator can make the gateway decide.
for (const [env, flags, expected, what] of [
  [{}, '00', false, 'parentbased_always_on (default): the caller says not sampled, not traced'],
  [{}, '01', true, 'parentbased_always_on (default): the caller says sampled, traced'],
  [{ OTEL_TRACES_SAMPLER: 'always_on' }, '00', true, 'always_on: traced whatever the caller says'],
  [{ OTEL_TRACES_SAMPLER: 'always_off' }, '01', false, 'always_off: never'],
  [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, '01', false, 'traceidratio 0: none'],
  [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }, '00', true, 'traceidratio 1: all'],
  [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, '01', true, 'parentbased_always_off: a sampled caller still decides']
] as const) {
  t.test(`OTEL_TRACES_SAMPLER ${what}`, async (t) => {
    t.equal(await traced(t, env, flags), expected)
  })
}
