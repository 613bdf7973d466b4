/**
 * Rate limits on a real listening gateway: per caller on an agent that requires a credential, per client address
 * otherwise and on the operator API (wrong-key guesses included); over the limit HTTP 429 with Retry-After and, on
 * the A2A door, a JSON-RPC body; the next window serves again; the MCP door counts against the same limit on every
 * client line; one count per caller (walk-ins: per address) across every door and binding, gRPC included. In memory,
 * and in Redis shared by two instances when TEST_REDIS_URL is set.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import * as grpc from '@grpc/grpc-js'
import { ListTasksRequest } from '@a2a-js/sdk'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { ALICE_KEY, API_KEYS, BOB_KEY, call } from '../../fixtures/auth.js'
import { logLines, startGateway } from '../../fixtures/gateway-helpers.js'
import { CLIENT_LINES, connectMcp, lineName, MODERN_REVISION } from '../../fixtures/mcp-clients.js'
import { rawGrpcClient, startGrpcGateway } from '../../fixtures/grpc.js'
import { pino } from 'pino'
import { openRateLimits } from '../../../src/gateway/rate-limits.js'
import { parsePrometheus, valueOf } from '../../fixtures/prometheus-text.js'

type Json = Record<string, any>
const redisUrl = process.env.TEST_REDIS_URL
const OPERATOR_KEY = 'operator-key-for-the-rate-limit-test'
const METRICS_TOKEN = 'metrics-token-for-the-rate-limit-test'
const RATE_LIMITED = {
  code: -32000,
  data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMITED', domain: 'a2a-converse' }]
}

/** Waits out the window the 429 named (Retry-After seconds). */
async function waitOut (response: { headers: Headers }): Promise<void> {
  await sleep(Number(response.headers.get('retry-after')) * 1000 + 100)
}

t.test('in memory: per caller, 429 with Retry-After and a JSON-RPC body, then the next window', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '1000' })
  for (let i = 0; i < 3; i++) t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).status, 200, `Alice's request ${i + 1}`)
  const over = await call(base, 'ListTasks', {}, ALICE_KEY)
  t.equal(over.status, 429, "Alice's fourth in the window")
  t.ok(Number(over.headers.get('retry-after')) >= 1, 'Retry-After in seconds')
  t.match(over.body, { jsonrpc: '2.0', id: null, error: RATE_LIMITED })
  t.match(over.body.error.message, /^Rate limit exceeded; retry in \d+ s$/)
  t.equal((await call(base, 'ListTasks', {}, BOB_KEY)).status, 200, 'Bob has a count of his own')
  await waitOut(over)
  t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).status, 200, 'the next window serves Alice again')
})

t.test('in memory: requests without a valid credential count per client address, before authentication', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '1000' })
  t.equal((await call(base, 'ListTasks', {})).status, 401)
  t.equal((await call(base, 'ListTasks', {}, 'wrong-key-0123456789abcdef')).status, 401)
  const over = await call(base, 'ListTasks', {}, 'another-wrong-key-0123456789')
  t.equal(over.status, 429, 'a third guess from the address is refused unanswered')
  t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).status, 200, 'a caller with a key is counted as the caller')
})

t.test('in memory: the operator API counts per address, wrong keys included', async (t) => {
  const { base } = await startGateway(t, {
    OPERATOR_API_KEY: OPERATOR_KEY, RATE_LIMIT_OPERATOR_MAX: '3', RATE_LIMIT_WINDOW_MS: '1000'
  })
  const operator = (key: string) => fetch(`${base}/api/v1/agents/demo/conversations`, { headers: { authorization: `Bearer ${key}` } })
  for (let i = 0; i < 3; i++) t.equal((await operator(`guess-${i}-0123456789abcdef`)).status, 401, `guess ${i + 1}`)
  const over = await operator(OPERATOR_KEY)
  t.equal(over.status, 429, 'the fourth request in the window, even with the right key')
  t.ok(over.headers.get('retry-after'))
  t.match(await over.json(), { statusCode: 429, error: 'Too Many Requests', message: /^Rate limit exceeded/ })
  t.equal((await call(base, 'ListTasks', {})).status, 200, 'the A2A door has its own count')
  await waitOut(over)
  t.equal((await operator(OPERATOR_KEY)).status, 200, 'the next window serves the operator again')
})

t.test('RATE_LIMIT_MAX=0 switches the limit off', async (t) => {
  const { base } = await startGateway(t, { RATE_LIMIT_MAX: '0', RATE_LIMIT_WINDOW_MS: '60000' })
  for (let i = 0; i < 5; i++) t.equal((await call(base, 'ListTasks', {})).status, 200)
})

