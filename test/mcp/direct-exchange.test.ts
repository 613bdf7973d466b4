/**
 * The MCP door's fast path (src/mcp/direct-exchange.ts) answers exactly as the SDK's stateless Streamable HTTP
 * transport: the same requests sent to a door with the fast path and to one without it get the same status, media
 * type and JSON-RPC body — tool calls, tool lists, every kind of refusal, odd ids, odd headers. An SDK upgrade that
 * changes what either side answers fails here. Plus the exchange on its own: callers' ids kept apart on the shared
 * server, a caller gone cancels its request, nothing stays pending.
 */
import t from 'tap'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, LATEST_PROTOCOL_VERSION, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js'
import { DOORS, serveDoor, type Door } from '../fixtures/doors.js'
import { messageExecutor, taskExecutor } from '../fixtures/a2a-executors.js'
import { bookTable } from '../fixtures/demo-routines.js'
import { connectDirectExchange, eligibleRequest } from '../../src/mcp/direct-exchange.js'
import { a2aEndpoint, converse, mcpEndpoint } from '../../src/fastify.js'
import { converseRouter } from '../../src/express.js'
import Fastify from 'fastify'

const HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION
})

const ask = (id: unknown, args: unknown, extra: Record<string, unknown> = {}) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask_agent', arguments: args }, ...extra })

t.test('eligibleRequest: only what the stateless transport would hand to the server as one request', async (t) => {
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  t.same(eligibleRequest('POST', HEADERS, list), list)
  t.ok(eligibleRequest('POST', HEADERS, ask('a', { message: 'x' })), 'a string id')
  t.ok(eligibleRequest('POST', { ...HEADERS, 'content-type': 'application/json; charset=utf-8' }, list), 'JSON with parameters')
  t.ok(eligibleRequest('POST', { accept: '*/*, application/json, text/event-stream', 'content-type': 'application/json' }, list), 'no protocol version header')
  const refused: Array<[string, string | undefined, Record<string, unknown>, unknown]> = [
    ['GET', 'GET', HEADERS, list],
    ['no Accept', 'POST', { ...HEADERS, accept: undefined }, list],
    ['Accept without SSE', 'POST', { ...HEADERS, accept: 'application/json' }, list],
    ['Accept without JSON', 'POST', { ...HEADERS, accept: 'text/event-stream' }, list],
    ['not JSON', 'POST', { ...HEADERS, 'content-type': 'text/plain' }, list],
    ['no Content-Type', 'POST', { ...HEADERS, 'content-type': undefined }, list],
    ['an unsupported protocol version', 'POST', { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }, list],
    ['two protocol version headers', 'POST', { ...HEADERS, 'mcp-protocol-version': [LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION] }, list],
    ['a batch', 'POST', HEADERS, [list]],
    ['null', 'POST', HEADERS, null],
    ['a string', 'POST', HEADERS, 'tools/list'],
    ['initialize', 'POST', HEADERS, { ...list, method: 'initialize' }],
    ['ping', 'POST', HEADERS, { ...list, method: 'ping' }],
    ['a notification', 'POST', HEADERS, { jsonrpc: '2.0', method: 'tools/list' }],
    ['JSON-RPC 1.0', 'POST', HEADERS, { ...list, jsonrpc: '1.0' }],
    ['a fractional id', 'POST', HEADERS, { ...list, id: 1.5 }],
    ['a null id', 'POST', HEADERS, { ...list, id: null }],
    ['an object id', 'POST', HEADERS, { ...list, id: {} }],
    ['array params', 'POST', HEADERS, { ...list, params: [] }],
    ['null params', 'POST', HEADERS, { ...list, params: null }],
    ['string params', 'POST', HEADERS, { ...list, params: 'x' }]
  ]
  for (const [what, method, headers, body] of refused) t.equal(eligibleRequest(method, headers, body), undefined, what)
})

/** A real SDK Server whose tools/call handler waits until released or cancelled. */
function waitingServer () {
  const server = new Server({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {} } })
  const calls: Array<{ name: string, release: () => void, signal: AbortSignal }> = []
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    await new Promise<void>((resolve) => {
      calls.push({ name: request.params.name, release: resolve, signal: extra.signal })
      extra.signal.addEventListener('abort', () => resolve())
    })
    return { content: [{ type: 'text', text: `${request.params.name} for ${String(exchange.contextOf(extra.requestId))}` }] }
  })
  let exchange: Awaited<ReturnType<typeof connectDirectExchange<string>>>
  return {
    calls,
    connect: async () => (exchange = await connectDirectExchange<string>(server)),
    server
  }
}

