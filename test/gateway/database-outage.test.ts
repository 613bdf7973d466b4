/**
 * A gateway on PostgreSQL whose database goes away and comes back: its DATABASE_URL points at a TCP proxy run
 * here (`cut`: every connection destroyed, new ones refused; `restore`: accepted again). While cut, readiness
 * answers 503 and every A2A request fails at once with -32603 naming the unreachable store (no hang, no HTTP 500,
 * no stack); once restored the instance serves again by itself. Also: a start while the database is unreachable,
 * and a conversation store failing inside the executor while the task store works.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk'
import type { ConversationState, ConversationUpdate } from '../../packages/a2a-converse/src/stores/conversation-store.js'
import { MemoryConversationStore } from '../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { rpc, SEED_HEADERS, startGateway, URI, userMessage } from '../fixtures/gateway-helpers.js'
import { TcpProxy } from '../fixtures/tcp-proxy.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

/** Every call while the database is unreachable answers within this (connections are refused: no timeout to wait out). */
const FAIL_FAST_MS = 3000
const UNREACHABLE = /^the state store is unreachable; try again later$/

type Json = Record<string, any>

async function timed<T> (work: () => Promise<T>): Promise<{ value: T, ms: number }> {
  const started = performance.now()
  const value = await work()
  return { value, ms: performance.now() - started }
}

/** A JSON-RPC call over HTTP: the status, the body and how long it took. */
async function call (base: string, body: string, agent = 'demo') {
  return await timed(async () => {
    const response = await fetch(`${base}/a2a/${agent}`, { method: 'POST', headers: SEED_HEADERS, body })
    return { status: response.status, body: await response.json() as Json }
  })
}

/** A -32603 naming the unreachable store, answered fast with HTTP 200 (a JSON-RPC error, no stack). */
function checkUnavailable (t: Test, what: string, answer: { value: { status: number, body: Json }, ms: number }, message = UNREACHABLE) {
  const { status, body } = answer.value
  t.equal(status, 200, `${what}: HTTP 200 (a JSON-RPC error, not a 500)`)
  t.equal(body.error?.code, -32603, `${what}: -32603`)
  t.match(body.error?.message, message, `${what}: the message says the store is unreachable`)
  t.same(Object.keys(body.error ?? {}).sort(), ['code', 'message'], `${what}: no data, no stack`)
  t.ok(answer.ms < FAIL_FAST_MS, `${what}: answered in ${Math.round(answer.ms)} ms`)
}

async function ready (base: string) {
  return await timed(async () => {
    const response = await fetch(`${base}/health/ready`)
    return { status: response.status, body: await response.json() as Json }
  })
}

