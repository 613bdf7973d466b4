/**
 * The operator API's inbox side through the gateway: the conversation list (filters, pages), one conversation's
 * trace (turns with the envelopes the client received), the live stream of conversation events, the Bearer scheme,
 * the page's files and headers, and what the gateway says when the operator API is off.
 */
import t from 'tap'
import { get, type IncomingMessage } from 'node:http'
import Fastify from 'fastify'
import { InvalidOptionError } from '../../packages/a2a-converse/src/core/errors.js'
import { MemoryTaskEventHub } from '../../packages/a2a-converse/src/events/task-event-hub.js'
import { MemoryConversationStore } from '../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { ConversationFeedStore } from '../../packages/a2a-converse/src/runtime/conversation-feed.js'
import { createInbox } from '../../packages/a2a-converse/src/runtime/inbox.js'
import { MAX_CONVERSATION_KEY_LENGTH } from '../../packages/a2a-converse/src/stores/conversation-store.js'
import operatorApi from '../../plugins/operator-api.js'
import inboxPage, { INBOX_CSP } from '../../plugins/inbox-page.js'
import { AUTH, Client, gateway, OPERATOR_KEY, operator, URI } from '../fixtures/conversation-gateway.js'
import { logLines, startGateway } from '../fixtures/gateway-helpers.js'
import { InboxEvents } from '../fixtures/inbox-events.js'
import { contextIdOf } from '../fixtures/context-ids.js'

const contexts = (body: { conversations: Array<{ contextId: string }> }) => body.conversations.map((entry) => entry.contextId)
/** Walk-in conversations, by label: a walk-in's contextId is a UUID (test/library/auth/walk-ins.test.ts). */
const C = Object.fromEntries(['answered', 'unanswered', 'scope', 'approval', 'held', 'trace1', 'live1'].map((label) => [label, contextIdOf(label)]))

t.test('the list: newest activity first, each with owner, last activity, needs-a-person and the last turn', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const empty = await operator(app, 'GET', 'demo/conversations')
  t.equal(empty.statusCode, 200)
  t.strictSame(empty.json(), { conversations: [] }, 'no conversations yet, no next page')

  await client.send('When are you open on Saturday?', { contextId: C.answered })
  await client.send('Do you sell quantum flux capacitors for submarines?', { contextId: C.unanswered })
  await client.send('Should I sue the courier?', { contextId: C.scope })
  await client.send('I want a refund, orderId: A-1042', { contextId: C.approval })
  await client.send('Where is my parcel?', { contextId: C.held })
  t.equal((await operator(app, 'POST', `demo/conversations/${C.held}/takeover`)).statusCode, 200)
  await client.send('Can a person help me?', { contextId: C.held })

  const list = await operator(app, 'GET', 'demo/conversations')
  t.equal(list.statusCode, 200)
  const body = list.json()
  t.same(contexts(body), [C.held, C.approval, C.scope, C.unanswered, C.answered])
  t.same(body.conversations.map((entry: any) => entry.needsPerson), [
    ['waiting_for_reply'], ['waiting_for_approval'], ['scope_boundary'], ['unanswered'], []
  ], 'what the issue calls "needs a person", each with its reason')
  const [held] = body.conversations
  t.same(Object.keys(held).sort(), ['contextId', 'lastActivityAt', 'lastTurn', 'needsPerson', 'ownership', 'version'])
  t.equal(held.ownership, 'human_owned')
  t.same(held.lastTurn, { role: 'user', at: held.lastTurn.at, text: 'Can a person help me?' })
  t.ok(Date.parse(held.lastActivityAt) >= Date.parse(body.conversations[1].lastActivityAt), 'newest activity first')

  const needing = await operator(app, 'GET', 'demo/conversations?needsPerson=true')
  t.same(contexts(needing.json()), [C.held, C.approval, C.scope, C.unanswered])
  t.same(contexts((await operator(app, 'GET', 'demo/conversations?needsPerson=false')).json()), [C.answered])
  t.same(contexts((await operator(app, 'GET', 'demo/conversations?owner=human_owned')).json()), [C.held])
  t.same(contexts((await operator(app, 'GET', 'demo/conversations?owner=ai_owned&needsPerson=true')).json()), [C.approval, C.scope, C.unanswered])

  // Pages of two: `next` is the cursor of the following page; the last page has none.
  const pages: string[][] = []
  let cursor: string | undefined
  do {
    const page = (await operator(app, 'GET', `demo/conversations?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`)).json()
    pages.push(contexts(page))
    cursor = page.next
    if (cursor !== undefined) t.match(cursor, /^[1-9][0-9]*$/, 'an opaque decimal cursor')
  } while (cursor !== undefined)
  t.same(pages, [[C.held, C.approval], [C.scope, C.unanswered], [C.answered]])

  // A reply settles "waiting for a reply"; the conversation moves to the top.
  await client.send('Hello?', { contextId: C.answered })
  t.equal((await operator(app, 'POST', `demo/conversations/${C.held}/messages`, { text: 'Sam here, it is on its way.' })).statusCode, 201)
  const after = (await operator(app, 'GET', 'demo/conversations?limit=2')).json()
  t.same(contexts(after), [C.held, C.answered])
  t.same(after.conversations[0].needsPerson, [])
  t.equal(after.conversations[0].lastTurn.role, 'human')
})

