/**
 * GET /metrics (prom-client's Prometheus text): off without METRICS_TOKEN, Bearer-protected with it, on a listener of
 * its own with METRICS_PORT; after a scripted set of real requests each counter has moved by exactly what was done;
 * the series stay the same over 10,000 fresh contexts.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { InMemoryTaskStore } from '@a2a-js/sdk/server'
import { Client, gateway, operator, SseStream, URI } from '../fixtures/conversation-gateway.js'
import { parsePrometheus, valueOf, type Sample } from '../fixtures/prometheus-text.js'
import { StoreUnavailableError } from '../../packages/a2a-converse/src/stores/errors.js'

// 10,000 turns in one test (the cardinality check): 34 s on a loaded 2-core machine, the file past tap's 60 s default.
t.setTimeout(300_000)

const TOKEN = 'metrics-token-0123456789'
const BEARER = { authorization: `Bearer ${TOKEN}` }
const P = 'a2a_converse_'
const MCP_REVISION = '2026-07-28'

async function scrape (app: FastifyInstance): Promise<Sample[]> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: BEARER })
  if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`)
  return parsePrometheus(response.body)
}

t.test('off without METRICS_TOKEN: 404 with a JSON body saying how to switch it on', async (t) => {
  const app = await gateway(t)
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: BEARER })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { statusCode: 404, error: 'Not Found', message: 'metrics are off: start the gateway with METRICS_TOKEN set to switch them on' })
})

t.test('with METRICS_TOKEN: 401 without the token or with another, the text with it', async (t) => {
  const app = await gateway(t, { env: { METRICS_TOKEN: TOKEN } })
  for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }]) {
    const refused = await app.inject({ method: 'GET', url: '/metrics', headers })
    t.equal(refused.statusCode, 401, JSON.stringify(headers))
    t.equal(refused.headers['www-authenticate'], 'Bearer realm="metrics"')
    t.equal(refused.json().error, 'Unauthorized')
  }
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: BEARER })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  t.equal(response.headers['cache-control'], 'no-store')
  const samples = parsePrometheus(response.body)
  t.ok(samples.some((sample) => sample.name === 'process_cpu_user_seconds_total'), 'process metrics')
  t.ok(samples.some((sample) => sample.name === 'nodejs_eventloop_lag_seconds'), 'Node.js metrics')
  t.match(response.body, /# TYPE a2a_converse_requests_total counter/)
})

t.test('a scripted set of requests: each counter moves by exactly what was done', async (t) => {
  const app = await gateway(t, { env: { METRICS_TOKEN: TOKEN } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const before = await scrape(app)
  t.equal(valueOf(before, `${P}requests_total`), 0, 'nothing counted yet')
  const client = new Client(t, app)

  // Three JSON-RPC turns (two routine starts, one question), one HTTP+JSON turn; their answers' envelopes say what
  // the answers counter must hold.
  const expected = new Map<string, number>()
  const countAnswer = (reply: any): void => {
    const verdict = reply.metadata[URI].answerCoverage
    const key = JSON.stringify([verdict.availability, verdict.coverage ?? 'none', verdict.reason ?? 'none'])
    expected.set(key, (expected.get(key) ?? 0) + 1)
  }
  const routine = await client.task('book a table')
  countAnswer(routine.status.message)
  countAnswer((await client.task('book a table')).status.message)
  const question = await client.send('How long do I have to return an order?')
  countAnswer(question.message ?? question.task.status.message)
  const rest = await app.inject({
    method: 'POST',
    url: '/a2a/demo/rest/message:send',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    payload: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Do you ship abroad?' }] } })
  })
  countAnswer(rest.json().message ?? rest.json().task.status.message)
  // Two errors: an unknown task, an unknown method.
  t.equal((await client.call('GetTask', { id: randomUUID() })).error.code, -32001)
  t.equal((await client.call('Mine', {})).error.code, -32601)
  // One MCP tool call (a turn of its own, binding mcp) and one call of a tool the agent does not have.
  // A 2026-07-28 tools/call as the v2 client sends it (headers and the `_meta` envelope): a JSON reply.
  const mcp = (name: string, args: unknown) => app.inject({
    method: 'POST',
    url: '/mcp/a/demo',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_REVISION, 'mcp-method': 'tools/call', 'mcp-name': name },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MCP_REVISION, 'io.modelcontextprotocol/clientInfo': { name: 'metrics-test', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {} }
      }
    })
  })
  const asked = await mcp('ask_agent', { message: 'How long do I have to return an order?' })
  countAnswer({ metadata: { [URI]: asked.json().result.structuredContent } })
  await mcp('no_such_tool', {})
  // A takeover, a held stream that stays open, a person's reply, a release.
  t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/takeover`)).statusCode, 200)
  const held = new SseStream(`${base}/a2a/demo`, { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI }, {
    jsonrpc: '2.0', id: 's', method: 'SendStreamingMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'a person, please' }], taskId: routine.id, contextId: routine.contextId } }
  })
  await held.next((event: any) => event.result?.statusUpdate?.status?.message?.metadata?.[URI]?.ownership?.suppressed === true)
  const during = await scrape(app)
  t.equal(valueOf(during, `${P}open_streams`, { agent: 'demo', binding: 'jsonrpc' }), 1, 'one stream open')
  t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/messages`, { text: 'Sam here.' })).statusCode, 201)
  t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/release`)).statusCode, 200)
  await held.done

  const after = await scrape(app)
  const requests = (labels: Record<string, string>) => valueOf(after, `${P}requests_total`, { agent: 'demo', ...labels })
  t.equal(requests({ binding: 'jsonrpc', method: 'SendMessage', code: 'ok' }), 3)
  t.equal(requests({ binding: 'http+json', method: 'SendMessage', code: 'ok' }), 1)
  t.equal(requests({ binding: 'mcp', method: 'SendMessage', code: 'ok' }), 1)
  t.equal(requests({ binding: 'jsonrpc', method: 'GetTask', code: '-32001' }), 1)
  t.equal(requests({ binding: 'jsonrpc', method: 'unknown', code: '-32601' }), 1)
  t.equal(requests({ binding: 'jsonrpc', method: 'SendStreamingMessage', code: 'ok' }), 1)
  t.equal(valueOf(after, `${P}requests_total`), 8, 'nothing else')
  t.equal(valueOf(after, `${P}request_duration_seconds_count`, { agent: 'demo', method: 'SendMessage' }), 5)
  t.equal(valueOf(after, `${P}request_duration_seconds_count`), 8)
  t.equal(valueOf(after, `${P}open_streams`, { agent: 'demo', binding: 'jsonrpc' }), 0, 'the stream ended')
  t.equal(valueOf(after, `${P}mcp_tool_calls_total`, { agent: 'demo', tool: 'ask_agent' }), 1)
  t.equal(valueOf(after, `${P}mcp_tool_calls_total`, { agent: 'demo', tool: 'unknown' }), 1, 'a tool name the agent does not have is one label value')
  // The stream's answer: its last event's envelope (the release).
  const streamed = held.events.map((event: any) => event.result?.statusUpdate?.status?.message ?? event.result?.task?.status?.message).filter((message: any) => message?.metadata?.[URI] !== undefined)
  countAnswer(streamed[streamed.length - 1])
  for (const [key, count] of expected) {
    const [availability, coverage, reason] = JSON.parse(key) as string[]
    t.equal(valueOf(after, `${P}answers_total`, { agent: 'demo', availability, coverage, reason }), count, `answers ${key}`)
  }
  t.equal(valueOf(after, `${P}answers_total`), 6, 'one answer per turn')
  t.equal(valueOf(after, `${P}routine_turns_total`, { agent: 'demo', status: 'waiting_for_input' }), 2, 'the two routine starts')
  t.equal(valueOf(after, `${P}takeovers_total`, { agent: 'demo' }), 1)
  t.equal(valueOf(after, `${P}human_replies_total`, { agent: 'demo' }), 1)
  t.equal(valueOf(after, `${P}releases_total`, { agent: 'demo' }), 1)
  t.equal(valueOf(after, `${P}store_errors_total`), 0)
  t.equal(valueOf(after, `${P}rate_limited_total`), 0)
  t.equal(valueOf(after, `${P}push_deliveries_total`), 0)
  // Unknown conversations are not counted as takeovers, replies or releases.
  await operator(app, 'POST', `demo/conversations/${randomUUID()}/takeover`)
  await operator(app, 'POST', `demo/conversations/${randomUUID()}/release`)
  await operator(app, 'POST', `demo/conversations/${randomUUID()}/messages`, { text: 'nobody' })
  const unchanged = await scrape(app)
  t.equal(valueOf(unchanged, `${P}takeovers_total`) + valueOf(unchanged, `${P}releases_total`) + valueOf(unchanged, `${P}human_replies_total`), 3)
})

t.test('rate-limit refusals by door, store errors by agent', async (t) => {
  const limited = await gateway(t, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_MAX: '1', RATE_LIMIT_OPERATOR_MAX: '1' } })
  const client = new Client(t, limited)
  await client.call('GetTask', { id: randomUUID() })
  const refused = await limited.inject({ method: 'POST', url: '/a2a/demo', headers: client.headers(), payload: '{}' })
  t.equal(refused.statusCode, 429)
  await operator(limited, 'GET', 'demo/conversations')
  t.equal((await operator(limited, 'GET', 'demo/conversations')).statusCode, 429)
  const samples = await scrape(limited)
  t.equal(valueOf(samples, `${P}rate_limited_total`, { door: 'a2a' }), 1)
  t.equal(valueOf(samples, `${P}rate_limited_total`, { door: 'operator' }), 1)

  // A task store that cannot reach its database.
  class UnreachableStore extends InMemoryTaskStore {
    override async load (): Promise<undefined> { throw new StoreUnavailableError(new Error('connection refused')) }
  }
  const failing = await gateway(t, { env: { METRICS_TOKEN: TOKEN }, taskStores: { demo: new UnreachableStore() } })
  const answer = await new Client(t, failing).call('GetTask', { id: randomUUID() })
  t.equal(answer.error.code, -32603)
  const failed = await scrape(failing)
  t.equal(valueOf(failed, `${P}store_errors_total`, { agent: 'demo' }), 1)
  t.equal(valueOf(failed, `${P}requests_total`, { method: 'GetTask', code: '-32603' }), 1)
})

t.test('METRICS_PORT: /metrics on a listener of its own; the gateway\'s port says where it is', async (t) => {
  const app = await gateway(t, { env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', HOST: '127.0.0.1' } })
  await app.ready()
  const base = `http://127.0.0.1:${app.metricsPort as number}`
  const scraped = await fetch(`${base}/metrics?x=1`, { headers: BEARER })
  t.equal(scraped.status, 200)
  t.match(await scraped.text(), /# TYPE a2a_converse_requests_total counter/)
  t.equal((await fetch(`${base}/metrics`)).status, 401)
  const other = await fetch(`${base}/health/live`)
  t.equal(other.status, 404)
  t.same(await other.json(), { statusCode: 404, error: 'Not Found', message: 'only GET /metrics is served here' })
  t.equal((await fetch(`${base}/metrics`, { method: 'POST', headers: BEARER })).status, 404)
  const elsewhere = await app.inject({ method: 'GET', url: '/metrics', headers: BEARER })
  t.equal(elsewhere.statusCode, 404)
  t.equal(elsewhere.json().message, 'metrics are served on the METRICS_PORT listener')
})

t.test('cardinality stays flat over 10,000 fresh contexts', async (t) => {
  const app = await gateway(t, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '20000', MEMORY_MAX_CONVERSATIONS: '20000' } })
  const send = async (): Promise<void> => {
    const response = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'How long do I have to return an order?' }] } } })
    })
    if (response.json().error !== undefined) throw new Error(response.body)
  }
  const series = (samples: Sample[]) => samples.filter((sample) => sample.name.startsWith(P)).map((sample) => `${sample.name}${JSON.stringify(sample.labels)}`).sort()
  for (let i = 0; i < 10; i++) await send()
  const first = series(await scrape(app))
  for (let i = 10; i < 10_000; i++) await send()
  const last = await scrape(app)
  t.strictSame(series(last), first, 'the same series after 10,000 contexts as after 10')
  t.equal(valueOf(last, `${P}requests_total`, { method: 'SendMessage', code: 'ok' }), 10_000)
})
