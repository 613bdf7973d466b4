/**
 * Shared bounds let one caller evict another's open work (issue 23, finding 4): with MEMORY_MAX_TASKS=20, alice's
 * 25 new routines evicted bob's open booking (-32001). Now open work is never evicted: past the store's cap only
 * finished tasks go, a new task of a caller at MAX_OPEN_TASKS_PER_CALLER is refused (-32000 RESOURCE_EXHAUSTED
 * naming the cap, nothing runs for it), and so is a new task when the store holds nothing but open work. Walk-ins
 * count per client address. The per-caller caps (open tasks, conversations) on every store: memory, embedded, and
 * PostgreSQL (two instances sharing the database) when TEST_DATABASE_URL is set; refused before anything is
 * recorded, and race-free (concurrent new tasks of one caller: exactly the cap succeed; on PostgreSQL, a new
 * conversation while another of the caller's is being created elsewhere: refused once that one commits).
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { API_KEYS, ALICE_KEY, BOB_KEY } from '../fixtures/auth.js'
import { gateway } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'
import { BoundedMemoryTaskStore } from '../../packages/a2a-converse/src/stores/memory-task-store.js'

const url = process.env.TEST_DATABASE_URL

type Json = any

const CAP = 20

// Three embedded gateways each run an initdb of their own (seconds; tens of them on a loaded 2-core machine).
t.setTimeout(300_000)

async function send (app: FastifyInstance, key: string | undefined, message: Json, address = '127.0.0.1'): Promise<Json> {
  const res = await app.inject({
    method: 'POST',
    url: '/a2a/demo',
    remoteAddress: address,
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } })
  })
  return res.json()
}

async function getTask (app: FastifyInstance, key: string | undefined, id: string): Promise<Json> {
  const res = await app.inject({
    method: 'POST',
    url: '/a2a/demo',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } })
  })
  return res.json()
}

/** A routine that waits for input: an open task. */
function routine (): Json {
  return { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'I would like to book a table' }] }
}

function checkCap (t: Test, reply: Json, cap: string, limit: number): void {
  t.equal(reply.error?.code, -32000, `refused: ${cap}`)
  t.match(reply.error?.data?.[0], { reason: 'RESOURCE_EXHAUSTED', domain: 'a2a-converse', metadata: { cap, limit: String(limit) } })
}

t.test("alice's 25 routines do not evict bob's open booking (caps of 20)", async (t) => {
  const app = await gateway(t, { env: { MEMORY_MAX_TASKS: String(CAP), MEMORY_MAX_CONVERSATIONS: String(CAP), A2A_API_KEYS: API_KEYS } })
  const booking = (await send(app, BOB_KEY, routine())).result.task
  t.equal(booking.status.state, 'TASK_STATE_INPUT_REQUIRED', "bob's open booking")
  const replies: Json[] = []
  for (let n = 0; n < 25; n++) replies.push(await send(app, ALICE_KEY, routine()))
  t.equal(replies.filter((reply) => reply.result?.task !== undefined).length, CAP - 1, 'alice opens what the store has room for')
  for (const reply of replies.slice(CAP - 1)) checkCap(t, reply, 'MEMORY_MAX_TASKS', CAP)
  const kept = await getTask(app, BOB_KEY, booking.id)
  t.equal(kept.result?.status?.state, 'TASK_STATE_INPUT_REQUIRED', "bob's booking is still there")
})