t.test('the list: bad queries answer 400 with a JSON body; unknown agent 404; no key 401', async (t) => {
  const app = await gateway(t)
  for (const query of ['limit=0', 'limit=101', 'limit=-1', 'limit=2.5', 'limit=', 'cursor=0', 'cursor=abc', 'cursor=1234567890123456',
    'owner=nobody', 'needsPerson=yes', 'page=2']) {
    const res = await operator(app, 'GET', `demo/conversations?${query}`)
    t.equal(res.statusCode, 400, query)
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', message: String }, query)
  }
  t.equal((await operator(app, 'GET', 'demo/conversations?limit=100&cursor=999999999999999')).statusCode, 200, 'the bounds themselves')
  const unknown = await operator(app, 'GET', 'nobody/conversations')
  t.strictSame([unknown.statusCode, unknown.json()], [404, { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' }])
  for (const path of ['', '/demo/conversations', '/demo/events', '/demo/conversations/x/trace']) {
    const res = await app.inject(`/api/v1/agents${path}`)
    t.equal(res.statusCode, 401, path)
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
  t.match((await app.inject({ url: '/api/v1/agents', headers: AUTH })).json(), { agents: [{ id: 'demo', source: 'file', served: 'file' }] }, 'the agents an operator can pick')
})

t.test('the Bearer scheme word is case-insensitive; the key is not', async (t) => {
  const app = await gateway(t)
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
    t.equal((await app.inject({ url: '/api/v1/agents', headers: { authorization: `${scheme} ${OPERATOR_KEY}` } })).statusCode, 200, scheme)
  }
  t.equal((await app.inject({ url: '/api/v1/agents', headers: { authorization: `Bearer ${OPERATOR_KEY.toUpperCase()}` } })).statusCode, 401)
  t.equal((await app.inject({ url: '/api/v1/agents', headers: { authorization: `Bearer  ${OPERATOR_KEY}` } })).statusCode, 401, 'the token as sent')
})

t.test('the trace: every turn, who wrote it, and per agent turn the envelope the client received', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const answer = await client.send('When are you open on Saturday?', { contextId: C.trace1 })
  const started = await client.task('I want a refund, orderId: A-1042', { contextId: C.trace1 })
  await operator(app, 'POST', `demo/conversations/${C.trace1}/takeover`)
  const held = await client.task('Can a person help me?', { contextId: C.trace1 })
  await operator(app, 'POST', `demo/conversations/${C.trace1}/messages`, { text: '<b>Sam</b> here' })

  const res = await operator(app, 'GET', `demo/conversations/${C.trace1}/trace`)
  t.equal(res.statusCode, 200)
  const trace = res.json()
  t.match(trace, { agentId: 'demo', contextId: C.trace1, ownership: 'human_owned', ownershipChangedAt: String, lastActivityAt: String, version: Number })
  t.same(trace.needsPerson, ['waiting_for_approval'])
  t.same(trace.routine, { toolName: 'request_refund', name: 'Request a refund', status: 'waiting_for_approval', pendingInput: [] })
  t.same(trace.turns.map((turn: any) => [turn.role, turn.author]), [
    ['user', undefined], ['agent', 'agent'], ['user', undefined], ['agent', 'agent'], ['user', undefined], ['human', 'human']
  ], 'the suppressed turn has no agent turn; the person\'s reply is author human')
  t.same(trace.turns[1].envelope, answer.message.metadata[URI], 'the answer\'s envelope, as the client received it')
  t.same(trace.turns[3].envelope, started.status.message.metadata[URI], 'the routine turn\'s envelope')
  t.equal(trace.turns[4].taskId, held.id)
  t.equal(trace.turns[5].text, '<b>Sam</b> here', 'text as written')
  t.equal(trace.turns[0].envelope, undefined, 'a caller\'s turn has no envelope')

  const missing = await operator(app, 'GET', 'demo/conversations/nope/trace')
  t.strictSame([missing.statusCode, missing.json()], [404, { statusCode: 404, error: 'Not Found', message: 'unknown conversation "nope"' }])
  t.equal((await operator(app, 'GET', `nobody/conversations/${C.trace1}/trace`)).statusCode, 404)
  t.equal((await operator(app, 'GET', `demo/conversations/${'x'.repeat(MAX_CONVERSATION_KEY_LENGTH + 1)}/trace`)).statusCode, 400)
})

t.test('the live stream: ready, then an event per change of any conversation of the agent', async (t) => {
  const { app, base } = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY })
  const client = new Client(t, app)
  const events = new InboxEvents(base, 'demo', `Bearer ${OPERATOR_KEY}`)
  t.teardown(() => { events.close() })
  const response = await events.response
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  t.equal(response.headers.get('cache-control'), 'no-store')
  t.ok(response.headers.get('x-request-id'), 'the request id survives the hijack')
  await events.ready()

  await client.send('Where is my parcel?', { contextId: C.live1 })
  const created = await events.conversation(C.live1)
  t.same(Object.keys(created).sort(), ['contextId', 'lastActivityAt', 'lastTurn', 'needsPerson', 'ownership', 'version'], 'a list entry')
  t.match(created, { ownership: 'ai_owned', lastTurn: { role: 'agent' } })
  await operator(app, 'POST', `demo/conversations/${C.live1}/takeover`)
  t.match(await events.conversation(C.live1, (entry) => entry.ownership === 'human_owned'), { needsPerson: [] })
  await client.send('Anyone there?', { contextId: C.live1 })
  t.match(await events.conversation(C.live1, (entry) => entry.needsPerson.includes('waiting_for_reply')), { lastTurn: { role: 'user', text: 'Anyone there?' } })
  const versions = events.events.filter((event) => event.event === 'conversation').map((event) => event.data.version)
  t.same(versions, [...versions].sort((a, b) => a - b), 'versions grow')

  const other = new InboxEvents(base, 'demo', `bearer ${OPERATOR_KEY}`)
  t.teardown(() => { other.close() })
  await other.ready()
  await app.close()
  await events.ended
  await other.ended
  t.pass('closing the app ends every open stream')
})

