/**
 * The task whose turn lock a request holds (held-task-turn.ts): the dispatcher marks the request's call context
 * while it holds the lock of a task with a lock every instance shares (`spansInstances`), for the SDK's reads and
 * saves of that turn only — not after the release, not with a lock of one process; a wait for another writer's save
 * (`loadWhen`) forgets what the request kept before each read. The store's use of the mark: postgres-held-task-turn.test.ts.
 */
import t, { type Test } from 'tap'
import type { Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { A2ADispatcher } from '../../../packages/a2a-converse/src/backends/local/dispatch.js'
import {
  forgetHeldTask, heldTaskTurn, holdTaskTurn, HELD_TASK_TURN_STATE
} from '../../../packages/a2a-converse/src/stores/held-task-turn.js'
import { RememberedTasks } from '../../../packages/a2a-converse/src/stores/postgres/remembered-tasks.js'
import { MemoryTaskTurnLock, type TaskTurnLock } from '../../../packages/a2a-converse/src/stores/task-turn-lock.js'
import { loadWhen, withSaveSignals } from '../../../packages/a2a-converse/src/stores/task-save-signals.js'
import { inputRequiredExecutor } from '../../fixtures/a2a-executors.js'

t.test('a mark names one task, is removed by its own function only, and forgets what is kept on request', async (t) => {
  const context = new ServerCallContext()
  t.equal(heldTaskTurn(context, 't-1'), undefined, 'no mark')
  const unhold = holdTaskTurn(context, 't-1')
  const held = heldTaskTurn(context, 't-1')
  t.match(held, { taskId: 't-1', kept: undefined })
  t.equal(heldTaskTurn(context, 't-2'), undefined, 'another task of the same request: not held')
  held!.kept = new RememberedTasks(1)
  forgetHeldTask(context, 't-2')
  t.ok(held!.kept, 'another task forgotten: this one kept')
  forgetHeldTask(context, 't-1')
  t.equal(held!.kept, undefined, 'forgotten')
  const newer = holdTaskTurn(context, 't-3')
  unhold()
  t.equal(heldTaskTurn(context, 't-3'), context.state.get(HELD_TASK_TURN_STATE), 'an older mark\'s removal leaves the newer one')
  newer()
  newer()
  t.equal(heldTaskTurn(context, 't-3'), undefined, 'removed, twice without harm')
  forgetHeldTask(context, 't-3')
})

/** A memory task store that records, at each load and save of a task, whether the request held its turn. */
function recordingStore (): TaskStore & { held: boolean[] } {
  const store = new InMemoryTaskStore()
  const held: boolean[] = []
  return {
    held,
    load: async (taskId, context) => {
      held.push(heldTaskTurn(context as ServerCallContext, taskId) !== undefined)
      return await store.load(taskId, context)
    },
    save: async (task: Task, context) => {
      held.push(heldTaskTurn(context as ServerCallContext, task.id) !== undefined)
      await store.save(task, context)
    },
    list: async (params, context) => await store.list(params, context)
  }
}

const card = { name: 'Orders', description: 'asks which order', capabilities: { streaming: true } }
const message = (text: string, taskId?: string) =>
  ({ message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }], ...(taskId === undefined ? {} : { taskId }) } })

/** A turn that starts a task, then one that answers it (blocking or streaming); what the store saw, and the context. */
async function turns (t: Test, lock: TaskTurnLock, streaming: boolean): Promise<{ held: boolean[], context: ServerCallContext }> {
  const taskStore = recordingStore()
  const dispatcher = new A2ADispatcher({ card, executor: inputRequiredExecutor(), taskStore, turnLock: lock })
  const started = await dispatcher.call({ id: 1, method: 'SendMessage', params: message('hello') }, new ServerCallContext()) as { result: { task: { id: string } } }
  const taskId = started.result.task.id
  taskStore.held.length = 0
  const context = new ServerCallContext()
  const params = message('42', taskId)
  if (streaming) {
    const frames: unknown[] = []
    for await (const frame of dispatcher.open({ id: 2, method: 'SendStreamingMessage', params }, context).source) frames.push(frame)
    t.ok(frames.length > 0, 'the stream answered')
  } else {
    t.match(await dispatcher.call({ id: 2, method: 'SendMessage', params }, context), { result: { task: { status: { state: 'TASK_STATE_COMPLETED' } } } })
  }
  return { held: taskStore.held, context }
}

const everyInstance = (): TaskTurnLock => {
  const inner = new MemoryTaskTurnLock()
  return { spansInstances: true, acquire: async (key, signal) => await inner.acquire(key, signal) }
}

for (const streaming of [false, true]) {
  t.test(`${streaming ? 'a streaming' : 'a blocking'} turn under a lock every instance shares: marked while it holds it, not after`, async (t) => {
    const { held, context } = await turns(t, everyInstance(), streaming)
    t.ok(held.length >= 3, 'the SDK loaded and saved the task')
    t.ok(held.every((marked) => marked), 'every load and save of the turn: marked')
    t.equal(context.state.get(HELD_TASK_TURN_STATE), undefined, 'released: no mark')
  })

  t.test(`${streaming ? 'a streaming' : 'a blocking'} turn under a lock of this process only: never marked`, async (t) => {
    const { held } = await turns(t, new MemoryTaskTurnLock(), streaming)
    t.ok(held.length >= 3)
    t.ok(held.every((marked) => !marked))
  })
}

t.test('loadWhen forgets what the request kept of a task it holds before each read (with and without save signals)', async (t) => {
  for (const signalled of [false, true]) {
    const memory = new InMemoryTaskStore()
    const store = signalled ? withSaveSignals(memory) : memory
    const context = new ServerCallContext()
    const unhold = holdTaskTurn(context, 'w-1')
    const held = heldTaskTurn<RememberedTasks>(context, 'w-1')!
    const kept: Array<RememberedTasks | undefined> = []
    const load = store.load.bind(store)
    store.load = async (taskId, ctx) => {
      kept.push(held.kept)
      // The store keeps what it read again (as PostgresTaskStore does): forgotten before the next read.
      held.kept = new RememberedTasks(1)
      return await load(taskId, ctx)
    }
    held.kept = new RememberedTasks(1)
    const wait = loadWhen(store, 'w-1', context, (task) => task !== undefined, signalled ? 5000 : 10)
    if (signalled) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      await store.save({ id: 'w-1', contextId: 'c', status: undefined, artifacts: [], history: [], metadata: {} }, new ServerCallContext())
    }
    t.equal((await wait)?.id, signalled ? 'w-1' : undefined)
    t.equal(kept.length, 2, 'read twice')
    t.ok(kept.every((entry) => entry === undefined), 'nothing kept at either read')
    unhold()
  }
})
