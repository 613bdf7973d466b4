/**
 * Shared bounds let one caller evict another's open work (issue 23, finding 4): with MEMORY_MAX_TASKS=20, alice's
 * 25 new routines evicted bob's open booking (-32001). Now open work is never evicted: past the store's cap only
 * finished tasks go, a new task of a caller at MAX_OPEN_TASKS_PER_CALLER is refused (-32000 RESOURCE_EXHAUSTED
 * naming the cap, nothing runs for it), and so is a new task when the store holds nothing but open work. Walk-ins
 * count per client address. Memory; the per-caller cap on PostgreSQL too (two instances sharing the database),
 * when TEST_DATABASE_URL is set.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { API_KEYS, ALICE_KEY, BOB_KEY } from '../fixtures/auth.js'
import { gateway } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

type Json = any

const CAP = 20

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

async function perCallerCap (t: Test, apps: FastifyInstance[]): Promise<void> {
  const on = (n: number): FastifyInstance => apps[n % apps.length]
  const opened: string[] = []
  for (let n = 0; n < 5; n++) {
    const task = (await send(on(n), ALICE_KEY, routine())).result?.task
    t.ok(task, `alice's open task ${n + 1}`)
    opened.push(task.id)
  }
  checkCap(t, await send(on(5), ALICE_KEY, routine()), 'MAX_OPEN_TASKS_PER_CALLER', 5)
  t.ok((await send(on(6), BOB_KEY, routine())).result?.task, 'bob opens his own')
  const question = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
  t.ok((await send(on(7), ALICE_KEY, question)).result?.message, 'a question answered by a Message opens no task: still answered')
  const cancel = await on(8).inject({
    method: 'POST',
    url: '/a2a/demo',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${ALICE_KEY}` },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: opened[0] } })
  })
  t.equal(cancel.json().result?.status?.state, 'TASK_STATE_CANCELED')
  t.ok((await send(on(9), ALICE_KEY, routine())).result?.task, 'a canceled task made room')
  checkCap(t, await send(on(10), ALICE_KEY, routine()), 'MAX_OPEN_TASKS_PER_CALLER', 5)
}

t.test('a caller at MAX_OPEN_TASKS_PER_CALLER is refused; the others are not (memory)', async (t) => {
  await perCallerCap(t, [await gateway(t, { env: { MEMORY_MAX_TASKS: String(CAP), MAX_OPEN_TASKS_PER_CALLER: '5', A2A_API_KEYS: API_KEYS } })])
})

if (url === undefined) {
  t.test('PostgreSQL, two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL, two instances on one database: the same cap', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url), MAX_OPEN_TASKS_PER_CALLER: '5', A2A_API_KEYS: API_KEYS }
    await perCallerCap(t, [await gateway(t, { env }), await gateway(t, { env })])
  })
}

t.test('walk-ins count per client address', async (t) => {
  const app = await gateway(t, { env: { MAX_OPEN_TASKS_PER_CALLER: '3' } })
  for (let n = 0; n < 3; n++) t.ok((await send(app, undefined, routine(), '10.0.0.1')).result?.task)
  checkCap(t, await send(app, undefined, routine(), '10.0.0.1'), 'MAX_OPEN_TASKS_PER_CALLER', 3)
  t.ok((await send(app, undefined, routine(), '10.0.0.2')).result?.task, 'another address has its own cap')
})

t.test('MAX_CONVERSATIONS_PER_CALLER: a new conversation past it is refused before anything runs; continuing is not', async (t) => {
  const app = await gateway(t, { env: { MAX_CONVERSATIONS_PER_CALLER: '3', A2A_API_KEYS: API_KEYS } })
  const question = (contextId?: string): Json => ({ messageId: randomUUID(), ...(contextId === undefined ? {} : { contextId }), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] })
  const contexts: string[] = []
  for (let n = 0; n < 3; n++) {
    const reply = await send(app, ALICE_KEY, question(n === 0 ? undefined : randomUUID()))
    t.ok(reply.result?.message, `alice's conversation ${n + 1}`)
    contexts.push(reply.result.message.contextId)
  }
  checkCap(t, await send(app, ALICE_KEY, question(randomUUID())), 'MAX_CONVERSATIONS_PER_CALLER', 3)
  checkCap(t, await send(app, ALICE_KEY, question()), 'MAX_CONVERSATIONS_PER_CALLER', 3)
  t.ok((await send(app, ALICE_KEY, question(contexts[0]))).result?.message, 'an existing conversation goes on')
  t.ok((await send(app, BOB_KEY, question(randomUUID()))).result?.message, 'bob has his own bound')
  const listed = await app.inject({ method: 'GET', url: '/api/v1/agents/demo/conversations', headers: { authorization: 'Bearer operator-key-0123456789' } })
  t.equal(listed.json().conversations.length, 4, 'nothing was written for the refused ones')
})