t.test('the live stream: 401, 404, at most maxStreams, keep-alive, a client that does not read is cut off', async (t) => {
  const wrong = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY })
  t.equal((await new InboxEvents(wrong.base, 'demo', 'Bearer wrong-key-0123456789').response).status, 401)
  const unknown = await new InboxEvents(wrong.base, 'nobody', `Bearer ${OPERATOR_KEY}`).response
  t.strictSame([unknown.status, await unknown.json()], [404, { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' }])

  const events = new MemoryTaskEventHub()
  const store = new ConversationFeedStore(new MemoryConversationStore(), events, { warn () {} })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(operatorApi, {
    apiKey: OPERATOR_KEY,
    agentIds: ['demo'],
    inbox: createInbox({ store, taskStores: new Map(), events }),
    maxStreams: 1,
    keepAliveMs: 5,
    maxBufferedBytes: 64 * 1024
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const first = new InboxEvents(base, 'demo', `Bearer ${OPERATOR_KEY}`)
  await first.ready()
  const second = await fetch(`${base}/api/v1/agents/demo/events`, { headers: AUTH })
  t.strictSame([second.status, await second.json()], [503, {
    statusCode: 503, error: 'Service Unavailable', message: 'too many open inbox streams (1); try again later'
  }])
  await new Promise<void>((resolve) => {
    const check = (): void => { if (first.comments.length > 0) resolve(); else setImmediate(check) }
    check()
  })
  t.equal(first.comments[0], ': keep-alive', 'an idle stream gets keep-alive comments')
  first.close()
  await first.ended

  // A client that stops reading: events pile up until more than maxBufferedBytes wait; the connection is dropped
  // and its place is free again.
  const stalled = await new Promise<IncomingMessage>((resolve) => {
    get(`${base}/api/v1/agents/demo/events`, { headers: AUTH }, resolve)
  })
  stalled.pause()
  t.equal(stalled.statusCode, 200)
  const dropped = new Promise((resolve) => { stalled.socket.on('close', resolve) })
  const big = 'x'.repeat(1 << 20)
  let watcher: InboxEvents | undefined
  for (let round = 0; round < 100 && watcher === undefined; round++) {
    await events.publishConversation('demo', { conversation: { contextId: 'flood', text: big } })
    const again = new InboxEvents(base, 'demo', `Bearer ${OPERATOR_KEY}`)
    if ((await again.response).status === 200) watcher = again
    else await again.ended
  }
  t.ok(watcher, 'the stalled stream was ended')
  await dropped
  t.pass('its connection was dropped')
  watcher = watcher as InboxEvents
  await store.delete('demo', 'nothing')
  await store.update('demo', 'gone', (state) => state ?? { agentId: 'demo', contextId: 'gone', ownership: 'ai_owned', turns: [], inbox: [], version: 0, createdAt: '', updatedAt: '' })
  await watcher.ready()
  t.equal(await store.delete('demo', 'gone'), true)
  t.same((await watcher.next((event) => event.event === 'removed')).data, { contextId: 'gone' }, 'a deleted conversation leaves the list')
  watcher.close()
})

t.test('the operator API checks its stream options', async (t) => {
  const inbox = createInbox({ store: new MemoryConversationStore(), taskStores: new Map(), events: new MemoryTaskEventHub() })
  for (const [name, value] of [['maxStreams', 0], ['keepAliveMs', 1.5], ['maxBufferedBytes', -1]] as const) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(operatorApi, { apiKey: OPERATOR_KEY, agentIds: [], inbox, [name]: value }) }, InvalidOptionError, name)
  }
})