if (redisUrl === undefined) {
  t.test('in Redis, shared by two instances', { skip: 'TEST_REDIS_URL not set (a Redis server: TEST_REDIS_URL=redis://127.0.0.1:6379 npm test)' }, async () => {})
} else {
  t.test('in Redis: two instances share one count per caller; the next window serves again', async (t) => {
    const prefix = `a2a-converse-test:${process.pid}:${randomBytes(4).toString('hex')}:`
    const env = { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '1000', REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix }
    const [{ base: A }, { base: B }] = await Promise.all([startGateway(t, env), startGateway(t, env)])
    t.equal((await call(A, 'ListTasks', {}, ALICE_KEY)).status, 200)
    t.equal((await call(B, 'ListTasks', {}, ALICE_KEY)).status, 200)
    t.equal((await call(A, 'ListTasks', {}, ALICE_KEY)).status, 200)
    const over = await call(B, 'ListTasks', {}, ALICE_KEY)
    t.equal(over.status, 429, 'the fourth, on the other instance: one count')
    t.match(over.body, { error: RATE_LIMITED })
    const redis = new Redis(redisUrl)
    t.teardown(() => redis.quit())
    const keys = await redis.keys(`${prefix}*`)
    t.ok(keys.length > 0 && keys.every((key) => key.startsWith(`${prefix}a2a:`)), 'the counts are under the configured prefix')
    t.notOk(keys.some((key) => key.includes(ALICE_KEY)), 'keyed by caller id, never by credential')
    await waitOut(over)
    t.equal((await call(B, 'ListTasks', {}, ALICE_KEY)).status, 200, 'recovered')
  })
}

t.test('an unreachable Redis: requests are served, a warning says why', async (t) => {
  const log = logLines()
  const { base } = await startGateway(t, {
    RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000', REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'warn'
  }, { loggerStream: log.stream })
  for (let i = 0; i < 3; i++) t.equal((await call(base, 'ListTasks', {})).status, 200)
  // ioredis keeps trying to connect: one warning, however many failures.
  await sleep(500)
  t.equal(log.lines.filter((line: Json) => line.msg === 'rate limits: Redis is unreachable; requests are not limited until it is back').length, 1)
  t.ok(log.lines.some((line: Json) => line.msg === 'rate limits: Redis is unreachable; requests are not limited until it is back'))
})

for (const line of CLIENT_LINES) {
  t.test(`in memory, ${lineName(line)}: the MCP door counts against the caller's limit; over it, HTTP 429`, async (t) => {
    // 3 HTTP requests connect the client line (v2: server/discover; v1: initialize, initialized, the GET refused),
    // one lists the tools; the limit leaves one tool call.
    const connecting = line.revision === MODERN_REVISION ? 1 : 3
    const max = connecting + 2
    const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: String(max), RATE_LIMIT_WINDOW_MS: '60000' })
    const client = await connectMcp(t, `${base}/mcp/a/demo`, line, { headers: { authorization: `Bearer ${ALICE_KEY}` } })
    await client.listTools()
    t.equal((await client.callTool({ name: 'ask_agent', arguments: { message: 'hi' } })).isError, false, 'within the limit')
    await t.rejects(client.callTool({ name: 'ask_agent', arguments: { message: 'again' } }), /Rate limit exceeded; retry in \d+ s/, 'over it: the A2A door\'s JSON-RPC refusal')
    t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).status, 429, 'one count for both doors')
    t.equal((await call(base, 'ListTasks', {}, BOB_KEY)).status, 200, 'Bob has a count of his own')
  })
}

/**
 * One request at each door a caller can reach, each answered (its HTTP status; gRPC: 200 for OK, 429 for
 * RESOURCE_EXHAUSTED, else its code): JSON-RPC 1.0, HTTP+JSON, JSON-RPC 0.3, MCP, gRPC. `grpcTarget` names the gRPC listener (the same gateway or another instance).
 */
