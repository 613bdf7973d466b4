/**
 * The MCP door's fast path (packages/a2a-converse/src/mcp/direct-exchange.ts) answers exactly as the SDK's stateless handling
 * (`createMcpHandler`): the same requests sent to a door with the fast path and to one without it get the same
 * status, headers and body — 2026-07-28 tool calls and tool lists, the older revisions' (answered as one SSE event),
 * every kind of refusal, odd ids, odd headers, and what the fast path leaves to the SDK (initialize, server/discover,
 * notifications, batches). An SDK upgrade that changes
 * what either side answers fails here. Plus the exchange on its own: callers' ids kept apart on the shared server,
 * a caller gone cancels its request, nothing stays pending.
 */
import t from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { Server, type JSONRPCRequest } from '@modelcontextprotocol/server'
import { DOORS, serveDoor, type Door } from '../../fixtures/doors.js'
import { messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { bookTable, requestRefund } from '../../fixtures/demo-routines.js'
import { connectDirectExchange, eligibleLegacyRequest, eligibleRequest, openLegacyStream } from '../../../packages/a2a-converse/src/mcp/direct-exchange.js'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { mcpEndpoint } from 'a2a-converse/mcp'
import { converseRouter } from 'a2a-converse/express'
import Fastify from 'fastify'

const MODERN = '2026-07-28'
const ENVELOPE = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {}
})
const LIST_HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': MODERN,
  'mcp-method': 'tools/list'
})
const CALL_HEADERS = (name: string): Record<string, string> => ({ ...LIST_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': name })
const HEADERS = CALL_HEADERS('ask_agent')
const LEGACY_HEADERS = Object.freeze({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' })

/** A 2026-07-28 request: `params` with the envelope in its `_meta`. */
const modern = (id: unknown, method: string, params: Record<string, any> = {}) =>
  ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...ENVELOPE, ...params._meta } } })
const ask = (id: unknown, args: unknown) => modern(id, 'tools/call', { name: 'ask_agent', arguments: args })
const list = (id: unknown = 1) => modern(id, 'tools/list')
const call = (id: unknown, name: unknown, args: unknown = {}, meta: Record<string, unknown> = {}) =>
  modern(id, 'tools/call', { name, arguments: args, _meta: meta })

t.test('eligibleRequest: only a single 2026-07-28 tools/call or tools/list whose headers are exactly its body\'s', async (t) => {
  t.same(eligibleRequest('POST', LIST_HEADERS, list()), list())
  t.ok(eligibleRequest('POST', HEADERS, ask('a', { message: 'x' })), 'a string id')
  t.ok(eligibleRequest('POST', { ...LIST_HEADERS, 'content-type': 'application/json; charset=utf-8' }, list()), 'JSON with parameters')
  const refused: Array<[string, string | undefined, Record<string, unknown>, unknown]> = [
    ['GET', 'GET', LIST_HEADERS, list()],
    ['not JSON', 'POST', { ...LIST_HEADERS, 'content-type': 'text/plain' }, list()],
    ['no Content-Type', 'POST', { ...LIST_HEADERS, 'content-type': undefined }, list()],
    ['no protocol version header', 'POST', { ...LIST_HEADERS, 'mcp-protocol-version': undefined }, list()],
    ['an older protocol version', 'POST', { ...LIST_HEADERS, 'mcp-protocol-version': '2025-11-25' }, list()],
    ['two protocol version headers', 'POST', { ...LIST_HEADERS, 'mcp-protocol-version': [MODERN, MODERN] }, list()],
    ['no Mcp-Method', 'POST', { ...LIST_HEADERS, 'mcp-method': undefined }, list()],
    ['Mcp-Method of another method', 'POST', { ...LIST_HEADERS, 'mcp-method': 'tools/call' }, list()],
    ['Mcp-Method of a method the fast path leaves', 'POST', { ...LIST_HEADERS, 'mcp-method': 'server/discover' }, modern(1, 'server/discover')],
    ['tools/call without Mcp-Name', 'POST', { ...HEADERS, 'mcp-name': undefined }, ask(1, { message: 'x' })],
    ['tools/call naming another tool', 'POST', CALL_HEADERS('book_table'), ask(1, { message: 'x' })],
    ['tools/list with an Mcp-Name', 'POST', { ...LIST_HEADERS, 'mcp-name': 'x' }, list()],
    ['a batch', 'POST', LIST_HEADERS, [list()]],
    ['null', 'POST', LIST_HEADERS, null],
    ['a string', 'POST', LIST_HEADERS, 'tools/list'],
    ['no envelope', 'POST', LIST_HEADERS, { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    ['an envelope of an older revision', 'POST', LIST_HEADERS, modern(1, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } })],
    ['a notification', 'POST', LIST_HEADERS, { ...list(), id: undefined }],
    ['JSON-RPC 1.0', 'POST', LIST_HEADERS, { ...list(), jsonrpc: '1.0' }],
    ['a null id', 'POST', LIST_HEADERS, { ...list(), id: null }]
  ]
  for (const [what, method, headers, body] of refused) t.equal(eligibleRequest(method, headers, body), undefined, what)
})

