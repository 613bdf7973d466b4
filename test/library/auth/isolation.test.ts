/**
 * Each caller sees only its own tasks and conversations (a gateway requiring API keys, on a real port): another
 * caller's task is -32001 for every method, exactly like a task that does not exist, and another caller's
 * contextId starts a conversation of the new caller. The operator sees every conversation with its caller.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { ALICE_KEY, API_KEYS, BOB_KEY, call } from '../../fixtures/auth.js'
import { rpc, startGateway, URI, userMessage } from '../../fixtures/gateway-helpers.js'
import { readSse } from '../../fixtures/sse-reader.js'

type Json = Record<string, any>
const OPERATOR_KEY = 'operator-key-for-the-isolation-test'

const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, OPERATOR_API_KEY: OPERATOR_KEY })

/** SendMessage as `key`; the result. */
async function send (key: string, text: string, extra: Json = {}): Promise<Json> {
  const { body } = await call(base, 'SendMessage', { message: userMessage(text, extra) }, key)
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error))
  return body.result
}

/** Alice's task waiting for input (a routine). */
async function alicesTask (): Promise<Json> {
  return (await send(ALICE_KEY, 'book a table')).task
}

/** A streaming method's answer when it fails before any result: a plain JSON-RPC error reply, no stream. */
async function streamError (method: string, params: Json, key: string): Promise<Json> {
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}` },
    body: rpc(method, params)
  })
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) throw new Error(`expected a JSON reply: ${await response.text()}`)
  return (await response.json() as Json).error
}

/** The -32001 a task that does not exist gets, with the id swapped, to compare with. */
async function missing (method: string, params: Json, id: string): Promise<Json> {
  const { body } = await call(base, method, params, BOB_KEY)
  return JSON.parse(JSON.stringify(body.error).replaceAll(id, '<id>'))
}

t.test('GetTask: another caller\'s task is not found, as a missing one', async (t) => {
  const task = await alicesTask()
  const { body } = await call(base, 'GetTask', { id: task.id }, BOB_KEY)
  t.equal(body.error?.code, -32001)
  const absent = randomUUID()
  t.same(JSON.parse(JSON.stringify(body.error).replaceAll(task.id, '<id>')), await missing('GetTask', { id: absent }, absent),
    'indistinguishable from a task that does not exist')
  t.equal((await call(base, 'GetTask', { id: task.id }, ALICE_KEY)).body.result.id, task.id, 'its owner reads it')
})

t.test('ListTasks: a caller lists only its own tasks, also filtered by another caller\'s contextId', async (t) => {
  const task = await alicesTask()
  const bobs = (await send(BOB_KEY, 'book a table')).task
  const bobList = (await call(base, 'ListTasks', { pageSize: 100 }, BOB_KEY)).body.result
  t.notOk(bobList.tasks.some((listed: Json) => listed.id === task.id), "Bob's list has no task of Alice")
  t.ok(bobList.tasks.some((listed: Json) => listed.id === bobs.id), 'but his own')
  const byContext = (await call(base, 'ListTasks', { contextId: task.contextId }, BOB_KEY)).body.result
  t.same([byContext.tasks, byContext.totalSize], [[], 0], "Alice's contextId lists nothing for Bob")
  const aliceList = (await call(base, 'ListTasks', { pageSize: 100 }, ALICE_KEY)).body.result
  t.ok(aliceList.tasks.some((listed: Json) => listed.id === task.id))
  t.notOk(aliceList.tasks.some((listed: Json) => listed.id === bobs.id))
})

t.test('CancelTask: another caller cannot cancel a task (-32001) and the task goes on', async (t) => {
  const task = await alicesTask()
  t.equal((await call(base, 'CancelTask', { id: task.id }, BOB_KEY)).body.error?.code, -32001)
  t.equal((await call(base, 'GetTask', { id: task.id }, ALICE_KEY)).body.result.status.state, 'TASK_STATE_INPUT_REQUIRED', 'still waiting for Alice')
  t.equal((await call(base, 'CancelTask', { id: task.id }, ALICE_KEY)).body.result.status.state, 'TASK_STATE_CANCELED', 'its owner can')
})

t.test('SubscribeToTask: another caller gets -32001 and no stream', async (t) => {
  const task = await alicesTask()
  t.equal((await streamError('SubscribeToTask', { id: task.id }, BOB_KEY)).code, -32001)
  const controller = new AbortController()
  const own = await fetch(`${base}/a2a/demo`, {
    signal: controller.signal,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${ALICE_KEY}` },
    body: rpc('SubscribeToTask', { id: task.id })
  })
  const stream = readSse(own)
  const first = await stream.waitFor((frame) => frame.result?.task !== undefined, 'the task snapshot')
  t.equal(first.result.task.id, task.id, 'its owner subscribes')
  controller.abort()
  await stream.ended.catch(() => {})
})

