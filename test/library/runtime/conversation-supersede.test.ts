/**
 * Parallel turns on one conversation, each answering in a new task: every turn closes the task the turn before it
 * left open (CANCELED, "Continued in task …", referenceTaskIds [the new task]) once that task holds the earlier
 * turn's reply — the wait is on the task store's save signals, whichever instance saved. On memory, on one gateway on
 * PostgreSQL and on two gateways sharing one database (the PostgreSQL halves when TEST_DATABASE_URL is set): every
 * closed task keeps its own reply in its history, GetTask agrees on every instance, no task is left open but the
 * last. And the wait is bounded: a task whose turn's reply never lands is closed after SETTLE_TIMEOUT_MS.
 */
import t, { type Test } from 'tap'
import { TaskState } from '@a2a-js/sdk'
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { FastifyInstance } from 'fastify'
import { LATE_SETTLE_MS, SETTLE_TIMEOUT_MS } from '../../../packages/a2a-converse/src/runtime/superseded-task.js'
import { lastTaskTurn } from '../../../packages/a2a-converse/src/runtime/turn-plan.js'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { Client, gateway, textOf, URI } from '../../fixtures/conversation-gateway.js'
import { SlowBoundedTaskStore, SlowConversationStore } from '../../fixtures/conversation-slow-stores.js'
import { testSchema } from '../../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL
const TURNS = 20

type Json = any

/** A task waiting for input, then TURNS messages with its contextId only, sent at once over the apps in turn. */
async function parallelTurns (t: Test, apps: FastifyInstance[]): Promise<void> {
  const clients = apps.map((app) => new Client(t, app))
  const first = await clients[0].task('book a table')
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const started = performance.now()
  const tasks: Json[] = await Promise.all(Array.from({ length: TURNS }, async (_, n) =>
    await clients[n % clients.length].task(`notes=note ${n}`, { contextId: first.contextId })))
  t.comment(`${TURNS} parallel turns answered in ${Math.round(performance.now() - started)} ms`)
  const ids: string[] = [first.id, ...tasks.map((task) => task.id)]

  // A close whose old task was not stored by the bound (a loaded machine) follows the turn's answer: wait for it.
  for (let i = 0; i < 200; i++) {
    const states = await Promise.all(ids.map(async (id) => (await clients[0].getTask(id)).status.state))
    if (states.filter((state) => state === 'TASK_STATE_INPUT_REQUIRED').length <= 1) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const views: Json[][] = await Promise.all(clients.map(async (client) => await Promise.all(ids.map(async (id) => await client.getTask(id)))))
  for (const view of views.slice(1)) t.strictSame(view, views[0], 'GetTask shows the same tasks on every instance')
  const all = views[0]
  const open = all.filter((task) => task.status.state === 'TASK_STATE_INPUT_REQUIRED')
  t.equal(open.length, 1, 'one task waits for input: no task left open')
  for (const task of all.filter((task) => task !== open[0])) {
    t.equal(task.status.state, 'TASK_STATE_CANCELED')
    const next = task.status.message.referenceTaskIds[0]
    t.ok(ids.includes(next), 'points to a task of this conversation')
    t.equal(textOf(task.status.message), `Continued in task ${next}.`)
    const asked = task.history.find((entry: Json) => entry.role === 'ROLE_USER')
    const reply = task.history.find((entry: Json) =>
      entry.role === 'ROLE_AGENT' && entry.metadata?.[URI]?.answerCoverage?.originatingRequestId === asked.messageId)
    t.ok(reply, 'the reply its client was told is in its history')
  }
  // One chain: following the continuations from the first task reaches the open one after TURNS steps.
  const next = new Map(all.filter((task) => task !== open[0]).map((task) => [task.id, task.status.message.referenceTaskIds[0]]))
  let cursor = first.id
  for (let step = 0; step < TURNS; step++) cursor = next.get(cursor)
  t.equal(cursor, open[0].id, 'one chain of continuations')
}

t.test('memory: parallel turns close each other\'s tasks once saved; no save listener stays', async (t) => {
  const taskStore = new SlowBoundedTaskStore()
  await parallelTurns(t, [await gateway(t, { conversations: new SlowConversationStore(), taskStores: { demo: taskStore } })])
  t.equal(taskStore.saveListeners, 0)
})

t.test('the wait is bounded: a task whose turn\'s reply never lands is closed after the bound', async (t) => {
  const conversations = new MemoryConversationStore()
  const taskStore = new BoundedMemoryTaskStore()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: taskStore } }))
  const first = await client.task('book a table')
  // The conversation now names a turn whose reply the task will never hold.
  await conversations.update('demo', first.contextId, (state) => {
    (lastTaskTurn(state as Json) as Json).id = 'a-turn-whose-reply-never-lands'
    return state as Json
  })
  const started = performance.now()
  const next = await client.task('notes=late', { contextId: first.contextId })
  const elapsed = performance.now() - started
  t.ok(elapsed >= SETTLE_TIMEOUT_MS - 5 && elapsed < SETTLE_TIMEOUT_MS + 5000, `answered after the bound (${Math.round(elapsed)} ms)`)
  const closed = await client.getTask(first.id)
  t.equal(closed.status.state, 'TASK_STATE_CANCELED', 'still open at the bound: closed as before')
  t.equal(textOf(closed.status.message), `Continued in task ${next.id}.`)
  t.equal(taskStore.saveListeners, 0, 'the listener went with the wait')
})