const call = (id: string | number, name: string): JSONRPCRequest => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } })

t.test('the exchange: two callers with the same id each get their own reply; their contexts reach the handler', async (t) => {
  const { calls, connect, server } = waitingServer()
  const exchange = await connect()
  t.teardown(() => server.close())
  const first = exchange.exchange(call(1, 'a'), 'caller A')
  const second = exchange.exchange(call(1, 'b'), 'caller B')
  while (calls.length < 2) await new Promise((resolve) => setImmediate(resolve))
  t.equal(exchange.pending, 2)
  calls[1].release()
  calls[0].release()
  t.same(await second.reply, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'b for caller B' }] } })
  t.same(await first.reply, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'a for caller A' }] } })
  t.equal(exchange.pending, 0)
  first.cancel()
  t.equal(exchange.pending, 0, 'cancelling after the reply changes nothing')
})

t.test('the exchange: a caller gone cancels its request on the server (its handler sees the abort); nothing stays', async (t) => {
  const { calls, connect, server } = waitingServer()
  const exchange = await connect()
  t.teardown(() => server.close())
  const gone = exchange.exchange(call('x', 'slow'), 'gone')
  while (calls.length < 1) await new Promise((resolve) => setImmediate(resolve))
  gone.cancel()
  gone.cancel()
  t.equal(await gone.reply, undefined, 'no reply for a caller gone')
  t.equal(calls[0].signal.aborted, true, 'the handler was told')
  t.equal(exchange.pending, 0)
  // The server goes on answering.
  const next = exchange.exchange(call(2, 'next'), 'still here')
  while (calls.length < 2) await new Promise((resolve) => setImmediate(resolve))
  calls[1].release()
  t.match(await next.reply, { id: 2, result: { content: [{ text: 'next for still here' }] } })
})

/** The same bytes on the wire, except what differs per call anyway (generated ids, times). */
function normalized (text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
}

async function send (door: Door, agent: string, body: string, headers: Record<string, string | undefined>) {
  const defined = Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as Record<string, string>
  const response = await fetch(`${door.base}/mcp/a/${agent}`, { method: 'POST', headers: defined, body })
  return { status: response.status, type: response.headers.get('content-type'), body: normalized(await response.text()) }
}

const agents = [
  { id: 'echo', card: { name: 'Echo', description: 'Echoes what it is told.' }, executor: messageExecutor(), routines: [bookTable] },
  { id: 'worker', card: { name: 'Worker', description: 'Answers with a task and an artifact.' }, executor: taskExecutor() }
]

