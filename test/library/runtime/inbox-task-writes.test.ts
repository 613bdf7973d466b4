/**
 * The inbox writes tasks only after the conversation's change committed (ConversationStore.update's `fn` computes
 * the next state and nothing else): a store that calls `fn` twice writes nothing twice, a change that fails writes
 * nothing, a reply whose task ended between the change and the write is re-addressed (the task held now, else the
 * inbox) and never lost, a release does not end a task a client turn already answered, and both wait for a client
 * turn running on the task (its turn lock).
 */
import t from 'tap'
import { TaskState, type Task } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { MemoryTaskEventHub } from '../../../packages/a2a-converse/src/events/task-event-hub.js'
import { createInbox } from '../../../packages/a2a-converse/src/runtime/inbox.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { MemoryTaskTurnLock, taskTurnKey } from '../../../packages/a2a-converse/src/stores/task-turn-lock.js'
import {
  newConversationState, type ConversationState, type ConversationStore, type ConversationUpdate
} from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'

const AGENT = 'demo'
const CONTEXT = 'ctx-1'

function workingTask (id: string): Task {
  return {
    id,
    contextId: CONTEXT,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
    metadata: undefined
  }
}

/** A conversation a person took over, whose last client turn went into `taskId` (WORKING: held for the person). */
async function heldConversation (store: ConversationStore, taskStore: BoundedMemoryTaskStore, taskId = 'task-a'): Promise<void> {
  await store.update(AGENT, CONTEXT, async () => {
    const state = newConversationState(AGENT, CONTEXT)
    state.ownership = 'human_owned'
    state.turns.push({ id: 'turn-1', at: new Date().toISOString(), role: 'user', text: 'Can a person help me?', taskId, messageId: 'm-1' })
    return state
  })
  await taskStore.save(workingTask(taskId), new ServerCallContext())
}

/**
 * A memory store that can call `fn` twice (a store trying an optimistic path first), fail after `fn`, or run
 * something between a committed change and the caller (`afterCommit`, once).
 */
class ScriptedStore extends MemoryConversationStore {
  callsTwice = false
  failNext = false
  afterCommit: (() => Promise<void>) | undefined
  /** Runs before each of the next `beforeUpdateTimes` updates (after the caller's read). */
  beforeUpdate: (() => Promise<void>) | undefined
  beforeUpdateTimes = 0

  override async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>): Promise<R | ConversationState> {
    if (this.beforeUpdateTimes > 0) {
      this.beforeUpdateTimes--
      await this.beforeUpdate?.()
    }
    if (this.callsTwice) await fn(structuredClone(await this.get(agentId, contextId)))
    if (this.failNext) {
      this.failNext = false
      await fn(structuredClone(await this.get(agentId, contextId)))
      throw new StoreUnavailableError(new Error('connection lost at commit'))
    }
    const state = await super.update(agentId, contextId, fn)
    const after = this.afterCommit
    this.afterCommit = undefined
    await after?.()
    return state
  }
}

function setup (turnLock?: MemoryTaskTurnLock) {
  const store = new ScriptedStore()
  const taskStore = new BoundedMemoryTaskStore()
  const events = new MemoryTaskEventHub()
  const published: Array<{ taskId: string, event: Record<string, unknown> }> = []
  const publish = events.publish.bind(events)
  events.publish = async (taskId, event) => { published.push({ taskId, event }); await publish(taskId, event) }
  const inbox = createInbox({
    store,
    taskStores: new Map([[AGENT, taskStore]]),
    events,
    turnLocks: turnLock === undefined ? undefined : new Map([[AGENT, turnLock]])
  })
  const load = async (taskId: string) => await taskStore.load(taskId, new ServerCallContext()) as Task
  /** What a client turn does to a task meanwhile: moves it to `state` (a superseding close, an answer). */
  const moveTask = async (taskId: string, state: TaskState) => {
    const task = await load(taskId)
    task.status = { state, message: undefined, timestamp: new Date().toISOString() }
    await taskStore.save(task, new ServerCallContext())
  }
  return { store, taskStore, inbox, published, load, moveTask }
}