/** What the gateway recorded: every conversation (operator API: key, version, last turn) and alice's tasks. */
async function recorded (app: FastifyInstance): Promise<Json> {
  const listed = await app.inject({ method: 'GET', url: '/api/v1/agents/demo/conversations?limit=100', headers: { authorization: 'Bearer operator-key-0123456789' } })
  const tasks = await app.inject({
    method: 'POST',
    url: '/a2a/demo',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${ALICE_KEY}` },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 100 } })
  })
  return {
    conversations: listed.json().conversations.map((entry: Json) => ({ contextId: entry.contextId, version: entry.version, lastTurn: entry.lastTurn })),
    tasks: tasks.json().result.tasks.map((task: Json) => ({ id: task.id, state: task.status.state, history: task.history?.length }))
  }
}

async function perCallerCap (t: Test, apps: FastifyInstance[]): Promise<void> {
  const on = (n: number): FastifyInstance => apps[n % apps.length]
  const opened: Json[] = []
  for (let n = 0; n < 5; n++) {
    const task = (await send(on(n), ALICE_KEY, routine())).result?.task
    t.ok(task, `alice's open task ${n + 1}`)
    opened.push(task)
  }
  const before = await recorded(on(0))
  checkCap(t, await send(on(5), ALICE_KEY, routine()), 'MAX_OPEN_TASKS_PER_CALLER', 5)
  // Continuing a routine without its taskId opens a new task (the old one is closed): refused too, the routine as it was.
  checkCap(t, await send(on(5), ALICE_KEY, { ...routine(), contextId: opened[1].contextId, parts: [{ text: 'date=2026-12-24' }] }), 'MAX_OPEN_TASKS_PER_CALLER', 5)
  t.strictSame(await recorded(on(1)), before, 'refused before anything was recorded: no turn, no conversation, no task')
  t.ok((await send(on(6), BOB_KEY, routine())).result?.task, 'bob opens his own')
  const question = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
  t.ok((await send(on(7), ALICE_KEY, question)).result?.message, 'a question answered by a Message opens no task: still answered')
  const cancel = await on(8).inject({
    method: 'POST',
    url: '/a2a/demo',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${ALICE_KEY}` },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: opened[0].id } })
  })
  t.equal(cancel.json().result?.status?.state, 'TASK_STATE_CANCELED')
  t.ok((await send(on(9), ALICE_KEY, routine())).result?.task, 'a canceled task made room')
  checkCap(t, await send(on(10), ALICE_KEY, routine()), 'MAX_OPEN_TASKS_PER_CALLER', 5)
}

t.test('walk-ins count per client address', async (t) => {
  const app = await gateway(t, { env: { MAX_OPEN_TASKS_PER_CALLER: '3' } })
  for (let n = 0; n < 3; n++) t.ok((await send(app, undefined, routine(), '10.0.0.1')).result?.task)
  checkCap(t, await send(app, undefined, routine(), '10.0.0.1'), 'MAX_OPEN_TASKS_PER_CALLER', 3)
  t.ok((await send(app, undefined, routine(), '10.0.0.2')).result?.task, 'another address has its own cap')
})

/** The store, its first `count` reservations held until all of them arrived, then let go in one step. */
function reservationsTogether (store: BoundedMemoryTaskStore, count: number): BoundedMemoryTaskStore {
  let arrived = 0
  let letGo!: () => void
  const together = new Promise<void>((resolve) => { letGo = resolve })
  return new Proxy(store, {
    get (target, name) {
      if (name === 'reserve') {
        return async (...args: Parameters<BoundedMemoryTaskStore['reserve']>) => {
          if (++arrived === count) letGo()
          await together
          return await target.reserve(...args)
        }
      }
      const value = Reflect.get(target, name, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

/** The stores the per-caller caps hold on; each gives the environment of its gateways (the test's own state). */
const STORES: Array<{ name: string, instances: number, env: (t: Test) => Record<string, string> }> = [
  { name: 'memory', instances: 1, env: () => ({ MEMORY_MAX_TASKS: String(CAP) }) },
  { name: 'embedded', instances: 1, env: (t) => ({ STATE: 'embedded', DATA_DIR: t.testdir() }) },
  ...(url === undefined ? [] : [{ name: 'PostgreSQL, two instances on one database', instances: 2, env: (t: Test) => ({ DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }) }])
]

async function gateways (t: Test, store: typeof STORES[number], env: Record<string, string>): Promise<FastifyInstance[]> {
  const shared = { ...store.env(t), A2A_API_KEYS: API_KEYS, ...env }
  const apps: FastifyInstance[] = []
  for (let n = 0; n < store.instances; n++) apps.push(await gateway(t, { env: shared }))
  return apps
}

if (url === undefined) {
  t.test('PostgreSQL, two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
}

for (const store of STORES) {
  t.test(`${store.name}: a caller at MAX_OPEN_TASKS_PER_CALLER is refused before anything is recorded; the others are not`, async (t) => {
    await perCallerCap(t, await gateways(t, store, { MAX_OPEN_TASKS_PER_CALLER: '5' }))
  })

  t.test(`${store.name}: concurrent new tasks of one caller over the cap: exactly the cap succeed, nothing recorded for the others`, async (t) => {
    // In memory a whole turn runs without I/O, so requests sent together would be served one after another: the
    // store's reservations are held until all eight arrived, then let go at once (a cap that checks, yields and then
    // counts lets more than 3 through).
    const apps = store.name === 'memory'
      ? [await gateway(t, { env: { ...store.env(t), A2A_API_KEYS: API_KEYS }, taskStores: { demo: reservationsTogether(new BoundedMemoryTaskStore({ maxOpenTasksPerCaller: 3 }), 8) } })]
      : await gateways(t, store, { MAX_OPEN_TASKS_PER_CALLER: '3' })
    const replies = await Promise.all(Array.from({ length: 8 }, async (_, n) => await send(apps[n % apps.length], ALICE_KEY, routine())))
    const opened = replies.filter((reply) => reply.result?.task !== undefined)
    t.equal(opened.length, 3, 'the cap')
    for (const reply of replies.filter((entry) => entry.result === undefined)) checkCap(t, reply, 'MAX_OPEN_TASKS_PER_CALLER', 3)
    const after = await recorded(apps[0])
    t.same(after.tasks.map((task: Json) => task.id).sort(), opened.map((reply) => reply.result.task.id).sort(), 'only the admitted tasks are stored')
    t.same(after.conversations.map((entry: Json) => entry.contextId).sort(), opened.map((reply) => `alice/${reply.result.task.contextId}`).sort(),
      'only their conversations')
  })

  t.test(`${store.name}: MAX_CONVERSATIONS_PER_CALLER: a new conversation past it is refused before anything runs; continuing is not`, async (t) => {
    const apps = await gateways(t, store, { MAX_CONVERSATIONS_PER_CALLER: '3' })
    const on = (n: number): FastifyInstance => apps[n % apps.length]
    const question = (contextId?: string): Json => ({ messageId: randomUUID(), ...(contextId === undefined ? {} : { contextId }), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] })
    const contexts: string[] = []
    for (let n = 0; n < 3; n++) {
      const reply = await send(on(n), ALICE_KEY, question(n === 0 ? undefined : randomUUID()))
      t.ok(reply.result?.message, `alice's conversation ${n + 1}`)
      contexts.push(reply.result.message.contextId)
    }
    checkCap(t, await send(on(3), ALICE_KEY, question(randomUUID())), 'MAX_CONVERSATIONS_PER_CALLER', 3)
    checkCap(t, await send(on(4), ALICE_KEY, question()), 'MAX_CONVERSATIONS_PER_CALLER', 3)
    t.ok((await send(on(5), ALICE_KEY, question(contexts[0]))).result?.message, 'an existing conversation goes on')
    t.ok((await send(on(6), BOB_KEY, question(randomUUID()))).result?.message, 'bob has his own bound')
    const listed = await on(7).inject({ method: 'GET', url: '/api/v1/agents/demo/conversations', headers: { authorization: 'Bearer operator-key-0123456789' } })
    t.equal(listed.json().conversations.length, 4, 'nothing was written for the refused ones')
  })
}