/** [what, agent, body, headers]: each sent to both doors. */
const CASES: Array<[string, string, unknown, Record<string, string | undefined>]> = [
  ['tools/list', 'echo', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, HEADERS],
  ['tools/list, string id, a cursor', 'echo', { jsonrpc: '2.0', id: 'list-1', method: 'tools/list', params: { cursor: 'x' } }, HEADERS],
  ['ask_agent', 'echo', ask(7, { message: 'hello' }), HEADERS],
  ['ask_agent continuing a conversation', 'echo', ask(8, { message: 'again', contextId: 'ctx-1' }), HEADERS],
  ['ask_agent answered by a task', 'worker', ask(9, { message: 'the report' }), HEADERS],
  ['ask_agent without message', 'echo', ask(10, {}), HEADERS],
  ['ask_agent with a number as message', 'echo', ask(11, { message: 5 }), HEADERS],
  ['ask_agent with a bad contextId', 'echo', ask(12, { message: 'x', contextId: 5 }), HEADERS],
  ['ask_agent with an unknown member', 'echo', ask(13, { message: 'x', extra: true }), HEADERS],
  ['a routine tool', 'echo', { jsonrpc: '2.0', id: 14, method: 'tools/call', params: { name: 'book_table', arguments: { date: '2026-12-24', partySize: 2 } } }, HEADERS],
  ['a routine tool with a bad slot', 'echo', { jsonrpc: '2.0', id: 15, method: 'tools/call', params: { name: 'book_table', arguments: { partySize: 'two' } } }, HEADERS],
  ['a routine tool continuing a conversation', 'echo', { jsonrpc: '2.0', id: 16, method: 'tools/call', params: { name: 'book_table', arguments: {}, _meta: { 'ai.radioso/conversation': { contextId: 'ctx-2' } } } }, HEADERS],
  ['a routine tool with bad _meta', 'echo', { jsonrpc: '2.0', id: 17, method: 'tools/call', params: { name: 'book_table', arguments: {}, _meta: { 'ai.radioso/conversation': 'ctx' } } }, HEADERS],
  ['an unknown tool', 'echo', { jsonrpc: '2.0', id: 18, method: 'tools/call', params: { name: 'nope', arguments: {} } }, HEADERS],
  ['tools/call without params', 'echo', { jsonrpc: '2.0', id: 19, method: 'tools/call' }, HEADERS],
  ['tools/call with a numeric name', 'echo', { jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 5 } }, HEADERS],
  ['tools/call with array arguments', 'echo', { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'ask_agent', arguments: ['x'] } }, HEADERS],
  ['tools/call with an id of 0', 'echo', ask(0, { message: 'zero' }), HEADERS],
  ['tools/call with an empty string id', 'echo', ask('', { message: 'empty id' }), HEADERS],
  ['tools/call with a negative id', 'echo', ask(-3, { message: 'negative' }), HEADERS],
  ['JSON with a charset', 'echo', { jsonrpc: '2.0', id: 22, method: 'tools/list' }, { ...HEADERS, 'content-type': 'application/json; charset=utf-8' }],
  ['no protocol version header', 'echo', { jsonrpc: '2.0', id: 23, method: 'tools/list' }, { ...HEADERS, 'mcp-protocol-version': undefined }],
  ['an older protocol version', 'echo', { jsonrpc: '2.0', id: 24, method: 'tools/list' }, { ...HEADERS, 'mcp-protocol-version': '2025-03-26' }],
  ['an unsupported protocol version', 'echo', { jsonrpc: '2.0', id: 25, method: 'tools/list' }, { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }],
  ['Accept without SSE', 'echo', { jsonrpc: '2.0', id: 26, method: 'tools/list' }, { ...HEADERS, accept: 'application/json' }],
  ['a batch', 'echo', [{ jsonrpc: '2.0', id: 27, method: 'tools/list' }], HEADERS],
  ['a fractional id', 'echo', { jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, HEADERS],
  ['a null id', 'echo', { jsonrpc: '2.0', id: null, method: 'tools/list' }, HEADERS],
  ['array params', 'echo', { jsonrpc: '2.0', id: 28, method: 'tools/list', params: [] }, HEADERS],
  ['a notification', 'echo', { jsonrpc: '2.0', method: 'notifications/initialized' }, HEADERS],
  ['ping', 'echo', { jsonrpc: '2.0', id: 29, method: 'ping' }, HEADERS],
  ['an unknown method', 'echo', { jsonrpc: '2.0', id: 30, method: 'resources/list' }, HEADERS]
]

for (const name of DOORS) {
  t.test(`${name}: with and without the fast path, every request gets the same reply`, async (t) => {
    const fast = await serveDoor(t, name, { agents })
    const plain = await serveDoor(t, name, { agents, directToolCalls: false })
    for (const [what, agent, body, headers] of CASES) {
      const text = JSON.stringify(body)
      const expected = await send(plain, agent, text, headers)
      t.same(await send(fast, agent, text, headers), expected, what)
    }
    // The contender's reply is what the transport's is: JSON with the caller's id.
    const listed = await send(fast, 'echo', JSON.stringify({ jsonrpc: '2.0', id: 'mine', method: 'tools/list' }), HEADERS)
    t.equal(listed.status, 200)
    t.equal(listed.type, 'application/json')
    t.match(JSON.parse(listed.body), { jsonrpc: '2.0', id: 'mine', result: { tools: [{ name: 'ask_agent' }, { name: 'book_table' }] } })
  })
}

t.test('directToolCalls must be a boolean, named in the error', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'echo', card: { name: 'Echo', description: 'Echo.' } }] })
  await app.register(a2aEndpoint, { agents: [{ id: 'echo', executor: messageExecutor() }] })
  await t.rejects(async () => {
    await app.register(mcpEndpoint, { directToolCalls: 'yes' as unknown as boolean })
    await app.ready()
  }, { name: 'InvalidOptionError', message: /directToolCalls/ })
  t.throws(() => converseRouter({ agents: [{ id: 'echo', card: { name: 'Echo', description: 'Echo.' } }], mcpDirectToolCalls: 1 as unknown as boolean }),
    { name: 'InvalidOptionError', message: /mcpDirectToolCalls/ })
})