t.test('SendMessage by taskId: another caller cannot continue a task', async (t) => {
  const task = await alicesTask()
  const { body } = await call(base, 'SendMessage', { message: userMessage('date=2026-12-24', { taskId: task.id }) }, BOB_KEY)
  t.equal(body.error?.code, -32001)
  const streamed = await streamError('SendStreamingMessage', { message: userMessage('date=2026-12-24', { taskId: task.id }) }, BOB_KEY)
  t.equal(streamed.code, -32001, 'nor by a stream')
  const got = (await call(base, 'GetTask', { id: task.id }, ALICE_KEY)).body.result
  t.equal(got.history.length, 2, "Alice's task has no turn of Bob's")
})

t.test('SendMessage by contextId: another caller\'s contextId starts a fresh conversation of the new caller', async (t) => {
  const contextId = randomUUID()
  const first = (await send(ALICE_KEY, 'book a table', { contextId })).task
  t.equal(first.contextId, contextId)
  // Bob uses Alice's contextId: his own conversation, no routine running, so a slot answer is just a question.
  const bobs = await send(BOB_KEY, 'What are your opening hours?', { contextId })
  t.equal(bobs.message.contextId, contextId, 'Bob sees the contextId he sent')
  t.notOk(bobs.message.referenceTaskIds?.includes(first.id))
  // Alice's routine is untouched: her next slot answer continues it in a new turn of her conversation.
  const next = (await send(ALICE_KEY, 'date=2026-12-24', { taskId: first.id, contextId })).task
  t.equal(next.id, first.id)
  t.equal(next.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const list = await (await fetch(`${base}/api/v1/agents/demo/conversations?limit=100`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } })).json() as Json
  const mine = list.conversations.filter((entry: Json) => entry.caller?.contextId === contextId)
  t.same(mine.map((entry: Json) => entry.caller.id).sort(), ['alice', 'bob'], 'two conversations, one per caller, each shown with its caller')
  t.same(mine.map((entry: Json) => entry.contextId).sort(), [`alice/${contextId}`, `bob/${contextId}`], 'addressed by caller and contextId')
})

t.test('the operator addresses a caller\'s conversation and its reply reaches the caller\'s task', async (t) => {
  const contextId = randomUUID()
  await send(ALICE_KEY, 'What are your opening hours?', { contextId })
  const operator = async (method: string, path: string, body?: Json) => {
    const response = await fetch(`${base}/api/v1/agents/demo/conversations/${encodeURIComponent(`alice/${contextId}`)}${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: await response.json() as Json }
  }
  const view = await operator('GET', '')
  t.equal(view.status, 200)
  t.same(view.body.caller, { id: 'alice', contextId })
  const trace = await operator('GET', '/trace')
  t.same([trace.status, trace.body.caller], [200, { id: 'alice', contextId }], 'the trace names the caller too')
  t.equal((await operator('POST', '/takeover')).body.ownership, 'human_owned')
  const held = (await send(ALICE_KEY, 'Is a person there?', { contextId })).task
  t.equal(held.status.state, 'TASK_STATE_WORKING')
  const replied = await operator('POST', '/messages', { text: 'Yes, I am here.' })
  t.equal(replied.status, 201)
  t.match(replied.body, { delivered: true, taskId: held.id, message: { contextId } }, 'the reply carries the contextId Alice knows')
  const task = (await call(base, 'GetTask', { id: held.id }, ALICE_KEY)).body.result
  t.equal(task.status.message.parts[0].text, 'Yes, I am here.', "the reply is in Alice's task")
  t.equal(task.status.message.contextId, contextId)
  t.equal((await operator('POST', '/release')).body.ownership, 'ai_owned')
  t.equal((await call(base, 'GetTask', { id: held.id }, ALICE_KEY)).body.result.status.state, 'TASK_STATE_COMPLETED', 'release ends her held task')
  t.equal((await call(base, 'GetTask', { id: held.id }, BOB_KEY)).body.error?.code, -32001)
})

t.test('the extension\'s envelope still rides on an authenticated caller\'s replies', async (t) => {
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI, authorization: `Bearer ${ALICE_KEY}` },
    body: rpc('SendMessage', { message: userMessage('How long do I have to return an order?') })
  })
  t.equal(response.headers.get('a2a-extensions'), URI)
  const body = await response.json() as Json
  t.match(body.result.message.metadata[URI], { author: 'agent', answerCoverage: { coverage: 'answered' } })
})