const legacyList = (id: unknown = 1, params?: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/list', ...(params === undefined ? {} : { params }) })
const legacyCall = (id: unknown, name: unknown, args: unknown = {}, meta?: unknown) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) } })

t.test('eligibleLegacyRequest: only a single claim-less tools/call or tools/list of an older revision, headers as the SDK\'s legacy leg takes them', async (t) => {
  t.same(eligibleLegacyRequest('POST', LEGACY_HEADERS, legacyList()), legacyList())
  t.ok(eligibleLegacyRequest('POST', LEGACY_HEADERS, legacyCall('a', 'ask_agent', { message: 'x' }, { traceparent: 'x' })), 'a string id, _meta')
  for (const version of ['2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']) {
    t.ok(eligibleLegacyRequest('POST', { ...LEGACY_HEADERS, 'mcp-protocol-version': version }, legacyList()), version)
  }
  t.ok(eligibleLegacyRequest('POST', { ...LEGACY_HEADERS, accept: 'text/event-stream, application/json;q=0.9' }, legacyList()), 'Accept in any order')
  const refused: Array<[string, string | undefined, Record<string, unknown>, unknown]> = [
    ['GET', 'GET', LEGACY_HEADERS, legacyList()],
    ['not JSON', 'POST', { ...LEGACY_HEADERS, 'content-type': 'text/plain' }, legacyList()],
    ['no protocol version header', 'POST', { ...LEGACY_HEADERS, 'mcp-protocol-version': undefined }, legacyList()],
    ['the modern revision', 'POST', { ...LEGACY_HEADERS, 'mcp-protocol-version': MODERN }, legacyList()],
    ['an unknown revision', 'POST', { ...LEGACY_HEADERS, 'mcp-protocol-version': '2025-01-01' }, legacyList()],
    ['two protocol version headers', 'POST', { ...LEGACY_HEADERS, 'mcp-protocol-version': ['2025-11-25', '2025-11-25'] }, legacyList()],
    ['a session id', 'POST', { ...LEGACY_HEADERS, 'mcp-session-id': 's' }, legacyList()],
    ['no Accept', 'POST', { ...LEGACY_HEADERS, accept: undefined }, legacyList()],
    ['Accept without SSE', 'POST', { ...LEGACY_HEADERS, accept: 'application/json' }, legacyList()],
    ['Accept without JSON', 'POST', { ...LEGACY_HEADERS, accept: 'text/event-stream' }, legacyList()],
    ['a batch', 'POST', LEGACY_HEADERS, [legacyList()]],
    ['null', 'POST', LEGACY_HEADERS, null],
    ['a string', 'POST', LEGACY_HEADERS, 'tools/list'],
    ['JSON-RPC 1.0', 'POST', LEGACY_HEADERS, { ...legacyList(), jsonrpc: '1.0' }],
    ['initialize', 'POST', LEGACY_HEADERS, { ...legacyList(), method: 'initialize' }],
    ['a numeric method', 'POST', LEGACY_HEADERS, { ...legacyList(), method: 5 }],
    ['a notification', 'POST', LEGACY_HEADERS, { jsonrpc: '2.0', method: 'tools/list' }],
    ['a null id', 'POST', LEGACY_HEADERS, legacyList(null)],
    ['a fractional id', 'POST', LEGACY_HEADERS, legacyList(1.5)],
    ['an id beyond safe integers', 'POST', LEGACY_HEADERS, legacyList(2 ** 60)],
    ['another member', 'POST', LEGACY_HEADERS, { ...legacyList(), extra: 1 }],
    ['params of null', 'POST', LEGACY_HEADERS, legacyList(1, null)],
    ['params of an array', 'POST', LEGACY_HEADERS, legacyList(1, [])],
    ['_meta of a string', 'POST', LEGACY_HEADERS, legacyList(1, { _meta: 'x' })],
    ['an envelope claim', 'POST', LEGACY_HEADERS, legacyList(1, { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } })],
    ['a progress token', 'POST', LEGACY_HEADERS, legacyList(1, { _meta: { progressToken: 1 } })],
    ['a related task', 'POST', LEGACY_HEADERS, legacyList(1, { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } })]
  ]
  for (const [what, method, headers, body] of refused) t.equal(eligibleLegacyRequest(method, headers, body), undefined, what)
})

