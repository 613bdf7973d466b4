/**
 * MCP JSON-RPC batches (the older revisions take arrays) against the caller's rate limit, on a listening gateway: each
 * message counts as one request (walk-ins per address, callers per caller), a batch larger than what is left of the
 * window is refused whole (HTTP 429, Retry-After, JSON-RPC -32000 RATE_LIMITED) and runs nothing, and MCP_MAX_BATCH
 * bounds a batch (HTTP 400 -32600). The batches are sent by the official v1 client's transport (the client line of
 * those revisions), which takes arrays; turns are counted by the gateway's own tool-call metric. In memory, and in
 * Redis shared by two instances when TEST_REDIS_URL is set.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ALICE_KEY, API_KEYS, BOB_KEY } from '../../fixtures/auth.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { parsePrometheus, valueOf } from '../../fixtures/prometheus-text.js'
import { DOORS, serveDoor } from '../../fixtures/doors.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'

type Json = Record<string, any>
const redisUrl = process.env.TEST_REDIS_URL
const METRICS_TOKEN = 'metrics-token-for-the-batch-test'
/** The revision that introduced batches (2025-06-18 removed them; the SDK's legacy leg still takes them). */
const REVISION = '2025-03-26'
const RATE_LIMITED = {
  code: -32000,
  data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMITED', domain: 'a2a-converse' }]
}

const agents = [{ id: 'echo', card: { name: 'Echo', description: 'Echoes what it is told.' }, executor: messageExecutor() }]
const RAW_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION }

let nextId = 0
/** A batch of `n` ask_agent calls. */
function askBatch (n: number): Json[] {
  return Array.from({ length: n }, () => ({
    jsonrpc: '2.0', id: ++nextId, method: 'tools/call', params: { name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } }
  }))
}

/**
 * The official v1 client's transport on `url`, sending batches: each POST's reply read to its end (a copy of the
 * response the transport reads), the tool results it carried counted.
 */
async function batchSender (t: Test, url: string, headers: Record<string, string> = {}) {
  const replies: Array<Promise<string>> = []
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      replies.push(response.clone().text())
      return response
    }
  })
  transport.onerror = () => {}
  await transport.start()
  transport.setProtocolVersion(REVISION)
  t.teardown(() => transport.close())
  return {
    /** Sends a batch; resolves the tool results its reply carried, or rejects with the transport's error (an HTTP status). */
    async send (batch: Json[]): Promise<number> {
      await transport.send(batch as never)
      const text = await (replies.at(-1) as Promise<string>)
      return text.split('\n').filter((line) => line.startsWith('data: ') && 'result' in JSON.parse(line.slice(6))).length
    }
  }
}

/** Turns the gateway ran through the MCP door (its tool-call counter). */
async function toolCalls (base: string): Promise<number> {
  const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  return valueOf(parsePrometheus(await response.text()), 'a2a_converse_mcp_tool_calls_total', { agent: 'demo', tool: 'ask_agent' })
}

/** A raw POST of a batch (its reply read whole). */
async function postBatch (base: string, batch: unknown, agent = 'demo') {
  const response = await fetch(`${base}/mcp/a/${agent}`, {
    method: 'POST',
    headers: RAW_HEADERS,
    body: JSON.stringify(batch)
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

t.test('in memory, a walk-in: 5 POSTs of 8 calls with RATE_LIMIT_MAX=12 run 8 turns, not 40', async (t) => {
  const { base } = await startGateway(t, { RATE_LIMIT_MAX: '12', RATE_LIMIT_WINDOW_MS: '60000', MCP_MAX_BATCH: '8', METRICS_TOKEN })
  const client = await batchSender(t, `${base}/mcp/a/demo`)
  t.equal(await client.send(askBatch(8)), 8, 'the first batch runs: 8 of 12')
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) {
    const refused = await client.send(askBatch(8)).then(() => 200, (error: StreamableHTTPError) => error.code as number)
    statuses.push(refused)
  }
  t.same(statuses, [429, 429, 429, 429], 'each later batch is more than is left: refused whole')
  t.equal(await toolCalls(base), 8, 'turns run: 8, at most RATE_LIMIT_MAX')
  const over = await postBatch(base, askBatch(2))
  t.equal(over.status, 429, 'a raw batch of 2 is still more than is left')
  t.ok(Number(over.headers.get('retry-after')) >= 1, 'Retry-After')
  t.match(JSON.parse(over.text), { jsonrpc: '2.0', id: null, error: RATE_LIMITED })
  t.match(JSON.parse(over.text).error.message, /^Rate limit exceeded; retry in \d+ s$/)
  t.equal(await toolCalls(base), 8, 'nothing ran')
})

t.test('in memory, per caller: a batch takes what is left exactly; another caller has a count of its own', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '60000', METRICS_TOKEN })
  const alice = await batchSender(t, `${base}/mcp/a/demo`, { authorization: `Bearer ${ALICE_KEY}` })
  t.equal(await alice.send(askBatch(1)), 1, 'a batch of one: its HTTP request is its only count')
  t.equal(await alice.send(askBatch(4)), 4)
  t.equal(await alice.send(askBatch(5)), 5, 'the rest of the window, to the message')
  await t.rejects(alice.send(askBatch(1)), { code: 429 }, 'then even a batch of one is refused (its HTTP request is over)')
  const bob = await batchSender(t, `${base}/mcp/a/demo`, { authorization: `Bearer ${BOB_KEY}` })
  t.equal(await bob.send(askBatch(10)), 10, 'Bob: the whole limit in one batch')
  t.equal(await toolCalls(base), 20)
})

