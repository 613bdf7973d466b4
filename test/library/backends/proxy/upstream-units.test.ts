/** The proxy's small parts on their own: failure classification, the card source's retries, setCard. */
import t from 'tap'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { InMemoryTaskStore } from '@a2a-js/sdk/server'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent } from 'undici'
import { createConverseExtension } from '../../../../packages/a2a-converse/src/core/converse-extension.js'
import { httpEnvelopeProvider } from '../../../../packages/a2a-converse/src/core/http-envelope-provider.js'
import { startRawUpstream } from '../../../fixtures/raw-upstream.js'
import { localBackend } from '../../../../packages/a2a-converse/src/backends/local/local-backend.js'
import { heldTurnExecutor } from '../../../../packages/a2a-converse/src/backends/proxy/held-turn-executor.js'
import { upstreamCardSource } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-card.js'
import { cardUrlOf, parseUpstreamCard } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-card-parse.js'
import { MemoryConversationStore } from '../../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import type { JsonRpcError } from '../../../../packages/a2a-converse/src/protocol/errors.js'
import { upstreamBackend } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-backend.js'
import { classifyNetworkError, upstreamReplyError, upstreamUnavailable, UpstreamError } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-errors.js'

t.test('network failures: timeouts are -32051, the rest -32050, with the cause code kept for the log', async (t) => {
  const reset = classifyNetworkError('shop', { cause: { code: 'ECONNRESET' } }, 'stream')
  t.equal(reset.error.code, -32050)
  t.equal(reset.error.message, 'Upstream agent unavailable: the stream was cut')
  t.equal(reset.causeCode, 'ECONNRESET')
  const slow = classifyNetworkError('shop', { code: 'UND_ERR_HEADERS_TIMEOUT' }, 'request')
  t.equal(slow.error.code, -32051)
  t.equal(slow.error.message, 'Upstream agent timed out: no reply in time')
  t.equal(classifyNetworkError('shop', null, 'request').causeCode, undefined, 'an error without a code')
  const decided = new UpstreamError(upstreamUnavailable('shop', 'x'))
  t.equal(classifyNetworkError('shop', decided, 'request'), decided, 'an UpstreamError stays as it is')
})

t.test('the card URL keeps the base URL\'s path', async (t) => {
  t.equal(cardUrlOf('http://a:9000'), 'http://a:9000/.well-known/agent-card.json')
  t.equal(cardUrlOf('http://a/agents/shop/'), 'http://a/agents/shop/.well-known/agent-card.json')
  t.equal(cardUrlOf('http://a/agents/shop'), 'http://a/agents/shop/.well-known/agent-card.json')
})

t.test('a card source retries with a growing delay while the upstream is down, and stops when closed', async (t) => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const warnings: Array<Record<string, unknown>> = []
  const source = upstreamCardSource({
    agentId: 'shop',
    url: `http://127.0.0.1:${port}`,
    dispatcher,
    timeoutMs: 1000,
    ttlMs: 60_000,
    retryMs: 5,
    log: { warn: (object) => warnings.push(object as Record<string, unknown>), error () {}, info () {} }
  })
  t.equal(await source.start(), undefined, 'not read')
  t.equal(source.current(), undefined)
  while (warnings.length < 4) await sleep(5)
  source.close()
  const seen = warnings.length
  await sleep(100)
  t.equal(warnings.length, seen, 'no read after close')
  t.match(warnings[0], { agentId: 'shop', code: 'ECONNREFUSED' })
})

t.test('setCard replaces a declared agent\'s card; an unknown agent or a bad card names the option', async (t) => {
  const extension = createConverseExtension({ agents: [{ id: 'shop', card: { name: 'Before', description: 'd' } }] })
  extension.setCard('shop', { name: 'After', description: 'd', capabilities: { extensions: [{ uri: 'https://x/ext' }] } })
  t.equal(extension.agents.get('shop')?.cardFor({ publicUrl: 'http://gw' }).name, 'After')
  t.equal(extension.negotiate('shop', 'https://x/ext')?.echo, 'https://x/ext', 'the new card\'s extensions negotiate')
  t.throws(() => extension.setCard('other', { name: 'x', description: 'd' }), { name: 'InvalidOptionError', message: /option "agentId" "other" is not a declared agent/ })
  t.throws(() => extension.setCard('shop', { name: 1 } as never), { message: /option "agents\["shop"\].card" must be an object with name and description strings/ })
})

t.test('a card larger than maxBytes is unusable, naming the agent', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const source = upstreamCardSource({ agentId: 'shop', url: upstream.base, dispatcher, timeoutMs: 1000, ttlMs: 60_000, maxBytes: 100 })
  t.teardown(() => source.close())
  await t.rejects(source.start(), { name: 'UpstreamCardError', message: /agent "shop": upstream card at .* exceeds 100 bytes/ })
})

t.test('httpEnvelopeProvider checks its options, and closes only its own connections', async (t) => {
  t.throws(() => httpEnvelopeProvider(null as never), { message: /option "httpEnvelopeProvider" needs \{ url \}/ })
  t.throws(() => httpEnvelopeProvider({ url: 'ftp://x' }), { message: /option "url" must be an http\(s\) URL/ })
  t.throws(() => httpEnvelopeProvider({ url: 'http://x', timeoutMs: 0 }), { message: /option "timeoutMs" must be an integer between 1 and 60000/ })
  const own = httpEnvelopeProvider({ url: 'http://127.0.0.1:9/' })
  await own.close()
  const dispatcher = new Agent()
  const shared = httpEnvelopeProvider({ url: 'http://127.0.0.1:9/', dispatcher })
  await shared.close()
  t.notOk(dispatcher.closed, 'a dispatcher passed in stays open')
  await dispatcher.close()
})