t.test('a conversation event that cannot be published is logged; the write stands', async (t) => {
  const warnings: unknown[] = []
  const store = new ConversationFeedStore(new MemoryConversationStore(), {
    publishConversation: async () => { throw new Error('database down') }
  }, { warn: (object, message) => { warnings.push([object, message]) } })
  const state = await store.update('demo', 'c', (current) => current ?? { agentId: 'demo', contextId: 'c', ownership: 'ai_owned', turns: [], inbox: [], version: 0, createdAt: '', updatedAt: '' })
  t.equal(state.version, 1)
  await new Promise((resolve) => setImmediate(resolve))
  t.match(warnings, [[{ err: { message: 'database down' }, agentId: 'demo' }, 'inbox feed: a conversation event was not published']])
  t.equal(await store.exists('demo', 'c'), true)
  t.same((await store.list('demo')).map((entry) => entry.contextId), ['c'])
  t.equal(await store.findContextByTaskId('demo', 'x'), undefined)
  await store.close()
})

t.test('the page: a few fixed files with a strict CSP; nothing else under /inbox', async (t) => {
  const app = await gateway(t)
  for (const url of ['/inbox', '/inbox/']) {
    const page = await app.inject(url)
    t.equal(page.statusCode, 200, url)
    t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
    t.equal(page.headers['content-security-policy'], INBOX_CSP)
    t.equal(page.headers['x-content-type-options'], 'nosniff')
    t.equal(page.headers['referrer-policy'], 'no-referrer')
    t.match(page.body, '<script type="module" src="/inbox/inbox.js"></script>')
    t.notMatch(page.body, /<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler')
    t.notMatch(page.body, /https?:\/\//, 'no other origin')
  }
  const css = await app.inject('/inbox/inbox.css')
  t.equal(css.statusCode, 200)
  t.equal(css.headers['content-type'], 'text/css; charset=utf-8')
  t.equal(css.headers['content-security-policy'], INBOX_CSP)
  // The modules inbox.js imports are the page's routes too (built or not: a missing one is the page's 404).
  for (const url of ['/inbox/agents.js', '/inbox/agents-api.js']) t.equal((await app.inject(url)).headers['content-security-policy'], INBOX_CSP, url)
  for (const url of ['/inbox/inbox.ts', '/inbox/agents.ts', '/inbox/../package.json', '/inbox/tsconfig.json', '/inbox/index.html']) {
    t.equal((await app.inject(url)).statusCode, 404, url)
  }
  t.equal((await app.inject('/health/live')).headers['content-security-policy'], undefined, 'the CSP is the page\'s only')
})

t.test('the page: a file that is not built answers 404 saying how to build it', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(inboxPage, { pageDir: t.testdir({ 'index.html': '<!doctype html>' }), scriptDir: '/nonexistent' })
  const script = await app.inject('/inbox/inbox.js')
  t.equal(script.statusCode, 404)
  t.strictSame(script.json(), {
    statusCode: 404, error: 'Not Found', message: 'the inbox file /inbox/inbox.js is missing: run `npm run build` (it compiles the page\'s script)'
  })
  t.equal(script.headers['content-security-policy'], INBOX_CSP)
  t.equal((await app.inject('/inbox')).body, '<!doctype html>')
})

t.test('operator API off: its paths and /inbox say so (404, JSON), nothing about the key', async (t) => {
  const app = await gateway(t, { env: { OPERATOR_API_KEY: undefined } })
  for (const [method, url] of [['GET', '/api/v1/agents'], ['GET', '/api/v1/agents/demo/conversations'], ['POST', '/api/v1/agents/demo/conversations/x/takeover'],
    ['GET', '/api/v1/agents/demo/events'], ['GET', '/inbox'], ['GET', '/inbox/inbox.js']] as const) {
    const res = await app.inject({ method, url, headers: AUTH })
    t.equal(res.statusCode, 404, url)
    t.strictSame(res.json(), {
      statusCode: 404,
      error: 'Not Found',
      message: 'the operator API and the inbox are off: start the gateway with OPERATOR_API_KEY set to switch them on'
    }, url)
    t.equal(res.headers['www-authenticate'], undefined)
  }
  t.equal((await app.inject('/api/v1/mcp/converse/tools?agentId=demo')).statusCode, 200, 'other /api/v1 paths are untouched')
})

t.test('the start-up log names the agents, the state store, and whether the operator API and the inbox are on', async (t) => {
  for (const [env, operatorApi, inbox] of [[{ OPERATOR_API_KEY: OPERATOR_KEY }, true, '/inbox'], [{}, false, false]] as const) {
    const log = logLines()
    await startGateway(t, { ...env, LOG_LEVEL: 'info' }, { loggerStream: log.stream })
    const lines = log.lines.filter((line) => line.msg === 'gateway configured')
    t.equal(lines.length, 1, 'one line')
    t.match(lines[0], { level: 30, agents: ['demo'], stateStore: 'memory', operatorApi, inbox })
    t.notMatch(JSON.stringify(log.lines), OPERATOR_KEY, 'the key is never logged')
  }
})