t.test('a task not stored at the bound is closed once its save lands, after the turn answered', async (t) => {
  const conversations = new MemoryConversationStore()
  let saveContext: ServerCallContext | undefined
  const taskStore = new (class extends BoundedMemoryTaskStore {
    override async save (task: Json, context: ServerCallContext): Promise<void> {
      saveContext ??= context
      await super.save(task, context)
    }
  })()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: taskStore } }))
  const first = await client.task('book a table')
  // The conversation's open turn now names a task no save has written yet (its turn's instance is slow).
  await conversations.update('demo', first.contextId, (state) => {
    (lastTaskTurn(state as Json) as Json).taskId = 'late-task'
    return state as Json
  })
  const started = performance.now()
  const next = await client.task('notes=late', { contextId: first.contextId })
  const elapsed = performance.now() - started
  t.ok(elapsed >= SETTLE_TIMEOUT_MS - 5 && elapsed < SETTLE_TIMEOUT_MS + 5000, `answered after the bound (${Math.round(elapsed)} ms)`)
  t.ok(taskStore.saveListeners > 0, 'the close still waits for the old task, after the turn answered')
  // The slow turn's save lands: its task holds its reply, waiting for input.
  const stored = await taskStore.load(first.id, saveContext as ServerCallContext) as Json
  await taskStore.save({ ...stored, id: 'late-task', status: { ...stored.status, state: TaskState.TASK_STATE_INPUT_REQUIRED } }, saveContext as ServerCallContext)
  let closed: Json
  for (let i = 0; i < 100; i++) {
    closed = await client.getTask('late-task')
    if (closed.status.state !== 'TASK_STATE_INPUT_REQUIRED') break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(closed.status.state, 'TASK_STATE_CANCELED', 'closed once stored')
  t.equal(textOf(closed.status.message), `Continued in task ${next.id}.`)
  t.equal(taskStore.saveListeners, 0, 'the listener went with the wait')
  t.ok(LATE_SETTLE_MS > SETTLE_TIMEOUT_MS)
})

t.test('a store that fails while the late close waits: the turn has answered, the old task stays as it was', async (t) => {
  const conversations = new MemoryConversationStore()
  let lateLoads = 0
  const taskStore = new (class extends BoundedMemoryTaskStore {
    override async load (taskId: string, context: ServerCallContext): Promise<Json> {
      // The turn's own wait reads it twice (at its start and at the bound); the late close's first read fails.
      if (taskId === 'late-task' && ++lateLoads > 2) throw new Error('the store is down')
      return await super.load(taskId, context)
    }
  })()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: taskStore } }))
  const first = await client.task('book a table')
  await conversations.update('demo', first.contextId, (state) => {
    (lastTaskTurn(state as Json) as Json).taskId = 'late-task'
    return state as Json
  })
  const next = await client.task('notes=late', { contextId: first.contextId })
  t.equal(next.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the turn answered')
  for (let i = 0; i < 100 && taskStore.saveListeners > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(lateLoads > 2, 'the late close tried to read the task')
  t.equal(taskStore.saveListeners, 0, 'and gave up its wait: nothing is left waiting, nothing thrown')
})

if (url === undefined) {
  t.test('PostgreSQL, one instance', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
  t.test('PostgreSQL, two instances on one database', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL, one instance', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    await parallelTurns(t, [await gateway(t, { env })])
  })
  t.test('PostgreSQL, two instances on one database', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    await parallelTurns(t, [await gateway(t, { env }), await gateway(t, { env })])
  })
}
