/** a2aEndpoint: SendStreamingMessage and SubscribeToTask over SSE (inject returns finite streams whole). */
import t, { type Test } from 'tap'
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { buildApp, ENVELOPE, logCapture, parseSse, rpc, until, userMessage } from '../../fixtures/a2a-app.js'
import {
  doubleTaskExecutor, hangingExecutor, inputRequiredExecutor, messageExecutor, misorderedExecutor, ObservedTaskStore, taskExecutor
} from '../../fixtures/a2a-executors.js'

const ACTIVE = { 'a2a-extensions': CONVERSE_EXTENSION_URI }
const info = (reason: string, metadata: Record<string, string> = {}) =>
  [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org', metadata }]

function sseHeaders (t: Test, headers: Record<string, unknown>) {
  t.equal(headers['content-type'], 'text/event-stream')
  t.equal(headers['cache-control'], 'no-cache')
  t.equal(headers['x-accel-buffering'], 'no')
}

t.test('a Message reply: one frame with the request id, then the stream ends', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const res = await rpc(app, 'SendStreamingMessage', { message: userMessage('hi') }, { id: 'stream-1' })
  t.equal(res.statusCode, 200)
  sseHeaders(t, res.headers)
  t.equal(res.headers['a2a-extensions'], undefined)
  const events = parseSse(res.body)
  t.equal(events.length, 1)
  t.equal(events[0].event, 'message')
  t.match(events[0].data, { jsonrpc: '2.0', id: 'stream-1', result: { message: { role: 'ROLE_AGENT', parts: [{ text: 'echo: hi' }] } } })
  t.notOk(events[0].data.result.message.extensions, 'no envelope when the extension is not active')
  t.match(res.body, /^data: \{.*\}\n\n$/s, 'frames are `data: <json>` and a blank line')
})

t.test('a Task reply: task, WORKING, artifact, COMPLETED; decorated and echoed when the extension is active', async (t) => {
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const res = await rpc(app, 'SendStreamingMessage', { message: userMessage('q') }, { id: 9, headers: ACTIVE })
  sseHeaders(t, res.headers)
  t.equal(res.headers['a2a-extensions'], CONVERSE_EXTENSION_URI, 'the echo header survives hijack()')
  const events = parseSse(res.body)
  t.strictSame(events.map((event) => Object.keys(event.data.result)[0]), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  t.ok(events.every((event) => event.data.id === 9 && event.data.jsonrpc === '2.0' && event.event === 'message'))
  t.equal(events[1].data.result.statusUpdate.status.state, 'TASK_STATE_WORKING')
  t.equal(events[3].data.result.statusUpdate.status.state, 'TASK_STATE_COMPLETED')
  const artifact = events[2].data.result.artifactUpdate.artifact
  t.strictSame(artifact.extensions, [CONVERSE_EXTENSION_URI])
  t.match(artifact.metadata[CONVERSE_EXTENSION_URI], { author: 'agent', answerCoverage: ENVELOPE.answerCoverage })
  t.equal(events[0].data.result.task.history[0].metadata, undefined, 'user messages get no envelope')
})

t.test('envelopes the agent attached are stripped when the extension is not active', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const metadata = { [CONVERSE_EXTENSION_URI]: ENVELOPE, keep: 'me' }
  const inactive = parseSse((await rpc(app, 'SendStreamingMessage', { message: userMessage('x', { metadata, extensions: [CONVERSE_EXTENSION_URI] }) })).body)
  t.strictSame(inactive[0].data.result.message.metadata, { keep: 'me' })
  t.notOk(inactive[0].data.result.message.extensions)
  const active = parseSse((await rpc(app, 'SendStreamingMessage', { message: userMessage('x', { metadata }) }, { headers: ACTIVE })).body)
  t.match(active[0].data.result.message.metadata, { keep: 'me', [CONVERSE_EXTENSION_URI]: { answerCoverage: ENVELOPE.answerCoverage } })
})