t.test('MCP_MAX_BATCH bounds a batch: HTTP 400 -32600 past it, nothing runs, nothing counted but the request', async (t) => {
  const { base } = await startGateway(t, { RATE_LIMIT_MAX: '100', MCP_MAX_BATCH: '3', METRICS_TOKEN })
  const refused = await postBatch(base, askBatch(4))
  t.equal(refused.status, 400)
  t.same(JSON.parse(refused.text), { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: Batch must not exceed 3 messages' }, id: null })
  const client = await batchSender(t, `${base}/mcp/a/demo`)
  await t.rejects(client.send(askBatch(4)), { code: 400 }, 'the official client is told the same')
  t.equal(await client.send(askBatch(3)), 3, 'a batch at the bound runs')
  t.equal(await toolCalls(base), 3)
})

t.test('the default bound is 10; a batch larger than the whole limit is refused 429 (Retry-After: the window)', async (t) => {
  const { base } = await startGateway(t, { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '30000', METRICS_TOKEN })
  const tooLong = await postBatch(base, askBatch(11))
  t.same(JSON.parse(tooLong.text).error, { code: -32600, message: 'Invalid Request: Batch must not exceed 10 messages' })
  const overLimit = await postBatch(base, askBatch(10))
  t.equal(overLimit.status, 429, '10 messages, 5 allowed in a window')
  t.ok(Number(overLimit.headers.get('retry-after')) <= 30)
  t.equal(await toolCalls(base), 0)
})

t.test('RATE_LIMIT_MAX=0: batches are bounded, not counted', async (t) => {
  const { base } = await startGateway(t, { RATE_LIMIT_MAX: '0', METRICS_TOKEN })
  for (let i = 0; i < 3; i++) t.equal((await postBatch(base, askBatch(10))).status, 200)
  t.equal(await toolCalls(base), 30)
})

for (const name of DOORS) {
  t.test(`${name}: the library's options, checked; admitBatch is asked for batches only, before they run`, async (t) => {
    await t.rejects(serveDoor(t, name, { agents, mcpMaxBatch: 0 }), /maxBatch.*must be an integer from 1 to 100/)
    await t.rejects(serveDoor(t, name, { agents, mcpMaxBatch: 101 }), /maxBatch/)
    await t.rejects(serveDoor(t, name, { agents, mcpMaxBatch: 2.5 }), /maxBatch/)
    await t.rejects(serveDoor(t, name, { agents, mcpAdmitBatch: 'yes' as never }), /[aA]dmitBatch.*must be a function/)
    const asked: Array<{ messages: number, ip: unknown }> = []
    const door = await serveDoor(t, name, {
      agents,
      mcpMaxBatch: 2,
      mcpAdmitBatch: async (request, messages) => {
        asked.push({ messages, ip: (request as { ip: unknown }).ip })
        return { retryAfterSec: 7 }
      }
    })
    const refused = await postBatch(door.base, askBatch(2), 'echo')
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('retry-after'), '7')
    t.match(JSON.parse(refused.text), { id: null, error: { ...RATE_LIMITED, message: 'Rate limit exceeded; retry in 7 s' } })
    t.same(asked, [{ messages: 2, ip: '127.0.0.1' }], 'told the batch\'s length, with the door\'s own request')
    const single = await postBatch(door.base, askBatch(1)[0], 'echo')
    t.equal(single.status, 200, 'a single message is no batch: not asked')
    const tooLong = await postBatch(door.base, askBatch(3), 'echo')
    t.equal(tooLong.status, 400, 'past maxBatch: refused before admitBatch is asked')
    t.equal(asked.length, 1)
  })

  t.test(`${name}: the library's default bound is 10 messages`, async (t) => {
    const door = await serveDoor(t, name, { agents })
    const refused = await postBatch(door.base, askBatch(11), 'echo')
    t.equal(refused.status, 400)
    t.same(JSON.parse(refused.text), { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: Batch must not exceed 10 messages' }, id: null })
    const served = await postBatch(door.base, askBatch(10), 'echo')
    t.equal(served.status, 200)
    t.equal(served.text.split('\n').filter((line) => line.startsWith('data: ')).length, 10)
  })
}

if (redisUrl === undefined) {
  t.test('in Redis, shared by two instances', { skip: 'TEST_REDIS_URL not set (a Redis server: TEST_REDIS_URL=redis://127.0.0.1:6379 npm test)' }, async () => {})
} else {
  t.test('in Redis: two instances count a walk-in\'s batches in one count', async (t) => {
    const prefix = `a2a-converse-test:${process.pid}:${randomBytes(4).toString('hex')}:`
    const env = { RATE_LIMIT_MAX: '12', RATE_LIMIT_WINDOW_MS: '60000', REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, METRICS_TOKEN }
    const [{ base: A }, { base: B }] = await Promise.all([startGateway(t, env), startGateway(t, env)])
    const first = await postBatch(A, askBatch(10))
    t.equal(first.status, 200, 'A: 10 of 12')
    const overOnB = await postBatch(B, askBatch(3))
    t.equal(overOnB.status, 429, 'B: 3 more is more than is left (the HTTP request took the 11th)')
    t.match(JSON.parse(overOnB.text), { error: RATE_LIMITED })
    t.equal((await postBatch(B, askBatch(1))).status, 200, 'B: the 12th')
    t.equal((await postBatch(A, askBatch(1))).status, 429, 'A: over')
    t.equal(await toolCalls(A) + await toolCalls(B), 11, '11 turns for a limit of 12 (one request refused after its HTTP count)')
  })
}