t.test('openLegacyStream: the legacy leg\'s SSE reply, keep-alive comments while the call runs, nothing more once cancelled', async (t) => {
  const replies = [{ jsonrpc: '2.0' as const, id: 1, result: { tools: [] } }, undefined]
  const server = createServer((request, response) => {
    const stream = openLegacyStream(response, 10)
    setTimeout(() => stream.end(replies.shift()), 45)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
  const answered = await fetch(url)
  t.equal(answered.status, 200)
  t.same([answered.headers.get('content-type'), answered.headers.get('cache-control'), answered.headers.get('x-accel-buffering')],
    ['text/event-stream', 'no-cache, no-transform', 'no'])
  const text = await answered.text()
  t.match(text, /^(: keepalive\n\n)+event: message\ndata: \{"jsonrpc":"2\.0","id":1,"result":\{"tools":\[\]\}\}\n\n$/)
  t.match(await (await fetch(url)).text(), /^(: keepalive\n\n)+$/, 'cancelled: the stream ends without an event')
})

/** A real SDK Server whose tools/call handler waits until released or cancelled. */
function waitingServer () {
  const server = new Server({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {} } })
  const calls: Array<{ name: string, release: () => void, signal: AbortSignal }> = []
  server.setRequestHandler('tools/call', async (request, context) => {
    await new Promise<void>((resolve) => {
      calls.push({ name: request.params.name, release: resolve, signal: context.mcpReq.signal })
      context.mcpReq.signal.addEventListener('abort', () => resolve())
    })
    return { content: [{ type: 'text', text: `${request.params.name} for ${String(exchange.contextOf(context.mcpReq.id))}` }] }
  })
  const exchange = connectDirectExchange<string>(() => server)
  return { calls, exchange, server }
}

const toolCall = (id: string | number, name: string): JSONRPCRequest => call(id, name) as JSONRPCRequest
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1.0.0' } }

t.test('the exchange: two callers with the same id each get their own reply; their contexts reach the handler', async (t) => {
  const { calls, exchange, server } = waitingServer()
  t.teardown(() => server.close())
  const first = exchange.exchange(toolCall(1, 'a'), 'caller A')
  const second = exchange.exchange(toolCall(1, 'b'), 'caller B')
  while (calls.length < 2) await new Promise((resolve) => setImmediate(resolve))
  t.equal(exchange.pending, 2)
  calls[1].release()
  calls[0].release()
  t.same(await second.reply, { jsonrpc: '2.0', id: 1, result: { _meta: SERVER_INFO, resultType: 'complete', content: [{ type: 'text', text: 'b for caller B' }] } })
  t.same(await first.reply, { jsonrpc: '2.0', id: 1, result: { _meta: SERVER_INFO, resultType: 'complete', content: [{ type: 'text', text: 'a for caller A' }] } })
  t.equal(exchange.pending, 0)
  first.cancel()
  t.equal(exchange.pending, 0, 'cancelling after the reply changes nothing')
})

t.test('the exchange: a caller gone cancels its request on the server (its handler sees the abort); nothing stays', async (t) => {
  const { calls, exchange, server } = waitingServer()
  t.teardown(() => server.close())
  const gone = exchange.exchange(toolCall('x', 'slow'), 'gone')
  while (calls.length < 1) await new Promise((resolve) => setImmediate(resolve))
  gone.cancel()
  gone.cancel()
  t.equal(await gone.reply, undefined, 'no reply for a caller gone')
  // The cancellation goes through the SDK's message queue: the handler hears of it a moment later.
  if (!calls[0].signal.aborted) await once(calls[0].signal, 'abort')
  t.equal(calls[0].signal.aborted, true, 'the handler was told')
  t.equal(exchange.pending, 0)
  // The server goes on answering.
  const next = exchange.exchange(toolCall(2, 'next'), 'still here')
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
  const header = (name: string) => response.headers.get(name)
  const stream = header('content-type') === 'text/event-stream'
  return {
    status: response.status,
    type: header('content-type'),
    // The headers that matter: caching and proxy buffering of a stream, no session, and a stream's framing (chunked, as
    // it comes). A JSON reply's framing is not compared: the 2026-07-28 fast path sends it with its Content-Length, the
    // door writes the SDK's chunked; the same bytes either way.
    headers: [header('cache-control'), header('x-accel-buffering'), header('mcp-session-id'), stream ? header('transfer-encoding') : '-', stream ? header('content-length') : '-'],
    body: normalized(await response.text())
  }
}

const agents = [
  { id: 'echo', card: { name: 'Echo', description: 'Echoes what it is told.' }, executor: messageExecutor(), routines: [bookTable, requestRefund] },
  { id: 'worker', card: { name: 'Worker', description: 'Answers with a task and an artifact.' }, executor: taskExecutor() }
]

/** [what, agent, body, headers]: each sent to both doors. */
const CASES: Array<[string, string, unknown, Record<string, string | undefined>]> = [
  ['tools/list', 'echo', list(1), LIST_HEADERS],
  ['tools/list, string id, a cursor', 'echo', modern('list-1', 'tools/list', { cursor: 'x' }), LIST_HEADERS],
  ['ask_agent', 'echo', ask(7, { message: 'hello' }), HEADERS],
  ['ask_agent continuing a conversation', 'echo', ask(8, { message: 'again', contextId: 'ctx-1' }), HEADERS],
  ['ask_agent answered by a task', 'worker', ask(9, { message: 'the report' }), HEADERS],
  ['ask_agent without message', 'echo', ask(10, {}), HEADERS],
  ['ask_agent with a number as message', 'echo', ask(11, { message: 5 }), HEADERS],
  ['ask_agent with a bad contextId', 'echo', ask(12, { message: 'x', contextId: 5 }), HEADERS],
  ['ask_agent with an unknown member', 'echo', ask(13, { message: 'x', extra: true }), HEADERS],
  ['a routine tool', 'echo', call(14, 'book_table', { date: '2026-12-24', partySize: 2 }), CALL_HEADERS('book_table')],
  ['a routine tool with a bad slot', 'echo', call(15, 'book_table', { partySize: 'two' }), CALL_HEADERS('book_table')],
  ['a routine tool continuing a conversation', 'echo', call(16, 'book_table', {}, { 'ai.radioso/conversation': { contextId: 'ctx-2' } }), CALL_HEADERS('book_table')],
  ['a routine tool with bad _meta', 'echo', call(17, 'book_table', {}, { 'ai.radioso/conversation': 'ctx' }), CALL_HEADERS('book_table')],
  ['an unknown tool', 'echo', call(18, 'nope'), CALL_HEADERS('nope')],
  ['a traceparent in _meta', 'echo', call(19, 'ask_agent', { message: 'traced' }, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), HEADERS],
  ['tools/call with a numeric name', 'echo', call(20, 5), CALL_HEADERS('5')],
  ['tools/call with array arguments', 'echo', call(21, 'ask_agent', ['x']), HEADERS],
  ['tools/call with an id of 0', 'echo', ask(0, { message: 'zero' }), HEADERS],
  ['tools/call with an empty string id', 'echo', ask('', { message: 'empty id' }), HEADERS],
  ['tools/call with a negative id', 'echo', ask(-3, { message: 'negative' }), HEADERS],
  ['JSON with a charset', 'echo', list(22), { ...LIST_HEADERS, 'content-type': 'application/json; charset=utf-8' }],
  ['no protocol version header', 'echo', list(23), { ...LIST_HEADERS, 'mcp-protocol-version': undefined }],
  ['a header of an older revision', 'echo', list(24), { ...LIST_HEADERS, 'mcp-protocol-version': '2025-03-26' }],
  ['an unsupported revision', 'echo', modern(25, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }), { ...LIST_HEADERS, 'mcp-protocol-version': '2099-01-01' }],
  ['no Mcp-Method', 'echo', list(26), { ...LIST_HEADERS, 'mcp-method': undefined }],
  ['Mcp-Name of another tool', 'echo', ask(27, { message: 'x' }), CALL_HEADERS('book_table')],
  ['a malformed envelope', 'echo', modern(28, 'tools/list', { _meta: { 'io.modelcontextprotocol/clientInfo': 'me' } }), LIST_HEADERS],
  // Malformed envelopes the fast path takes and its pinned Server refuses: answered by the SDK's handler after all.
  ['a tool call with a malformed envelope', 'echo', call(34, 'ask_agent', { message: 'x' }, { 'io.modelcontextprotocol/clientInfo': { name: 'raw' } }), HEADERS],
  ['an envelope without client capabilities', 'echo', { jsonrpc: '2.0', id: 35, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } } }, LIST_HEADERS],
  ['client capabilities of the wrong type', 'echo', modern(36, 'tools/list', { _meta: { 'io.modelcontextprotocol/clientCapabilities': [] } }), LIST_HEADERS],
  ['an envelope with an unknown reserved key', 'echo', modern(37, 'tools/list', { _meta: { 'io.modelcontextprotocol/unknown': 1 } }), LIST_HEADERS],
  ['a tool call whose params are not an object', 'echo', { jsonrpc: '2.0', id: 38, method: 'tools/call', params: 'ask_agent' }, HEADERS],
  ['a batch', 'echo', [list(29)], LIST_HEADERS],
  ['a null id', 'echo', { ...list(), id: null }, LIST_HEADERS],
  ['server/discover', 'echo', modern(30, 'server/discover'), { ...LIST_HEADERS, 'mcp-method': 'server/discover' }],
  ['an unknown method', 'echo', modern(31, 'resources/list'), { ...LIST_HEADERS, 'mcp-method': 'resources/list' }],
  ['a traceparent header', 'echo', ask(39, { message: 'traced' }), { ...HEADERS, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }],
  ['a routine waiting for approval', 'echo', call(40, 'request_refund', { orderId: 'A-1' }), CALL_HEADERS('request_refund')],
  // The older revisions: the legacy fast path, or what it leaves to the SDK.
  ['2025-11-25 tools/list', 'echo', legacyList(32), LEGACY_HEADERS],
  ['2025-11-25 tools/list, string id, a cursor', 'echo', legacyList('list-2', { cursor: 'x' }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent', 'echo', legacyCall(33, 'ask_agent', { message: 'old' }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent continuing a conversation', 'echo', legacyCall(41, 'ask_agent', { message: 'again', contextId: 'ctx-3' }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent answered by a task', 'worker', legacyCall(42, 'ask_agent', { message: 'the report' }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent without message', 'echo', legacyCall(43, 'ask_agent', {}), LEGACY_HEADERS],
  ['2025-11-25 ask_agent with a number as message', 'echo', legacyCall(44, 'ask_agent', { message: 5 }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent with a bad contextId', 'echo', legacyCall(45, 'ask_agent', { message: 'x', contextId: 5 }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent with an unknown member', 'echo', legacyCall(46, 'ask_agent', { message: 'x', extra: true }), LEGACY_HEADERS],
  ['2025-11-25 ask_agent without arguments', 'echo', { jsonrpc: '2.0', id: 47, method: 'tools/call', params: { name: 'ask_agent' } }, LEGACY_HEADERS],
  ['2025-11-25 a routine tool', 'echo', legacyCall(48, 'book_table', { date: '2026-12-24', partySize: 2 }), LEGACY_HEADERS],
  ['2025-11-25 a routine tool with a bad slot', 'echo', legacyCall(49, 'book_table', { partySize: 'two' }), LEGACY_HEADERS],
  ['2025-11-25 a routine tool asking for its slots', 'echo', legacyCall(50, 'book_table', {}), LEGACY_HEADERS],
  ['2025-11-25 a routine waiting for approval', 'echo', legacyCall(51, 'request_refund', { orderId: 'A-1' }), LEGACY_HEADERS],
  ['2025-11-25 a routine tool continuing a conversation', 'echo', legacyCall(52, 'book_table', {}, { 'ai.radioso/conversation': { contextId: 'ctx-4' } }), LEGACY_HEADERS],
  ['2025-11-25 a routine tool with bad _meta', 'echo', legacyCall(53, 'book_table', {}, { 'ai.radioso/conversation': 'ctx' }), LEGACY_HEADERS],
  ['2025-11-25 an unknown tool', 'echo', legacyCall(54, 'nope'), LEGACY_HEADERS],
  ['2025-11-25 a traceparent in _meta', 'echo', legacyCall(55, 'ask_agent', { message: 'traced' }, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), LEGACY_HEADERS],
  ['2025-11-25 a traceparent header', 'echo', legacyCall(56, 'ask_agent', { message: 'traced' }), { ...LEGACY_HEADERS, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }],
  ['2025-11-25 a numeric tool name', 'echo', legacyCall(57, 5), LEGACY_HEADERS],
  ['2025-11-25 array arguments', 'echo', legacyCall(58, 'ask_agent', ['x']), LEGACY_HEADERS],
  ['2025-11-25 tools/call without params', 'echo', { jsonrpc: '2.0', id: 59, method: 'tools/call' }, LEGACY_HEADERS],
  ['2025-11-25 tools/call whose params are not an object', 'echo', { jsonrpc: '2.0', id: 60, method: 'tools/call', params: 'ask_agent' }, LEGACY_HEADERS],
  ['2025-11-25 params of null', 'echo', legacyList(61, null), LEGACY_HEADERS],
  ['2025-11-25 an id of 0', 'echo', legacyCall(0, 'ask_agent', { message: 'zero' }), LEGACY_HEADERS],
  ['2025-11-25 an empty string id', 'echo', legacyCall('', 'ask_agent', { message: 'empty id' }), LEGACY_HEADERS],
  ['2025-11-25 a negative id', 'echo', legacyCall(-3, 'ask_agent', { message: 'negative' }), LEGACY_HEADERS],
  ['2025-11-25 a fractional id', 'echo', legacyList(1.5), LEGACY_HEADERS],
  ['2025-11-25 a null id', 'echo', legacyList(null), LEGACY_HEADERS],
  ['2025-11-25 another member', 'echo', { ...legacyList(62), extra: 1 }, LEGACY_HEADERS],
  ['2025-11-25 a progress token', 'echo', legacyCall(63, 'ask_agent', { message: 'x' }, { progressToken: 'p' }), LEGACY_HEADERS],
  ['2025-11-25 a bad progress token', 'echo', legacyCall(64, 'ask_agent', { message: 'x' }, { progressToken: { no: 1 } }), LEGACY_HEADERS],
  ['2025-11-25 JSON with a charset', 'echo', legacyList(65), { ...LEGACY_HEADERS, 'content-type': 'application/json; charset=utf-8' }],
  ['2025-11-25 with an Mcp-Method of another method', 'echo', legacyList(66), { ...LEGACY_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'x' }],
  ['2025-11-25 Accept of JSON only', 'echo', legacyList(67), { ...LEGACY_HEADERS, accept: 'application/json' }],
  ['2025-11-25 no Accept', 'echo', legacyList(68), { ...LEGACY_HEADERS, accept: undefined }],
  ['2025-11-25 a session id', 'echo', legacyList(69), { ...LEGACY_HEADERS, 'mcp-session-id': 'abc' }],
  ['2025-11-25 a batch', 'echo', [legacyList(70)], LEGACY_HEADERS],
  ['2025-11-25 a notification', 'echo', { jsonrpc: '2.0', method: 'notifications/initialized' }, LEGACY_HEADERS],
  ['2025-11-25 initialize', 'echo', { jsonrpc: '2.0', id: 71, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, LEGACY_HEADERS],
  ['2025-11-25 an envelope claim', 'echo', legacyList(72, { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }), LEGACY_HEADERS],
  ['2025-11-25 an unknown method', 'echo', { jsonrpc: '2.0', id: 73, method: 'resources/list' }, LEGACY_HEADERS],
  ['2025-06-18 ask_agent', 'echo', legacyCall(74, 'ask_agent', { message: 'older' }), { ...LEGACY_HEADERS, 'mcp-protocol-version': '2025-06-18' }],
  ['2025-03-26 ask_agent', 'echo', legacyCall(75, 'ask_agent', { message: 'older still' }), { ...LEGACY_HEADERS, 'mcp-protocol-version': '2025-03-26' }],
  ['2024-11-05 tools/list', 'echo', legacyList(76), { ...LEGACY_HEADERS, 'mcp-protocol-version': '2024-11-05' }],
  ['2024-10-07 tools/list', 'echo', legacyList(77), { ...LEGACY_HEADERS, 'mcp-protocol-version': '2024-10-07' }],
  ['an unknown older revision', 'echo', legacyList(78), { ...LEGACY_HEADERS, 'mcp-protocol-version': '2025-01-01' }],
  ['no protocol version header, no claim', 'echo', legacyList(79), { ...LEGACY_HEADERS, 'mcp-protocol-version': undefined }]
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
    const listed = await send(fast, 'echo', JSON.stringify(list('mine')), LIST_HEADERS)
    t.equal(listed.status, 200)
    t.equal(listed.type, 'application/json')
    t.match(JSON.parse(listed.body), { jsonrpc: '2.0', id: 'mine', result: { tools: [{ name: 'ask_agent' }, { name: 'book_table' }] } })
    // The legacy one's is the SDK's SSE stream: one event with the caller's id.
    const legacy = await send(fast, 'echo', JSON.stringify(legacyList('old')), LEGACY_HEADERS)
    t.same([legacy.status, legacy.type, legacy.headers], [200, 'text/event-stream', ['no-cache, no-transform', 'no', null, 'chunked', null]])
    t.match(legacy.body, /^event: message\ndata: \{"result":\{"tools":\[.*\]\},"jsonrpc":"2\.0","id":"old"\}\n\n$/)
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