function doorsOf (base: string, grpcTarget: string, t: Test, key: string) {
  const bearer = { authorization: `Bearer ${key}` }
  const raw = rawGrpcClient(t, grpcTarget)
  const http = async (url: string, init: RequestInit): Promise<number> => {
    const response = await fetch(url, init)
    await response.arrayBuffer()
    return response.status
  }
  return {
    'JSON-RPC': async () => (await call(base, 'ListTasks', {}, key)).status,
    'HTTP+JSON': async () => await http(`${base}/a2a/demo/rest/tasks`, { headers: { 'a2a-version': '1.0', ...bearer } }),
    'JSON-RPC 0.3': async () => await http(`${base}/a2a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '0.3', ...bearer },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'no-such-task' } })
    }),
    MCP: async () => await http(`${base}/mcp/a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...bearer },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    }),
    gRPC: async () => {
      const reply = await raw.unary('listTasks', ListTasksRequest.fromJSON({ tenant: 'demo' }), { 'a2a-version': '1.0', ...bearer })
      return reply.error === undefined ? 200 : reply.error.code === grpc.status.RESOURCE_EXHAUSTED ? 429 : reply.error.code
    }
  }
}

t.test('in memory: one count per caller across every door and binding (JSON-RPC, HTTP+JSON, 0.3, MCP, gRPC)', async (t) => {
  const { base, target } = await startGrpcGateway(t, {
    A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000', METRICS_TOKEN
  })
  const alice = doorsOf(base, target, t, ALICE_KEY)
  for (const [door, ask] of Object.entries(alice)) t.equal(await ask(), 200, `${door}: one of Alice's 5`)
  for (const [door, ask] of Object.entries(alice)) t.equal(await ask(), 429, `${door}: Alice is over at every door`)
  const bob = doorsOf(base, target, t, BOB_KEY)
  t.equal(await bob.gRPC(), 200, 'Bob has a count of his own')
  const metrics = parsePrometheus(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())
  t.equal(valueOf(metrics, 'a2a_converse_rate_limited_total', { door: 'a2a' }), 4, 'refusals at the HTTP doors')
  t.equal(valueOf(metrics, 'a2a_converse_rate_limited_total', { door: 'a2a-grpc' }), 1, 'and at the gRPC door, one count between them')
})

t.test('in memory: a walk-in counts per address across HTTP and gRPC', async (t) => {
  const { base, target } = await startGrpcGateway(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
  const walkIn = doorsOf(base, target, t, 'no-credential')
  // A walk-in lists nothing without a contextId: answered (an error), not refused.
  t.not(await walkIn.gRPC(), 429)
  t.not(await walkIn['JSON-RPC'](), 429)
  t.equal(await walkIn.gRPC(), 429, 'the third request from the address, whichever door')
  t.equal(await walkIn.MCP(), 429)
})

if (redisUrl !== undefined) {
  t.test('in Redis: one count per caller across instances, HTTP on one and gRPC on the other', async (t) => {
    const prefix = `a2a-converse-test:${process.pid}:${randomBytes(4).toString('hex')}:`
    const env = { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000', REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix }
    const [A, B] = await Promise.all([startGrpcGateway(t, env), startGrpcGateway(t, env)])
    const onA = doorsOf(A.base, B.target, t, ALICE_KEY)
    for (const door of ['JSON-RPC', 'HTTP+JSON', 'JSON-RPC 0.3', 'MCP'] as const) t.equal(await onA[door](), 200, `${door} on A`)
    t.equal(await onA.gRPC(), 200, 'gRPC on B: the fifth')
    t.equal(await onA.gRPC(), 429, 'gRPC on B: over')
    t.equal(await onA['JSON-RPC'](), 429, 'HTTP on A: over')
    const redis = new Redis(redisUrl)
    t.teardown(() => redis.quit())
    t.same(await redis.keys(`${prefix}*`), [`${prefix}a2a:caller:alice`], 'one key for Alice, whatever the door')
  })
}

t.test('in memory: at most 10,000 keys per limit, the least recently used forgotten first', async (t) => {
  const limits = openRateLimits({ max: 1, operatorMax: 1, windowMs: 60_000, redisKeyPrefix: 'unused:' }, pino({ level: 'silent' }), () => {})
  t.teardown(() => limits.close())
  const limit = limits.limit('a2a', 1)
  t.equal(await limit.take('old'), undefined)
  t.equal(await limit.take('kept'), undefined)
  t.same(await limit.take('old'), { retryAfterSec: 60 }, 'counted: over')
  t.same(await limit.take('kept', 1), { retryAfterSec: 60 }, 'counted: over (and the most recently used)')
  for (let i = 0; i < 9_999; i++) await limit.take(`address:${i}`)
  t.ok((await limit.take('kept'))?.retryAfterSec, 'a more recently used key is still counted')
  t.equal(await limit.take('old'), undefined, 'the 10,001st key pushed out the least recently used: a fresh window')
})
