import t from 'tap'
import { TaskState } from '@a2a-js/sdk'
import { DefaultExecutionEventBusManager, ServerCallContext, type ExecutionEventBusManager } from '@a2a-js/sdk/server'
import { A2ADispatcher } from '../../src/jsonrpc/dispatch.js'
import { KeptBusRelease } from '../../src/a2a/sdk-internals.js'
import { inputRequiredExecutor } from '../fixtures/a2a-executors.js'
import { statusEvent, TestEventHub } from '../fixtures/task-events.js'

const context = new ServerCallContext()

function setup (inner: ExecutionEventBusManager = new DefaultExecutionEventBusManager()) {
  const hub = new TestEventHub()
  const manager = new KeptBusRelease(inner, hub)
  const bus = manager.createOrGetByTaskId('t', context)
  let finished = 0
  bus.on('finished', () => { finished++ })
  return { hub, manager, bus, finished: () => finished }
}

t.test('a bus kept for an interrupted task is finished and removed when an event ends the task', async (t) => {
  for (const state of [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]) {
    const { hub, manager, bus, finished } = setup()
    t.equal(manager.settleByTaskId('t', bus, state, context), false, 'the handler keeps the bus, as it would')
    t.equal(manager.watched, 1)
    hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING'))
    hub.publish('t', { artifactUpdate: { taskId: 't', artifact: { artifactId: 'a', parts: [] } } })
    t.equal(manager.getByTaskId('t', context), bus, 'events that do not end the task leave it kept')
    hub.publish('t', statusEvent('t', 'TASK_STATE_CANCELED', 'continued elsewhere'))
    t.equal(finished(), 1, 'finished: its queues stop')
    t.equal(manager.getByTaskId('t', context), undefined, 'removed')
    t.equal(manager.watched, 0)
    t.equal(hub.count('t'), 0, 'unsubscribed')
  }
})

t.test('no watch for a bus the handler closes anyway, nor for one the inner manager settles itself', async (t) => {
  for (const state of [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_WORKING, undefined]) {
    const { manager, bus } = setup()
    t.equal(manager.settleByTaskId('t', bus, state, context), false)
    t.equal(manager.watched, 0, String(state))
  }
  const owning = new DefaultExecutionEventBusManager() as ExecutionEventBusManager
  owning.settleByTaskId = () => true
  const { manager, bus } = setup(owning)
  t.equal(manager.settleByTaskId('t', bus, TaskState.TASK_STATE_INPUT_REQUIRED, context), true)
  t.equal(manager.watched, 0)
})

t.test('a new execution on the task, a cleanup or a second settle end the watch', async (t) => {
  const { hub, manager, bus, finished } = setup()
  manager.settleByTaskId('t', bus, TaskState.TASK_STATE_INPUT_REQUIRED, context)
  manager.settleByTaskId('t', bus, TaskState.TASK_STATE_INPUT_REQUIRED, context)
  t.equal(hub.count('t'), 1, 'settled twice: one watch')
  t.equal(manager.createOrGetByTaskId('t', context), bus, 'a follow-up message takes the same bus back')
  t.equal(manager.watched, 0)
  hub.publish('t', statusEvent('t', 'TASK_STATE_COMPLETED'))
  t.equal(finished(), 0, 'the running execution keeps its bus')
  manager.settleByTaskId('t', bus, TaskState.TASK_STATE_INPUT_REQUIRED, context)
  manager.cleanupByTaskId('t', context)
  t.equal(manager.watched, 0)
  t.equal(hub.count('t'), 0)
})

t.test('through the dispatcher: a SubscribeToTask after the task ended elsewhere finds no bus to wait on', async (t) => {
  const card = { name: 'Asker', description: 'asks first', capabilities: { streaming: true } }
  const hub = new TestEventHub()
  const dispatcher = new A2ADispatcher({ card, executor: inputRequiredExecutor(), events: hub })
  const sent = await dispatcher.call({
    id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }
  }, new ServerCallContext())
  const task = (sent as { result: { task: { id: string, status: { state: string } } } }).result.task
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(hub.count(task.id), 1, 'the kept bus is watched')
  hub.publish(task.id, statusEvent(task.id, 'TASK_STATE_CANCELED'))
  t.equal(hub.count(task.id), 0)
  // The store still says INPUT_REQUIRED (only the hub heard of the end): the SDK sends the snapshot, and with no
  // bus kept it has nothing to wait on.
  const opened = dispatcher.open({ id: 2, method: 'SubscribeToTask', params: { id: task.id } }, new ServerCallContext())
  t.teardown(() => opened.release())
  const results: unknown[] = []
  const ended = (async () => { for await (const result of opened.source) results.push(result) })()
  const outcome = await Promise.race([ended.then(() => 'ended'), new Promise((resolve) => setTimeout(resolve, 1000, 'still open'))])
  t.equal(outcome, 'ended')
  t.equal(results.length, 1, 'the snapshot')
})
