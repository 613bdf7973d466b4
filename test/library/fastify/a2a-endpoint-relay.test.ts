/** a2aEndpoint with a task event source: streams on a task left WORKING stay open and relay its events. */
import t from 'tap'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { buildApp, parseSse, rpc, until, userMessage } from '../../fixtures/a2a-app.js'
import { messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { statusEvent, TestEventHub, waitingExecutor } from '../../fixtures/task-events.js'

const ACTIVE = { 'a2a-extensions': CONVERSE_EXTENSION_URI }

t.test('SendStreamingMessage on a task left WORKING: relayed events, decorated, until the task ends', async (t) => {
  const hub = new TestEventHub()
  const app = await buildApp(waitingExecutor(), { events: hub })
  t.teardown(() => app.close())
  const response = rpc(app, 'SendStreamingMessage', { message: userMessage('help') }, { id: 's', headers: ACTIVE })
  await until(() => hub.listeners.size === 1)
  const [taskId] = hub.listeners.keys()
  hub.publish(taskId, statusEvent(taskId, 'TASK_STATE_WORKING', 'a person answers'))
  hub.publish(taskId, statusEvent(taskId, 'TASK_STATE_COMPLETED'))
  const res = await response
  t.equal(res.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  const events = parseSse(res.body)
  t.strictSame(events.map((event) => event.data.result.task?.status.state ?? event.data.result.statusUpdate.status.state),
    ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'])
  t.ok(events.every((event) => event.data.id === 's'))
  const relayed = events[2].data.result.statusUpdate.status.message
  t.equal(relayed.parts[0].text, 'a person answers')
  t.strictSame(relayed.extensions, [CONVERSE_EXTENSION_URI], 'relayed frames get the converse decoration too')
  t.equal(hub.listeners.size, 0)
})

t.test('SubscribeToTask on a waiting task: the snapshot, then relayed events', async (t) => {
  const hub = new TestEventHub()
  const app = await buildApp(waitingExecutor(), { events: hub })
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('help') })).json().result.task
  t.equal(task.status.state, 'TASK_STATE_WORKING', 'a blocking SendMessage returns when the executor does')
  const response = rpc(app, 'SubscribeToTask', { id: task.id }, { id: 'sub' })
  await until(() => hub.count(task.id) === 1)
  hub.publish(task.id, statusEvent(task.id, 'TASK_STATE_INPUT_REQUIRED', 'which order?'))
  const events = parseSse((await response).body)
  t.equal(events.length, 2)
  t.equal(events[0].data.result.task.id, task.id)
  t.equal(events[1].data.result.statusUpdate.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(hub.listeners.size, 0)
})

t.test('finished tasks and Message replies are not held open', async (t) => {
  const hub = new TestEventHub()
  const tasks = await buildApp(taskExecutor(), { events: hub })
  t.teardown(() => tasks.close())
  t.equal(parseSse((await rpc(tasks, 'SendStreamingMessage', { message: userMessage('q') })).body).length, 4)
  const messages = await buildApp(messageExecutor(), { events: hub })
  t.teardown(() => messages.close())
  t.equal(parseSse((await rpc(messages, 'SendStreamingMessage', { message: userMessage('q') })).body).length, 1)
  t.equal(hub.listeners.size, 0)
})

t.test('closing the app ends a relaying stream and unsubscribes', async (t) => {
  const hub = new TestEventHub()
  const app = await buildApp(waitingExecutor(), { events: hub })
  const response = rpc(app, 'SendStreamingMessage', { message: userMessage('help') })
  await until(() => hub.listeners.size === 1)
  await app.close()
  t.equal(parseSse((await response).body).length, 2, 'what the SDK sent, nothing more')
  t.equal(hub.listeners.size, 0)
})

t.test('CancelTask on a waiting task whose agent publishes nothing on cancel: the SDK\'s CANCELED ends open streams', async (t) => {
  const hub = new TestEventHub()
  const app = await buildApp(waitingExecutor(), { events: hub })
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('help') })).json().result.task
  const response = rpc(app, 'SubscribeToTask', { id: task.id }, { id: 'sub' })
  await until(() => hub.count(task.id) === 1)
  const canceled = (await rpc(app, 'CancelTask', { id: task.id })).json().result
  t.equal(canceled.status.state, 'TASK_STATE_CANCELED')
  const events = parseSse((await response).body)
  t.equal(events.at(-1)?.data.result.statusUpdate.status.state, 'TASK_STATE_CANCELED', 'published on the hub: the stream ends with it')
  t.equal(hub.listeners.size, 0)
})