t.test('errors before the first event: plain JSON-RPC error replies (status 200, application/json), no stream', async (t) => {
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const unknown = await rpc(app, 'SubscribeToTask', { id: 'no-such-task' }, { id: 4, headers: ACTIVE })
  t.equal(unknown.statusCode, 200)
  t.match(unknown.headers['content-type'], /^application\/json/)
  t.equal(unknown.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  t.strictSame(unknown.json(), {
    jsonrpc: '2.0', id: 4, error: { code: -32001, message: 'Task not found: no-such-task', data: info('TASK_NOT_FOUND', { taskId: 'no-such-task' }) }
  })

  const done = (await rpc(app, 'SendMessage', { message: userMessage('q') })).json().result.task
  const terminal = (await rpc(app, 'SubscribeToTask', { id: done.id })).json()
  t.match(terminal, { id: 1, error: { code: -32004, data: info('UNSUPPORTED_OPERATION', { taskId: done.id }) } })
  const toTerminal = (await rpc(app, 'SendStreamingMessage', { message: userMessage('more', { taskId: done.id }) })).json()
  t.match(toTerminal, { error: { code: -32004 } }, 'a streamed message to a terminal task')
  const unknownTask = (await rpc(app, 'SendStreamingMessage', { message: userMessage('x', { taskId: 'nope' }) })).json()
  t.match(unknownTask, { error: { code: -32001, data: info('TASK_NOT_FOUND', { taskId: 'nope' }) } })
  const misordered = await buildApp(misorderedExecutor())
  t.teardown(() => misordered.close())
  t.match((await rpc(misordered, 'SendStreamingMessage', { message: userMessage('x') })).json(), { error: { code: -32004 } })
})

t.test('request-level errors of streaming methods stay plain JSON-RPC responses', async (t) => {
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const invalid = await rpc(app, 'SubscribeToTask', {})
  t.match(invalid.headers['content-type'], /^application\/json/)
  t.equal(invalid.json().error.code, -32602)
  const off = await buildApp(taskExecutor(), { capabilities: { streaming: false } })
  t.teardown(() => off.close())
  const gated = await rpc(off, 'SendStreamingMessage', { message: userMessage('x') })
  t.match(gated.headers['content-type'], /^application\/json/)
  t.strictSame(gated.json().error, {
    code: -32004, message: 'Streaming is not supported by this agent', data: info('UNSUPPORTED_OPERATION', { method: 'SendStreamingMessage' })
  })
  t.equal((await rpc(off, 'SubscribeToTask', { id: 't' })).json().error.code, -32004)
})

t.test('an error after the stream started: a JSON-RPC error frame, then the stream ends', async (t) => {
  const app = await buildApp(doubleTaskExecutor())
  t.teardown(() => app.close())
  const events = parseSse((await rpc(app, 'SendStreamingMessage', { message: userMessage('x') }, { id: 'mid' })).body)
  t.equal(events.length, 2)
  t.match(events[0], { event: 'message', data: { id: 'mid', result: { task: {} } } })
  t.match(events[1], { event: 'error', data: { jsonrpc: '2.0', id: 'mid', error: { code: -32004 } } })
})

t.test('an internal error before the first event: -32603 with no details, logged', async (t) => {
  const capture = logCapture()
  const store: TaskStore = Object.assign(new InMemoryTaskStore(), {
    async save (): Promise<void> { throw new Error('disk full at /var/lib/tasks') }
  })
  const app = await buildApp(taskExecutor(), { taskStore: store, logger: capture.logger })
  t.teardown(() => app.close())
  const res = await rpc(app, 'SendStreamingMessage', { message: userMessage('x') }, { id: 1 })
  t.strictSame(res.json(), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error while handling SendStreamingMessage' } })
  t.notMatch(res.body, /disk full/)
  t.match(capture.lines, [{ msg: 'A2A request handler failed', method: 'SendStreamingMessage', err: { message: 'disk full at /var/lib/tasks' } }])
})

t.test('SubscribeToTask on an interrupted task: the snapshot, then the events of the follow-up', async (t) => {
  const store = new ObservedTaskStore()
  const app = await buildApp(inputRequiredExecutor(), { taskStore: store })
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('refund') })).json().result.task
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const listening = store.nextLoad(task.id)
  const subscription = rpc(app, 'SubscribeToTask', { id: task.id }, { id: 'sub', headers: ACTIVE })
  await listening // the SDK loads the task after its queue listens to the task's events
  const followUp = (await rpc(app, 'SendMessage', { message: userMessage('A-1', { taskId: task.id }) })).json().result.task
  t.equal(followUp.status.state, 'TASK_STATE_COMPLETED')
  const events = parseSse((await subscription).body)
  t.match(events[0], { event: 'message', data: { id: 'sub', result: { task: { id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } } } } })
  const last = events[events.length - 1].data.result
  t.equal(last.statusUpdate.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(last.statusUpdate.status.message.extensions, [CONVERSE_EXTENSION_URI], 'subscription frames are decorated too')
})

t.test('SubscribeToTask to a running task ends with the task', async (t) => {
  const executor = hangingExecutor()
  const store = new ObservedTaskStore()
  const app = await buildApp(executor, { taskStore: store })
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('long'), configuration: { returnImmediately: true } })).json().result.task
  await executor.started
  // Wait until the SDK has stored WORKING: from then on nothing but the subscription loads the task.
  await until(async () => (await rpc(app, 'GetTask', { id: task.id })).json().result.status.state === 'TASK_STATE_WORKING')
  const listening = store.nextLoad(task.id)
  const subscription = rpc(app, 'SubscribeToTask', { id: task.id })
  await listening
  t.equal((await rpc(app, 'CancelTask', { id: task.id })).json().result.status.state, 'TASK_STATE_CANCELED')
  const events = parseSse((await subscription).body)
  t.equal(events[0].data.result.task.id, task.id)
  t.equal(events[events.length - 1].data.result.statusUpdate.status.state, 'TASK_STATE_CANCELED')
})
