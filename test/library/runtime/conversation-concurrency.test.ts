/** Parallel requests to one conversation: serialised per conversation, no lost turn, one consistent outcome. */
import t from 'tap'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { Client, gateway, message, statusEnvelope, textOf } from '../../fixtures/conversation-gateway.js'
import { SlowConversationStore, SlowTaskStore } from '../../fixtures/conversation-slow-stores.js'

const N = 20

t.test(`${N} parallel slot-filling messages to one task: every turn recorded, the task history complete`, async (t) => {
  const conversations = new MemoryConversationStore()
  const client = new Client(t, await gateway(t, { conversations }))
  const first = await client.task('book a table')
  const bodies = await Promise.all(Array.from({ length: N }, (_, index) =>
    client.call('SendMessage', { message: message(`notes=note ${index}`, { taskId: first.id }) })))
  for (const body of bodies) t.equal(body.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')

  const state = await conversations.get('demo', first.contextId)
  t.equal(state?.turns.length, 2 + 2 * N, 'a user and an agent turn per message')
  t.equal(state?.version, 1 + N, 'one update per message')
  t.equal(state?.routine?.taskId, first.id)
  t.match(state?.routine?.values, { notes: /^note \d+$/ })

  const task = await client.getTask(first.id)
  t.equal(task.history.length, 2 + 2 * N, 'no message lost')
  const notes = task.history.filter((entry: any) => entry.role === 'ROLE_USER').map((entry: any) => textOf(entry))
  t.equal(new Set(notes).size, N + 1)
})

t.test(`${N} parallel messages to one task, stores with latency: the conversation state is consistent`, async (t) => {
  const conversations = new SlowConversationStore()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: new SlowTaskStore() } }))
  const first = await client.task('book a table')
  const bodies = await Promise.all(Array.from({ length: N }, (_, index) =>
    client.call('SendMessage', { message: message(index === N - 1 ? 'date=2026-12-24' : `notes=note ${index}`, { taskId: first.id }) })))
  t.ok(bodies.every((body) => body.result.task.id === first.id))
  const state = await conversations.get('demo', first.contextId)
  t.equal(state?.turns.length, 2 + 2 * N, 'a user and an agent turn per message')
  t.equal(state?.version, 1 + N)
  t.equal(state?.routine?.values.date, '2026-12-24', 'no update lost')
  t.strictSame(state?.turns.filter((turn) => turn.role === 'user').map((turn) => turn.taskId), Array(N + 1).fill(first.id))
  // (The SDK appends each incoming message to a task's history with an unlocked load/save before the executor
  // runs, so under latency it can lose one of them; the conversation state cannot.)
})

t.test(`${N} parallel messages with the contextId only, stores with latency: one open task at the end`, async (t) => {
  const conversations = new SlowConversationStore()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: new SlowTaskStore() } }))
  const first = await client.task('book a table')
  const tasks = await Promise.all(Array.from({ length: N }, async (_, index) =>
    (await client.task(`notes=note ${index}`, { contextId: first.contextId }))))
  const ids = new Set(tasks.map((task) => task.id))
  t.equal(ids.size, N, 'each message its own task')

  const state = await conversations.get('demo', first.contextId)
  t.equal(state?.turns.length, 2 + 2 * N, 'no turn lost')
  t.equal(state?.version, 1 + N)
  t.equal(state?.routine?.status, 'waiting_for_input')
  const open = state?.routine?.taskId as string
  t.ok(ids.has(open), 'the routine lives in one of the new tasks')

  const all = await Promise.all([first.id, ...ids].map((id) => client.getTask(id)))
  const states = all.map((task) => task.status.state)
  t.equal(states.filter((s) => s === 'TASK_STATE_INPUT_REQUIRED').length, 1, 'exactly one task waits for input')
  t.equal(all.find((task) => task.status.state === 'TASK_STATE_INPUT_REQUIRED').id, open, 'the routine\'s')
  for (const task of all.filter((task) => task.id !== open)) {
    t.equal(task.status.state, 'TASK_STATE_CANCELED')
    t.match(textOf(task.status.message), /^Continued in task [\w-]+\.$/)
  }
  // Each closed task points to the task of the turn after it: following the chain from the first task reaches the
  // open one after N steps.
  const next = new Map(all.filter((task) => task.id !== open).map((task) => [task.id, task.status.message.referenceTaskIds[0]]))
  let cursor = first.id
  for (let step = 0; step < N; step++) cursor = next.get(cursor)
  t.equal(cursor, open, 'one chain of continuations')
})

t.test(`${N} parallel turns that each could finish the routine: exactly one completes it`, async (t) => {
  const conversations = new SlowConversationStore()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: new SlowTaskStore() } }))
  const first = await client.task('book a table, date=2026-12-24')
  const results = await Promise.all(Array.from({ length: N }, (_, index) =>
    client.send(`partySize=${index + 1}`, { contextId: first.contextId })))
  const completed = results.filter((result) => result.task?.status.state === 'TASK_STATE_COMPLETED')
  t.equal(completed.length, 1, 'one completion')
  t.equal(results.filter((result) => result.message !== undefined).length, N - 1, 'the others found no routine running')
  const state = await conversations.get('demo', first.contextId)
  t.equal(state?.routine?.status, 'completed')
  t.equal(state?.routine?.taskId, completed[0].task.id)
  t.strictSame(completed[0].task.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: state?.routine?.values.partySize })
  t.equal(statusEnvelope(t, completed[0].task).routine?.status, 'completed')
  t.equal((await client.getTask(first.id)).status.state, 'TASK_STATE_CANCELED')
  t.equal(state?.turns.length, 2 + 2 * N)
})

t.test('parallel conversations do not wait for or touch each other', async (t) => {
  const conversations = new SlowConversationStore()
  const client = new Client(t, await gateway(t, { conversations, taskStores: { demo: new SlowTaskStore() } }))
  const done = await Promise.all(Array.from({ length: 10 }, async (_, index) => {
    const first = await client.task('book a table')
    return client.task(`date=2027-01-${String(index + 1).padStart(2, '0')}, partySize=${index + 1}`, { taskId: first.id })
  }))
  const contexts = new Set(done.map((task) => task.contextId))
  t.equal(contexts.size, 10)
  for (const [index, task] of done.entries()) {
    t.equal(task.status.state, 'TASK_STATE_COMPLETED')
    t.equal(task.artifacts[0].parts[0].data.values.partySize, index + 1)
  }
})

t.test('a conversation update that fails fails the turn as it did before reservations (a FAILED task; the store\'s words stay in the log)', async (t) => {
  class FailingStore extends MemoryConversationStore {
    override async update (): Promise<never> {
      throw new Error('the conversation store failed')
    }
  }
  const client = new Client(t, await gateway(t, { conversations: new FailingStore() }))
  const body = await client.call('SendMessage', { message: message('book a table') })
  t.equal(body.result?.task?.status?.state, 'TASK_STATE_FAILED')
  t.equal(textOf(body.result.task.status.message), 'Agent execution error: the turn could not be completed')
})
