/**
 * The operator API's HTTP SERVER spans (packages/a2a-converse/src/telemetry/http-server-spans.ts, hooked in plugins/operator-api.ts): one
 * per request, named `{method} {route}` and attributed per the OpenTelemetry HTTP conventions, a child of the
 * caller's `traceparent`; the store calls it makes its children; 401, 404, 429 and 5xx; the live stream's span ends
 * with the stream; nothing secret in an attribute; with no SDK registered, nothing recorded.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import type { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import operatorApi from '../../../plugins/operator-api.js'
import type { Inbox } from '../../../packages/a2a-converse/src/runtime/inbox.js'
import { endHttpServerSpan, startHttpServerSpan } from '../../../packages/a2a-converse/src/telemetry/http-server-spans.js'
import { AUTH, Client, gateway, OPERATOR_KEY, operator } from '../../fixtures/conversation-gateway.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { InboxEvents } from '../../fixtures/inbox-events.js'
import { registerSdk } from '../../fixtures/tracing-sdk.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'

const BASE = '/api/v1/agents/:agentId/conversations/:contextId'
const SECRET_TEXT = 'the reply only the caller may read'

function traceparent (): { header: string, traceId: string, spanId: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId }
}

/** The operator spans ended so far (not the A2A calls' spans): an HTTP span's name starts with its method. */
function operatorSpans (exporter: InMemorySpanExporter): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => /^(GET|POST|HEAD|HTTP) /.test(span.name))
}