/** The person's messages a task holds (its history and status message, each message once). */
function humanTexts (task: Task): string[] {
  const messages = new Map([...task.history, ...(task.status?.message === undefined ? [] : [task.status.message])]
    .map((message) => [message.messageId, message]))
  return [...messages.values()]
    .filter((message) => (message.metadata as any)?.['https://docs.radioso.ai/reference/a2a-converse-extension/v1']?.author === 'human')
    .map((message) => message.parts.map((part: any) => part.content?.value ?? part.text).join(''))
}

t.test('a store that calls fn twice: the reply is written to the task once, published once', async (t) => {
  const { store, taskStore, inbox, published, load } = setup()
  await heldConversation(store, taskStore)
  store.callsTwice = true
  const result = await inbox.reply(AGENT, CONTEXT, 'Hello, I am here.')
  t.match(result, { taskId: 'task-a', delivered: true })
  t.same(humanTexts(await load('task-a')), ['Hello, I am here.'])
  t.equal(published.length, 1)
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.same(state.turns.filter((turn) => turn.role === 'human').map((turn) => turn.taskId), ['task-a'], 'one human turn')
})

t.test('a change that fails writes no task and publishes nothing', async (t) => {
  const { store, taskStore, inbox, published, load } = setup()
  await heldConversation(store, taskStore)
  store.failNext = true
  await t.rejects(inbox.reply(AGENT, CONTEXT, 'lost with the change'), { code: 'A2A_CONVERSE_STORE_UNAVAILABLE' })
  t.same(humanTexts(await load('task-a')), [])
  t.equal(published.length, 0)

  store.failNext = true
  await t.rejects(inbox.release(AGENT, CONTEXT), { code: 'A2A_CONVERSE_STORE_UNAVAILABLE' })
  t.equal((await load('task-a')).status?.state, TaskState.TASK_STATE_WORKING, 'the release did not end the task')
  t.equal(published.length, 0)
})