if (url === undefined) {
  t.test('gateway database outages', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Imported only here: without a database nothing of the PostgreSQL layer is loaded (and counted for coverage).
  const { executorStoreFailure } = await import('../../packages/a2a-converse/src/stores/postgres/task-store-failures.js')
  const { StoreUnavailableError } = await import('../../packages/a2a-converse/src/stores/errors.js')
  // A busy machine (two cores, other suites) may be slow to start the gateways.
  t.setTimeout(120_000)

  t.test('the database cut and restored: 503 and fast -32603 while cut, recovery without a restart', async (t) => {
    const schema = testSchema(t, url)
    const proxy = new TcpProxy(url)
    await proxy.start()
    t.teardown(() => proxy.close())
    const { base } = await startGateway(t, { DATABASE_URL: proxy.url(url), DATABASE_SCHEMA: schema })

    const opened = await call(base, rpc('SendMessage', { message: userMessage("I'd like to book a table") }))
    const task = opened.value.body.result.task
    t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED', 'a routine waits for input')
    t.same((await ready(base)).value, { status: 200, body: { status: 'ready', checks: { database: 'ok' } } })

    // One connection lost in the middle of a request (as it writes the message: the first statement whose values carry
    // it — the SQL text itself goes on the wire once per connection, the statements being prepared): -32603 at once;
    // the pool replaces the connection.
    const marker = `lost-${randomUUID()}`
    const lost = proxy.breakOn(marker)
    const broken = await call(base, rpc('SendMessage', { message: userMessage(`book a table (${marker})`) }))
    await lost
    checkUnavailable(t, 'SendMessage whose write lost its connection', broken,
      UNREACHABLE)
    t.equal((await call(base, rpc('GetTask', { id: task.id }))).value.body.result.id, task.id, 'the next request is served')

    await proxy.cut()

    const down = await ready(base)
    t.same(down.value, { status: 503, body: { status: 'unavailable', checks: { database: 'failing' } } }, 'not ready')
    t.ok(down.ms < FAIL_FAST_MS, `readiness answered in ${Math.round(down.ms)} ms`)

    checkUnavailable(t, 'SendMessage starting a routine', await call(base, rpc('SendMessage', { message: userMessage('book a table') })))
    checkUnavailable(t, 'SendMessage answered by a Message', await call(base, rpc('SendMessage', { message: userMessage('How long do I have to return an order?') })))
    checkUnavailable(t, 'SendMessage continuing the task', await call(base, rpc('SendMessage', {
      message: userMessage('date=2026-12-24', { taskId: task.id, contextId: task.contextId })
    })))
    checkUnavailable(t, 'GetTask', await call(base, rpc('GetTask', { id: task.id })))
    checkUnavailable(t, 'ListTasks', await call(base, rpc('ListTasks', { contextId: task.contextId })))
    checkUnavailable(t, 'CancelTask', await call(base, rpc('CancelTask', { id: task.id })))

    // Streams: the failure comes before any event, so it is a plain JSON-RPC error reply, no stream.
    for (const [method, params] of [
      ['SendStreamingMessage', { message: userMessage('date=2026-12-24', { taskId: task.id }) }],
      ['SubscribeToTask', { id: task.id }]
    ] as const) {
      const answer = await timed(async () => {
        const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: rpc(method, params) })
        t.match(response.headers.get('content-type'), /^application\/json/, `${method}: a plain reply`)
        return { status: response.status, body: await response.json() as Json }
      })
      checkUnavailable(t, method, answer)
    }

    await proxy.restore()
    // No restart: the pool opens new connections as requests come.
    const back = await ready(base)
    t.same(back.value, { status: 200, body: { status: 'ready', checks: { database: 'ok' } } }, 'ready again')

    const stored = (await call(base, rpc('GetTask', { id: task.id }))).value.body.result
    t.equal(stored.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the failed requests left the task as it was')
    t.equal(stored.history.length, 2, 'nothing of the failed turns in its history')
    const done = (await call(base, rpc('SendMessage', {
      message: userMessage('date=2026-12-24, partySize=4', { taskId: task.id, contextId: task.contextId })
    }))).value.body.result.task
    t.equal(done.id, task.id)
    t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'the routine completes after the outage')
    t.match(done.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 4 })
    const answer = (await call(base, rpc('SendMessage', { message: userMessage('How long do I have to return an order?') }))).value.body.result
    t.match(answer.message.parts[0].text, /30 days of delivery/, 'Message replies again')
    t.equal(answer.message.metadata[URI].author, 'agent')
    const listed = (await call(base, rpc('ListTasks', { contextId: task.contextId }))).value.body.result
    t.same(listed.tasks.map((entry: Json) => entry.id), [task.id], 'ListTasks again')
  })

  t.test('a start while the database is unreachable fails at once, naming the reason', async (t) => {
    const schema = testSchema(t, url)
    const proxy = new TcpProxy(url)
    await proxy.start()
    await proxy.cut()
    const started = performance.now()
    await t.rejects(startGateway(t, { DATABASE_URL: proxy.url(url), DATABASE_SCHEMA: schema }),
      { message: /^migrate: the tasks schema failed: Error: connect ECONNREFUSED 127\.0\.0\.1:\d+$/ })
    t.ok(performance.now() - started < FAIL_FAST_MS, 'no hang')
    t.equal(proxy.sockets, 0, 'nothing left connected')
  })

  t.test('the conversation store unreachable inside the executor (the task store works): -32603, the task untouched', async (t) => {
    /** A conversation store whose updates fail while `failure` is set. */
    class FlakyStore extends MemoryConversationStore {
      failure: Error | undefined
      override async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>) {
        if (this.failure !== undefined) throw this.failure
        return await super.update(agentId, contextId, fn)
      }
    }
    const conversations = new FlakyStore()
    const schema = testSchema(t, url)
    const { base } = await startGateway(t, { DATABASE_URL: url, DATABASE_SCHEMA: schema }, { conversations })
    const send = async (text: string, extra: Json = {}) => await call(base, rpc('SendMessage', { message: userMessage(text, extra) }))

    const task = (await send('book a table')).value.body.result.task
    t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const continued = { taskId: task.id, contextId: task.contextId }

    conversations.failure = new StoreUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:5432'))
    // The driver's detail (host, port) stays in the log; the client reads only that the store is unreachable.
    const detail = UNREACHABLE
    checkUnavailable(t, 'SendMessage continuing the task', await send('date=2026-12-24', continued), detail)
    checkUnavailable(t, 'SendMessage starting a task', await send('book a table'), detail)
    checkUnavailable(t, 'SendMessage answered by a Message', await send('What are your opening hours?'), detail)
    const streamed = await fetch(`${base}/a2a/demo`, {
      method: 'POST', headers: SEED_HEADERS, body: rpc('SendStreamingMessage', { message: userMessage('date=2026-12-24', continued) })
    })
    // Before any event: a plain JSON-RPC error reply, no stream.
    t.match(streamed.headers.get('content-type'), /^application\/json/)
    t.match(await streamed.json(), { error: { code: -32603, message: detail } }, 'a stream: the error, as a plain reply')
    conversations.failure = new StoreUnavailableError()
    checkUnavailable(t, 'without a driver detail', await send('date=2026-12-24', continued))

    const kept = (await call(base, rpc('GetTask', { id: task.id }))).value.body.result
    t.equal(kept.status.state, 'TASK_STATE_INPUT_REQUIRED', 'not FAILED: the task waits for the turn again')
    t.same(kept.history.map((message: Json) => message.role), ['ROLE_USER', 'ROLE_AGENT', 'ROLE_USER', 'ROLE_USER', 'ROLE_USER'],
      'the unanswered messages are in its history (the SDK records a message to a task before the agent runs), no reply')
    t.same((await call(base, rpc('ListTasks', { contextId: task.contextId }))).value.body.result.tasks.map((entry: Json) => entry.id), [task.id], 'no FAILED task was stored')

    // Any other executor failure is a FAILED task, as before; its text is fixed, the error's own words only logged.
    conversations.failure = new Error('a bug')
    const failed = (await send('book a table')).value.body.result.task
    t.equal(failed.status.state, 'TASK_STATE_FAILED')
    t.equal(failed.status.message.parts[0].text, 'Agent execution error: the turn could not be completed')

    // A FAILED status the SDK did not make of a StoreUnavailableError is saved as it is.
    const failedWith = (message: Message | undefined): Task => ({
      id: 'task-1',
      contextId: 'context-1',
      history: [],
      artifacts: [],
      metadata: undefined,
      status: { state: TaskState.TASK_STATE_FAILED, message, timestamp: new Date().toISOString() }
    })
    t.equal(executorStoreFailure(failedWith(undefined)), undefined, 'no status message')
    const empty: Message = { messageId: 'm-1', contextId: 'context-1', taskId: 'task-1', role: Role.ROLE_AGENT, parts: [], metadata: undefined, extensions: [], referenceTaskIds: [] }
    t.equal(executorStoreFailure(failedWith(empty)), undefined, 'no parts')

    conversations.failure = undefined
    const done = (await send('date=2026-12-24, partySize=2', continued)).value.body.result.task
    t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'the same turn, sent again, completes the routine')
    t.same(done.history.slice(-2).map((message: Json) => message.role), ['ROLE_USER', 'ROLE_AGENT'])
  })
}
