/** The gateway's logs: pino JSON, a request id per request (x-request-id honoured and echoed), no content at info. */
import t from 'tap'
import { logLines, rpc, SEED_BODY, SEED_HEADERS, startGateway, URI, userMessage } from '../fixtures/gateway-helpers.js'
import { contextIdOf } from '../fixtures/context-ids.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CTX = contextIdOf('ctx-logs')

t.test('one request id per request: generated, or the incoming x-request-id, echoed and on every line', async (t) => {
  const log = logLines()
  const { base } = await startGateway(t, { LOG_LEVEL: 'info' }, { loggerStream: log.stream })

  const honoured = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: { ...SEED_HEADERS, 'x-request-id': 'lb-7f3a' }, body: SEED_BODY })
  t.equal(honoured.status, 200)
  t.equal(honoured.headers.get('x-request-id'), 'lb-7f3a', 'the incoming id is echoed')
  await honoured.text()

  const first = await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)
  const second = await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)
  const ids = [first.headers.get('x-request-id'), second.headers.get('x-request-id')]
  t.match(ids[0], UUID, 'a generated id is a UUID')
  t.match(ids[1], UUID)
  t.not(ids[0], ids[1], 'each request gets its own')
  const oversized = await fetch(`${base}/health/live`, { headers: { 'x-request-id': 'x'.repeat(129) } })
  t.match(oversized.headers.get('x-request-id'), UUID, 'an over-long incoming id is replaced')
  const odd = await fetch(`${base}/health/live`, { headers: { 'x-request-id': 'a b{"c"}' } })
  t.match(odd.headers.get('x-request-id'), UUID, 'an id with odd characters is replaced')
  const missing = await fetch(`${base}/a2a/nobody/.well-known/agent-card.json`)
  t.equal(missing.status, 404)
  t.match(missing.headers.get('x-request-id'), UUID, 'error replies carry it too')

  for (const line of log.lines) {
    t.type(line.level, 'number')
    t.type(line.time, 'number')
    t.type(line.msg, 'string')
  }
  const byId = (id: string | null) => log.lines.filter((line) => line.reqId === id)
  t.same(byId('lb-7f3a').map((line) => line.msg), ['incoming request', 'request completed'])
  t.match(byId('lb-7f3a')[0], { level: 30, req: { method: 'POST', url: '/a2a/demo' } })
  t.match(byId('lb-7f3a')[1], { level: 30, res: { statusCode: 200 } })
  t.same(byId(ids[0]).map((line) => line.msg), ['incoming request', 'request completed'])
  t.same(byId(ids[1]).map((line) => line.msg), ['incoming request', 'request completed'])
  t.ok(log.lines.some((line) => line.msg.startsWith('Server listening at')), 'the listen address is logged')
})

t.test('message text and envelope content are never logged at info', async (t) => {
  const log = logLines()
  const operatorKey = 'operator-key-for-the-log-test'
  const { base } = await startGateway(t, { LOG_LEVEL: 'info', OPERATOR_API_KEY: operatorKey }, { loggerStream: log.stream })
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/a2a/demo`, { method: 'POST', headers: { ...SEED_HEADERS, ...headers }, body })

  // Knowledge answer (seed), streamed answer, a routine with slot values, an invalid request, an operator reply.
  await (await post(SEED_BODY)).text()
  await (await post(rpc('SendStreamingMessage', { message: userMessage('Secret-Question-Alpha about warranty length?') }))).text()
  const started = await (await post(rpc('SendMessage', { message: userMessage('book a table', { contextId: CTX }) }))).json() as any
  t.equal(started.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  await (await post(rpc('SendMessage', { message: userMessage('date=2031-02-03, partySize=4, notes=Secret-Note-Bravo', { contextId: CTX }) }))).text()
  await (await post(rpc('SendMessage', { message: { messageId: 'x', role: 'ROLE_USER', parts: [] }, metadata: { note: 'Secret-Meta-Charlie' } }))).text()
  const operator = { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' }
  const conversation = `${base}/api/v1/agents/demo/conversations/${CTX}`
  t.equal((await fetch(`${conversation}/takeover`, { method: 'POST', headers: { authorization: operator.authorization } })).status, 200)
  const reply = await fetch(`${conversation}/messages`, { method: 'POST', headers: operator, body: JSON.stringify({ text: 'Secret-Human-Delta' }) })
  t.equal(reply.status, 201)

  const output = log.raw.join('')
  t.ok(log.lines.length > 10, 'the requests were logged')
  for (const secret of [
    'How long do I have to return an order', '30 days', 'Returns policy', 'Warranty', 'Secret-Question-Alpha',
    'Secret-Note-Bravo', '2031-02-03', 'Secret-Meta-Charlie', 'Secret-Human-Delta', 'sufficient_evidence', 'answerCoverage',
    'citations', URI, operatorKey
  ]) {
    t.notOk(output.includes(secret), `"${secret}" is not in the log`)
  }
  t.notOk(log.lines.some((line) => line.level >= 40), 'nothing at warn or above for these requests')
})

t.test('LOG_LEVEL is the pino level: warn drops the per-request lines', async (t) => {
  const log = logLines()
  const { base } = await startGateway(t, { LOG_LEVEL: 'warn' }, { loggerStream: log.stream })
  await (await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: SEED_BODY })).text()
  t.same(log.lines, [])
})

t.test('TRUST_PROXY=true with an agent taking walk-ins: a warning at start (X-Forwarded-For then picks the address)', async (t) => {
  const TRUST_WARNING = /^TRUST_PROXY=true believes any client's X-Forwarded-For: a walk-in picks its own address/
  const warnings = async (env: Record<string, string>) => {
    const log = logLines()
    const gateway = await startGateway(t, { LOG_LEVEL: 'warn', ...env }, { loggerStream: log.stream })
    return { ...gateway, lines: log.lines.filter((line) => line.level === 40 && TRUST_WARNING.test(line.msg)) }
  }
  const trusting = await warnings({ TRUST_PROXY: 'true', RATE_LIMIT_MAX: '1' })
  t.equal(trusting.lines.length, 1, 'one warning')
  t.same(trusting.lines[0].walkIns, ['demo'], 'naming the agents that take walk-ins')
  t.match(trusting.lines[0].msg, /per-address limits \(rate, streams, open tasks\)\. Set TRUST_PROXY to the load balancer's addresses or CIDRs$/)
  // What it warns of: each forged address has a count of its own.
  for (const address of ['203.0.113.1', '203.0.113.2']) {
    const response = await fetch(`${trusting.base}/a2a/demo`, { method: 'POST', headers: { ...SEED_HEADERS, 'x-forwarded-for': address }, body: rpc('ListTasks', {}) })
    t.equal(response.status, 200, `X-Forwarded-For: ${address} gets a count of its own`)
    await response.text()
  }
  t.same((await warnings({ TRUST_PROXY: '127.0.0.1/32' })).lines, [], 'the balancer\'s addresses: no warning')
  t.same((await warnings({ TRUST_PROXY: 'true', A2A_API_KEYS: 'alice:alice-key-0123456789abcdef', A2A_AUTH: 'required' })).lines, [], 'no walk-ins: no warning')
})