t.test('the held task ended between the change and the write: the reply goes to the task held now', async (t) => {
  const { store, taskStore, inbox, load, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.afterCommit = async () => {
    // A client turn meanwhile: a new task B, task A closed as superseded.
    await moveTask('task-a', TaskState.TASK_STATE_CANCELED)
    await taskStore.save(workingTask('task-b'), new ServerCallContext())
    await MemoryConversationStore.prototype.update.call(store, AGENT, CONTEXT, async (current) => {
      const state = current as ConversationState
      state.turns.push({ id: 'turn-2', at: new Date().toISOString(), role: 'user', text: 'Anyone?', taskId: 'task-b', messageId: 'm-2' })
      return state
    })
  }
  const result = await inbox.reply(AGENT, CONTEXT, 'Sorry for the wait.')
  t.match(result, { taskId: 'task-b', delivered: true })
  t.same(humanTexts(await load('task-a')), [], 'not in the ended task')
  t.same(humanTexts(await load('task-b')), ['Sorry for the wait.'])
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.same(state.turns.filter((turn) => turn.role === 'human').map((turn) => turn.taskId), ['task-b'], 'the turn names where it went')
  t.same(state.inbox, [])
})

/** A client turn that gives the conversation a newer held task (the one before closed as superseded). */
function clientTurns (store: ScriptedStore, taskStore: BoundedMemoryTaskStore, moveTask: (taskId: string, state: TaskState) => Promise<void>) {
  let n = 0
  return async () => {
    const previous = n === 0 ? 'task-a' : `task-turn-${n}`
    const taskId = `task-turn-${++n}`
    await moveTask(previous, TaskState.TASK_STATE_CANCELED)
    await taskStore.save(workingTask(taskId), new ServerCallContext())
    await MemoryConversationStore.prototype.update.call(store, AGENT, CONTEXT, async (current) => {
      const state = current as ConversationState
      state.turns.push({ id: `turn-x${n}`, at: new Date().toISOString(), role: 'user', text: 'Anyone?', taskId, messageId: `m-x${n}` })
      return state
    })
  }
}

// The held task is looked up before the conversation's update (a task load inside it would wait for the update's own
// session on the embedded database); a turn between that lookup and the update makes it stale.
t.test('a client turn between the held task\'s lookup and the update: looked up again, the reply goes to the newer task', async (t) => {
  const { store, taskStore, inbox, load, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.beforeUpdate = clientTurns(store, taskStore, moveTask)
  store.beforeUpdateTimes = 1
  const result = await inbox.reply(AGENT, CONTEXT, 'Here now.')
  t.match(result, { taskId: 'task-turn-1', delivered: true })
  t.same(humanTexts(await load('task-turn-1')), ['Here now.'])
  t.same(humanTexts(await load('task-a')), [])
})

t.test('client turns before every lookup\'s update: after three lookups the reply waits in the inbox', async (t) => {
  const { store, taskStore, inbox, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.beforeUpdate = clientTurns(store, taskStore, moveTask)
  store.beforeUpdateTimes = 4
  const result = await inbox.reply(AGENT, CONTEXT, 'Busy line.')
  t.match(result, { delivered: false })
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.same(state.inbox.map((reply) => reply.text), ['Busy line.'])
})

t.test('a client turn between a release\'s lookup and its update: looked up again, the newer held task is ended', async (t) => {
  const { store, taskStore, inbox, load, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.beforeUpdate = clientTurns(store, taskStore, moveTask)
  store.beforeUpdateTimes = 1
  await inbox.release(AGENT, CONTEXT)
  t.equal((await load('task-turn-1')).status?.state, TaskState.TASK_STATE_COMPLETED, 'the task held at the release ends')
  t.equal((await store.get(AGENT, CONTEXT) as ConversationState).ownership, 'ai_owned')
})

t.test('client turns before every release\'s update: after three lookups it releases and leaves their task to them', async (t) => {
  const { store, taskStore, inbox, load, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.beforeUpdate = clientTurns(store, taskStore, moveTask)
  store.beforeUpdateTimes = 4
  await inbox.release(AGENT, CONTEXT)
  t.equal((await store.get(AGENT, CONTEXT) as ConversationState).ownership, 'ai_owned')
  t.equal((await load('task-turn-4')).status?.state, TaskState.TASK_STATE_WORKING, 'the last turn\'s task is left as it is')
})

t.test('the held task ended and none is held now: the reply waits in the inbox', async (t) => {
  const { store, taskStore, inbox, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.afterCommit = async () => {
    await moveTask('task-a', TaskState.TASK_STATE_CANCELED)
  }
  const result = await inbox.reply(AGENT, CONTEXT, 'Still there?')
  t.match(result, { delivered: false })
  t.notOk((result as { taskId?: string }).taskId)
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.same(state.inbox.map((reply) => reply.text), ['Still there?'])
  t.same(state.turns.filter((turn) => turn.role === 'human').map((turn) => turn.taskId), [undefined])
})

t.test('the held task ended and the inbox is full: the reply stays in the turns, undelivered', async (t) => {
  const { store, taskStore, inbox, moveTask } = setup()
  await heldConversation(store, taskStore)
  await store.update(AGENT, CONTEXT, async (current) => {
    const state = current as ConversationState
    for (let index = 0; index < store.limits.maxInbox; index++) state.inbox.push({ id: `r-${index}`, at: new Date().toISOString(), text: 'queued' })
    return state
  })
  store.afterCommit = async () => {
    await moveTask('task-a', TaskState.TASK_STATE_CANCELED)
  }
  const result = await inbox.reply(AGENT, CONTEXT, 'One too many')
  t.match(result, { delivered: false })
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.equal(state.inbox.length, store.limits.maxInbox)
  t.same(state.turns.filter((turn) => turn.role === 'human').map((turn) => [turn.text, turn.taskId]), [['One too many', undefined]],
    'recorded, not lost, and naming no task')
})

t.test('released between the change and the write, with the task ended: the reply is recorded, undelivered', async (t) => {
  const { store, taskStore, inbox, load, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.afterCommit = async () => {
    await moveTask('task-a', TaskState.TASK_STATE_COMPLETED)
    await MemoryConversationStore.prototype.update.call(store, AGENT, CONTEXT, async (current) => ({ ...current as ConversationState, ownership: 'ai_owned' }))
  }
  const result = await inbox.reply(AGENT, CONTEXT, 'Too late')
  t.match(result, { delivered: false, message: { role: 'ROLE_AGENT' } })
  t.same(humanTexts(await load('task-a')), [])
})

t.test('a release does not end a task a client turn answered in between', async (t) => {
  const { store, taskStore, inbox, load, published, moveTask } = setup()
  await heldConversation(store, taskStore)
  store.afterCommit = async () => {
    await moveTask('task-a', TaskState.TASK_STATE_INPUT_REQUIRED)
  }
  const view = await inbox.release(AGENT, CONTEXT)
  t.equal(view?.ownership, 'ai_owned')
  t.equal((await load('task-a')).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the client turn\'s answer stands')
  t.equal(published.length, 0)
})

t.test('a release ends the held task once, after the change', async (t) => {
  const { store, taskStore, inbox, load, published } = setup()
  await heldConversation(store, taskStore)
  store.callsTwice = true
  await inbox.release(AGENT, CONTEXT)
  t.equal((await load('task-a')).status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(published.length, 1)
})

t.test('a reply and a release wait for a client turn running on the task (its turn lock)', async (t) => {
  const lock = new MemoryTaskTurnLock()
  const { store, taskStore, inbox, load } = setup(lock)
  await heldConversation(store, taskStore)
  const release = await lock.acquire(taskTurnKey(new ServerCallContext(), 'task-a'))
  const reply = inbox.reply(AGENT, CONTEXT, 'After your turn')
  await new Promise((resolve) => setTimeout(resolve, 30))
  t.same(humanTexts(await load('task-a')), [], 'nothing written while the turn runs')
  await release()
  t.match(await reply, { taskId: 'task-a', delivered: true })
  t.same(humanTexts(await load('task-a')), ['After your turn'])
})

t.test('a task a client turn keeps busy past the lock\'s bound: the reply goes to the inbox, the release leaves it', async (t) => {
  const lock = new MemoryTaskTurnLock({ waitTimeoutMs: 20 })
  const { store, taskStore, inbox, load } = setup(lock)
  await heldConversation(store, taskStore)
  const release = await lock.acquire(taskTurnKey(new ServerCallContext(), 'task-a'))
  t.teardown(release)
  const result = await inbox.reply(AGENT, CONTEXT, 'Busy?')
  t.match(result, { delivered: false })
  const state = await store.get(AGENT, CONTEXT) as ConversationState
  t.same(state.inbox.map((reply) => reply.text), ['Busy?'])
  await inbox.release(AGENT, CONTEXT)
  t.equal((await load('task-a')).status?.state, TaskState.TASK_STATE_WORKING, 'left to the turn that holds it')
})

t.test('a lock that fails otherwise fails the reply', async (t) => {
  const failing = { acquire: async () => { throw new StoreUnavailableError(new Error('database down')) } }
  const store = new ScriptedStore()
  const taskStore = new BoundedMemoryTaskStore()
  const inbox = createInbox({ store, taskStores: new Map([[AGENT, taskStore]]), events: new MemoryTaskEventHub(), turnLocks: new Map([[AGENT, failing]]) })
  await heldConversation(store, taskStore)
  await t.rejects(inbox.reply(AGENT, CONTEXT, 'x'), { code: 'A2A_CONVERSE_STORE_UNAVAILABLE' })
})

t.test('the held task ends between the inbox\'s check and its write: the store refuses it, the reply goes to the inbox', async (t) => {
  const { store, taskStore, inbox, load } = setup()
  await heldConversation(store, taskStore)
  const realLoad = taskStore.load.bind(taskStore)
  let loads = 0
  let raced = false
  taskStore.load = async (taskId, context) => {
    const task = await realLoad(taskId, context)
    // The reply's loads: the held task while addressing it (1), the check before the write (2), the check after.
    if (++loads === 2) {
      raced = true
      // A superseding turn's close lands right after the inbox read the task.
      await taskStore.save({ ...task as Task, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } }, context)
    }
    return task
  }
  const result = await inbox.reply(AGENT, CONTEXT, 'Raced')
  t.ok(raced)
  t.match(result, { delivered: false })
  t.equal((await load('task-a')).status?.state, TaskState.TASK_STATE_CANCELED, 'the end stands')
  t.same(humanTexts(await load('task-a')), [])
  t.same((await store.get(AGENT, CONTEXT) as ConversationState).inbox.map((reply) => reply.text), ['Raced'])
})