t.test('card reads: a timeout is logged by name; a close during a read stops the source; schema errors name the member', async (t) => {
  const silent = createHttpServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { silent.closeAllConnections(); silent.close(() => resolve()) }))
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const warnings: Array<Record<string, unknown>> = []
  const source = upstreamCardSource({
    agentId: 'shop',
    url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    dispatcher,
    timeoutMs: 50,
    ttlMs: 60_000,
    retryMs: 5,
    log: { warn: (object) => warnings.push(object as Record<string, unknown>), error () {}, info () {} }
  })
  const started = source.start()
  source.close()
  t.equal(await started, undefined)
  t.match(warnings, [{ agentId: 'shop', code: 'TimeoutError' }])
  await sleep(50)
  t.equal(warnings.length, 1, 'closed during the read: no retry')

  t.throws(() => parseUpstreamCard('shop', 'http://u/card', JSON.stringify({ name: 'x', supportedInterfaces: [], capabilities: 'all' })),
    { message: 'agent "shop": upstream card at http://u/card: /capabilities must be object' })
  t.throws(() => parseUpstreamCard('shop', 'http://u/card', JSON.stringify({ name: 'x', supportedInterfaces: [{ url: '/rpc', protocolBinding: 'JSONRPC' }] })),
    { message: /has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1.0/ }, 'an interface without protocolVersion')
})

t.test('a held turn whose conversation was removed since the ownership check starts it again, held', async (t) => {
  const store = new MemoryConversationStore()
  t.teardown(() => store.close())
  let id = 0
  const backend = localBackend({
    card: { name: 'shop', description: '', capabilities: { streaming: true } },
    executor: heldTurnExecutor({ agentId: 'shop', store, newId: () => `id-${++id}` }),
    taskStore: new InMemoryTaskStore()
  })
  const result = await backend.call(
    { id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', contextId: 'gone', role: 'ROLE_USER', parts: [{ text: 'hello?' }] } } },
    { agentId: 'shop', requestedExtensions: [], activated: [], version: '1.0', headers: {}, signal: new AbortController().signal }
  ) as { task: { status: { state: string } } }
  t.equal(result.task.status.state, 'TASK_STATE_WORKING')
  const state = await store.get('shop', 'gone')
  t.equal(state?.ownership, 'human_owned')
  t.same(state?.turns.map((turn) => [turn.role, turn.text]), [['user', 'hello?']])
})

t.test('a refresh that reads the same card changes nothing (no listener call)', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const source = upstreamCardSource({ agentId: 'shop', url: upstream.base, dispatcher, timeoutMs: 1000, ttlMs: 5 })
  t.teardown(() => source.close())
  const changes: unknown[] = []
  await source.start()
  source.onChange((card) => changes.push(card))
  const first = source.current()
  // Re-read every 5 ms: many refreshes of the same text.
  await sleep(150)
  t.equal(source.current(), first, 'the same card object')
  t.equal(changes.length, 1, 'only the immediate call with the current card')
})

t.test('error details: a code outside JSON-RPC\'s and A2A\'s own gets a generic message; a stream body timeout words the stream', async (t) => {
  t.same(upstreamReplyError({ code: -32050, message: 'shop db at 10.0.0.3 down', data: [{ host: '10.0.0.3' }] } as unknown as JsonRpcError, 'code'), { code: -32050, message: 'Upstream agent error' })
  t.same(upstreamReplyError({ code: -32601, message: 'no such method: x' }, 'code'), { code: -32601, message: 'Method not found' })
  const original = { code: 7, message: 'mine', data: { any: 1 } } as unknown as JsonRpcError
  t.equal(upstreamReplyError(original, 'full'), original)
  t.equal(classifyNetworkError('shop', { code: 'UND_ERR_BODY_TIMEOUT' }, 'stream').error.message, 'Upstream agent timed out: no stream event in time')
})

t.test('the upstream backend on its own: an already aborted call; the caller\'s time with an event does not count as idle', async (t) => {
  const upstream = await startRawUpstream((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    const event = (state: string) => `data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"${state}"}}}}\n\n`
    response.write(event('TASK_STATE_WORKING'))
    response.end(event('TASK_STATE_COMPLETED'))
  })
  t.teardown(() => upstream.close())
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const card = parseUpstreamCard('shop', `${upstream.base}/.well-known/agent-card.json`, upstream.card.text)
  const backend = upstreamBackend({ agentId: 'shop', card: () => card, dispatcher, timeoutMs: 1000, streamIdleTimeoutMs: 50, maxResponseBytes: 4096 })
  const context = (signal: AbortSignal) => ({ agentId: 'shop', requestedExtensions: [], activated: [], version: '1.0', headers: {}, signal })
  const request = { id: 1, method: 'SendStreamingMessage' as const, params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }
  const aborted = new AbortController()
  aborted.abort()
  await t.rejects(backend.call({ ...request, method: 'SendMessage' }, context(aborted.signal)), 'a call whose caller already left does not go out')
  const stream = backend.stream(request, context(new AbortController().signal))
  t.match((await stream.next()).value, { task: { status: { state: 'TASK_STATE_WORKING' } } })
  // The caller holds the first event three idle timeouts long: the upstream is not waited for meanwhile.
  await sleep(150)
  t.match((await stream.next()).value, { task: { status: { state: 'TASK_STATE_COMPLETED' } } }, 'the next event, no timeout')
  t.equal((await stream.next()).done, true)
})