if (url !== undefined) {
  t.test('PostgreSQL: a new conversation while another of the caller\'s is being created elsewhere at the cap: -32000, nothing stored', async (t) => {
    const schema = testSchema(t, url)
    const app = await gateway(t, { env: { DATABASE_URL: url, DATABASE_SCHEMA: schema, A2A_API_KEYS: API_KEYS, MAX_CONVERSATIONS_PER_CALLER: '2' } })
    const question = (): Json => ({ messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] })
    t.ok((await send(app, ALICE_KEY, question())).result?.message, 'alice\'s first conversation')
    // Another instance creates alice's second one and holds its transaction open (the owner's counter row locked).
    const other = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
    await other.connect()
    t.teardown(async () => await other.end())
    const count = async (table: string): Promise<number> => (await other.query(`select count(*)::int as n from ${table}`)).rows[0].n
    const tasksBefore = await count('tasks')
    await other.query('begin')
    await other.query(`insert into converse_conversations (agent_id, context_id, state, version, owner)
      select agent_id, context_id || '-elsewhere', state, 1, owner from converse_conversations`)
    const reply = send(app, ALICE_KEY, question())
    // The gateway's insert is seen waiting for that transaction (a state polled for, at most 5 s).
    const { rows: [{ pid }] } = await other.query<{ pid: number }>('select pg_backend_pid() as pid')
    const probe = new pg.Client({ connectionString: url })
    await probe.connect()
    t.teardown(async () => await probe.end())
    let waiting = false
    for (let i = 0; i < 500 && !waiting; i++) {
      waiting = (await probe.query('select 1 from pg_stat_activity where $1 = any (pg_blocking_pids(pid))', [pid])).rows.length > 0
      if (!waiting) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.ok(waiting, 'the turn\'s insert waits for the other creation\'s count')
    await other.query('commit')
    checkCap(t, await reply, 'MAX_CONVERSATIONS_PER_CALLER', 2)
    t.equal(await count('converse_conversations'), 2, 'alice holds the cap: hers and the one created elsewhere')
    t.equal(await count('tasks'), tasksBefore, 'no task stored for the refused turn')
  })
}