/** Waits until `count` operator spans have ended (a span ends when the response closes, a tick after inject's answer). */
async function ended (exporter: InMemorySpanExporter, count: number): Promise<ReadableSpan[]> {
  for (let waited = 0; operatorSpans(exporter).length < count; waited++) {
    if (waited > 2000) throw new Error(`${operatorSpans(exporter).length} operator spans ended, not ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  return operatorSpans(exporter)
}

/** No attribute value holds the operator key or the reply's text. */
function nothingSecret (t: Test, spans: ReadableSpan[]): void {
  const values = spans.flatMap((span) => Object.values(span.attributes).map(String))
  t.notOk(values.some((value) => value.includes(OPERATOR_KEY) || value.includes(SECRET_TEXT) || value.includes('operator-key')), 'no key, no text')
}

t.test('each route: one SERVER span, named by its method and route template, a child of the caller\'s traceparent', async (t) => {
  const exporter = registerSdk(t)
  const app = await gateway(t)
  const client = new Client(t, app)
  const contextId = (await client.task('book a table, date=2026-12-24')).contextId as string
  exporter.reset()
  const requests: Array<[method: 'GET' | 'POST', path: string, route: string, status: number, body?: unknown]> = [
    ['GET', '', '/api/v1/agents', 200],
    ['GET', 'demo/conversations?limit=5', '/api/v1/agents/:agentId/conversations', 200],
    ['GET', `demo/conversations/${contextId}`, BASE, 200],
    ['GET', `demo/conversations/${contextId}/trace`, `${BASE}/trace`, 200],
    ['GET', 'demo/answers?window=7d', '/api/v1/agents/:agentId/answers', 0],
    ['GET', 'demo/answers/unanswered', '/api/v1/agents/:agentId/answers/unanswered', 0],
    ['POST', `demo/conversations/${contextId}/takeover`, `${BASE}/takeover`, 200],
    ['POST', `demo/conversations/${contextId}/messages`, `${BASE}/messages`, 201, { text: SECRET_TEXT }],
    ['POST', `demo/conversations/${contextId}/release`, `${BASE}/release`, 200]
  ]
  for (const [method, path, route, status, body] of requests) {
    const parent = traceparent()
    const headers = { ...AUTH, traceparent: parent.header }
    const res = path === '' ? await app.inject({ url: '/api/v1/agents', headers }) : await operator(app, method, path, body, headers)
    // The answers routes answer 200 with an answer log (PostgreSQL, embedded) and 404 without one (memory).
    if (status !== 0) t.equal(res.statusCode, status, `${method} ${path}`)
    const [span] = (await ended(exporter, 1))
    exporter.reset()
    t.equal(span.name, `${method} ${route}`)
    t.equal(span.kind, SpanKind.SERVER)
    t.equal(span.spanContext().traceId, parent.traceId, 'the caller\'s trace')
    t.equal(span.parentSpanContext?.spanId, parent.spanId, 'the caller\'s span is the parent')
    t.strictSame(span.attributes, {
      'http.request.method': method,
      'url.scheme': 'http',
      'http.route': route,
      ...(route === '/api/v1/agents' ? {} : { 'a2a.agent.id': 'demo' }),
      'http.response.status_code': res.statusCode
    }, `${method} ${route}: no context id (the route's is the store's key, which may hold the caller's id), no query, no text`)
    t.equal(span.status.code, SpanStatusCode.UNSET)
    nothingSecret(t, [span])
  }
})

t.test('the store calls a request makes are its children: where the store\'s calls are spans, each route\'s', async (t) => {
  const exporter = registerSdk(t)
  // A memory store (and answer log) that asks for spans, as the PostgreSQL and embedded ones do (test/library/push/delivery-cases.ts
  // runs those, with a reply's and a release's task writes).
  const conversations = new MemoryConversationStore()
  Object.defineProperty(conversations, 'traced', { value: true })
  Object.defineProperty(conversations.answers, 'traced', { value: true })
  // Metrics on: the inbox the API gets is the counting one (src/gateway/metrics.ts), which hands the trace on.
  const app = await gateway(t, { conversations, env: { METRICS_TOKEN: 'metrics-token-0123456789' } })
  const client = new Client(t, app)
  const contextId = (await client.task('book a table, date=2026-12-24')).contextId as string
  const requests: Array<[method: 'GET' | 'POST', path: string, beneath: string[]]> = [
    ['GET', 'demo/conversations?limit=5', ['converse.store conversation.list']],
    ['GET', `demo/conversations/${contextId}`, ['converse.store conversation.get']],
    ['GET', `demo/conversations/${contextId}/trace`, ['converse.store conversation.get']],
    ['GET', 'demo/answers?window=7d', ['converse.store answers.series']],
    ['GET', 'demo/answers/unanswered', ['converse.store answers.unanswered']],
    ['POST', `demo/conversations/${contextId}/takeover`, ['converse.store conversation.exists', 'converse.store conversation.update']],
    ['GET', 'demo/conversations/unknown', ['converse.store conversation.get']],
    ['POST', 'demo/conversations/unknown/messages', ['converse.store conversation.exists']]
  ]
  for (const [method, path, names] of requests) {
    exporter.reset()
    const parent = traceparent()
    const res = await operator(app, method, path, method === 'POST' ? { text: SECRET_TEXT } : undefined, { ...AUTH, traceparent: parent.header })
    t.ok(res.statusCode < 500, `${method} ${path}: ${res.statusCode}`)
    const [server] = await ended(exporter, 1)
    const beneath = exporter.getFinishedSpans().filter((span) => span !== server)
    t.same(beneath.map((span) => span.name), names, `${method} ${path}`)
    for (const span of beneath) {
      t.equal(span.parentSpanContext?.spanId, server.spanContext().spanId, `${span.name}: the request's child`)
      t.strictSame(span.attributes, { 'converse.store.operation': span.name.slice('converse.store '.length), 'a2a.agent.id': 'demo' },
        'no context id: the route names the store\'s key')
    }
  }

  exporter.reset()
  const sampledOut = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`
  t.equal((await operator(app, 'GET', `demo/conversations/${contextId}`, undefined, { ...AUTH, traceparent: sampledOut })).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 10))
  t.strictSame(exporter.getFinishedSpans(), [], 'a request sampled out: nothing beneath it either')
})

t.test('without a traceparent a root span; 401 and 404 are spans with status unset; unknown agents are not named', async (t) => {
  const exporter = registerSdk(t)
  const app = await gateway(t)
  t.equal((await operator(app, 'GET', 'demo/conversations')).statusCode, 200)
  const [root] = await ended(exporter, 1)
  t.equal(root.parentSpanContext, undefined, 'no traceparent: a root')
  exporter.reset()

  const denied = await operator(app, 'GET', 'demo/conversations/c-1', undefined, { authorization: `Bearer ${OPERATOR_KEY}x` })
  t.equal(denied.statusCode, 401)
  const [unauthorized] = await ended(exporter, 1)
  t.equal(unauthorized.name, `GET ${BASE}`, 'a request refused by the key check is a request')
  t.equal(unauthorized.attributes['http.response.status_code'], 401)
  t.equal(unauthorized.attributes['a2a.agent.id'], 'demo')
  t.equal(unauthorized.status.code, SpanStatusCode.UNSET, 'a 4xx is the client\'s: status unset')
  t.equal(unauthorized.attributes['error.type'], undefined)
  nothingSecret(t, [unauthorized])
  exporter.reset()

  for (const path of ['nobody/conversations', 'nobody/conversations/c-1/takeover', `${'n'.repeat(100)}/events`]) {
    const res = await operator(app, path.endsWith('takeover') ? 'POST' : 'GET', path)
    t.equal(res.statusCode, 404, path)
  }
  const unknown = await ended(exporter, 3)
  t.strictSame(unknown.map((span) => span.attributes['http.response.status_code']), [404, 404, 404])
  t.ok(unknown.every((span) => span.attributes['a2a.agent.id'] === undefined), 'an agent not served is not named (the caller\'s text)')
  t.ok(unknown.every((span) => span.status.code === SpanStatusCode.UNSET && span.attributes['error.type'] === undefined))
  t.notOk(unknown.some((span) => JSON.stringify(span.attributes).includes('nobody')))
})

t.test('5xx: status ERROR and error.type the status code', async (t) => {
  const exporter = registerSdk(t)
  const app = Fastify()
  t.teardown(() => app.close())
  const unreachable = new StoreUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:5432'))
  const inbox = {
    view: async () => { throw unreachable },
    takeover: async () => { throw new Error('something else') }
  } as unknown as Inbox
  await app.register(operatorApi, { apiKey: OPERATOR_KEY, agentIds: ['demo'], inbox })
  t.equal((await app.inject({ url: '/api/v1/agents/demo/conversations/c-1', headers: AUTH })).statusCode, 503)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/agents/demo/conversations/c-1/takeover', headers: AUTH })).statusCode, 500)
  const [down, failed] = await ended(exporter, 2)
  t.match(down, { name: `GET ${BASE}`, status: { code: SpanStatusCode.ERROR }, attributes: { 'http.response.status_code': 503, 'error.type': '503' } })
  t.equal(down.status.message, undefined, 'no driver detail')
  t.match(failed, { name: `POST ${BASE}/takeover`, status: { code: SpanStatusCode.ERROR }, attributes: { 'http.response.status_code': 500, 'error.type': '500' } })
  t.notOk(JSON.stringify([down.attributes, failed.attributes]).includes('10.0.0.7'))
})

t.test('a 429 of the gateway\'s rate limit (before the API\'s own hooks run) is a span from the request\'s start', async (t) => {
  const exporter = registerSdk(t)
  const app = await gateway(t, { env: { RATE_LIMIT_OPERATOR_MAX: '1' } })
  t.equal((await operator(app, 'GET', 'demo/conversations')).statusCode, 200)
  const parent = traceparent()
  t.equal((await operator(app, 'GET', 'demo/conversations', undefined, { ...AUTH, traceparent: parent.header })).statusCode, 429)
  const [, limited] = await ended(exporter, 2)
  t.equal(limited.name, 'GET /api/v1/agents/:agentId/conversations')
  t.equal(limited.attributes['http.response.status_code'], 429)
  t.equal(limited.attributes['a2a.agent.id'], 'demo')
  t.equal(limited.status.code, SpanStatusCode.UNSET)
  t.equal(limited.parentSpanContext?.spanId, parent.spanId)
  const duration = limited.duration[0] * 1e9 + limited.duration[1]
  t.ok(duration >= 0, 'ends after it starts')
})

t.test('the live stream\'s span lasts until the stream closes', async (t) => {
  const exporter = registerSdk(t)
  const { base } = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY })
  const events = new InboxEvents(base, 'demo', `Bearer ${OPERATOR_KEY}`)
  t.teardown(() => { events.close() })
  t.equal((await events.response).status, 200)
  await events.ready()
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(operatorSpans(exporter).length, 0, 'open while the stream is')
  events.close()
  await events.ended
  const [stream] = await ended(exporter, 1)
  t.equal(stream.name, 'GET /api/v1/agents/:agentId/events')
  t.match(stream.attributes, { 'http.response.status_code': 200, 'a2a.agent.id': 'demo', 'url.scheme': 'http' })
  t.equal(stream.status.code, SpanStatusCode.UNSET)
  t.equal(operatorSpans(exporter).length, 1, 'ended once')
})

t.test('a client gone before the response: the span ends with no status code', async (t) => {
  const exporter = registerSdk(t)
  let answer: (() => void) | undefined
  const reached = new Promise<void>((resolve) => {
    answer = resolve
  })
  let release: (() => void) | undefined
  const inbox = {
    view: async () => {
      (answer as () => void)()
      await new Promise<void>((resolve) => { release = resolve })
      return undefined
    }
  } as unknown as Inbox
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(operatorApi, { apiKey: OPERATOR_KEY, agentIds: ['demo'], inbox })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const controller = new AbortController()
  const request = fetch(`http://127.0.0.1:${port}/api/v1/agents/demo/conversations/c-1`, { headers: AUTH, signal: controller.signal })
  await reached
  controller.abort()
  await t.rejects(request)
  const [gone] = await ended(exporter, 1)
  t.equal(gone.name, `GET ${BASE}`)
  t.equal(gone.attributes['http.response.status_code'], undefined, 'nothing was sent')
  t.equal(gone.status.code, SpanStatusCode.UNSET)
  ;(release as () => void)()
})

t.test('the helper: an unknown method is _OTHER (span HTTP), no route no http.route; with no SDK a no-op', async (t) => {
  const noSdk = startHttpServerSpan({ method: 'GET', route: '/x', scheme: 'http', headers: { traceparent: traceparent().header }, agentId: 'demo' }).span
  t.equal(noSdk.isRecording(), false, 'no SDK: the API\'s no-op span')
  t.equal(noSdk.spanContext().traceId, '00000000000000000000000000000000', 'not even the caller\'s context is read (no propagator)')
  endHttpServerSpan(noSdk, 500)

  const exporter = registerSdk(t)
  const other = startHttpServerSpan({ method: 'BREW', scheme: 'https', headers: {} }).span
  endHttpServerSpan(other, 405)
  const [span] = exporter.getFinishedSpans()
  t.equal(span.name, 'HTTP')
  t.strictSame(span.attributes, { 'http.request.method': '_OTHER', 'url.scheme': 'https', 'http.response.status_code': 405 })
})

t.test('with no SDK registered the API answers as before and nothing is recorded', async (t) => {
  const app = await gateway(t)
  t.equal((await operator(app, 'GET', 'demo/conversations', undefined, { ...AUTH, traceparent: traceparent().header })).statusCode, 200)
  t.equal((await operator(app, 'GET', 'nobody/conversations')).statusCode, 404)
  // An SDK registered now sees nothing of those requests (their spans were the no-op tracer's).
  const exporter = registerSdk(t)
  await new Promise((resolve) => setTimeout(resolve, 10))
  t.strictSame(exporter.getFinishedSpans(), [])
})
