/**
 * The endpoint's per-task turn lock (an agent's `turnLock` option): SendMessage and SendStreamingMessage naming a
 * task take it with the task's scope (tenant, owner, task id), turns without a task do not; a turn that waited its
 * bound is -32603 naming the busy task (JSON and stream), nothing ran; the option is validated.
 */
import t from 'tap'
import Fastify from 'fastify'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { MemoryTaskTurnLock, TaskBusyError, type TaskTurnKey, type TaskTurnLock } from 'a2a-converse/service'
import { buildApp, rpc, userMessage } from '../../fixtures/a2a-app.js'
import { inputRequiredExecutor } from '../../fixtures/a2a-executors.js'
import { SpanStatusCode } from '@opentelemetry/api'
import { registerSdk } from '../../fixtures/tracing-sdk.js'

type Json = any

/** A MemoryTaskTurnLock that records the keys it was asked for. */
function recordingLock (): TaskTurnLock & { keys: TaskTurnKey[] } {
  const inner = new MemoryTaskTurnLock()
  const keys: TaskTurnKey[] = []
  return { keys, acquire: async (key, signal) => { keys.push(key); return await inner.acquire(key, signal) } }
}

const busy: TaskTurnLock = { acquire: async (key) => { throw new TaskBusyError(key.taskId, 30_000) } }

function framesOf (body: string): Json[] {
  return body.split('\n\n').map((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join(''))
    .filter((data) => data !== '').map((data) => JSON.parse(data))
}

t.test('turns naming a task take the lock with its scope; new tasks do not', async (t) => {
  const lock = recordingLock()
  const app = await buildApp(inputRequiredExecutor(), { turnLock: lock })
  t.teardown(() => app.close())
  const first = (await rpc(app, 'SendMessage', { message: userMessage('hello'), tenant: 'acme' })).json()
  const taskId = first.result.task.id
  t.strictSame(lock.keys, [], 'a message without a taskId takes no lock')
  const answered = (await rpc(app, 'SendMessage', { message: userMessage('42', { taskId }), tenant: 'acme' })).json()
  t.equal(answered.result.task.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(lock.keys, [{ tenant: 'acme', owner: 'unknown', taskId }], 'the task stores\' scope and the task id')

  const second = (await rpc(app, 'SendMessage', { message: userMessage('hello') })).json()
  const res = await rpc(app, 'SendStreamingMessage', { message: userMessage('7', { taskId: second.result.task.id }) })
  t.match(framesOf(res.body).at(-1), { result: { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } } })
  t.strictSame(lock.keys.at(-1), { tenant: '', owner: 'unknown', taskId: second.result.task.id }, 'streaming turns take it too')
})

t.test('a turn that waited its bound: -32603 naming the busy task, and nothing ran; its wait is an ERROR span', async (t) => {
  // A plugin user's OpenTelemetry SDK (its default context manager).
  const exporter = registerSdk(t)
  const app = await buildApp(inputRequiredExecutor(), { turnLock: busy })
  t.teardown(() => app.close())
  const first = (await rpc(app, 'SendMessage', { message: userMessage('hello') })).json()
  const taskId = first.result.task.id
  const refused = (await rpc(app, 'SendMessage', { message: userMessage('42', { taskId }) })).json()
  t.match(refused.error, { code: -32603, message: `task ${taskId} is busy with another turn (waited 30000 ms); try again later` })
  const wait = exporter.getFinishedSpans().find((span) => span.name === 'converse.turn_lock wait')
  t.match(wait, { status: { code: SpanStatusCode.ERROR }, attributes: { 'error.type': 'A2A_CONVERSE_TASK_BUSY', 'a2a.task.id': taskId } })
  const backend = exporter.getFinishedSpans().find((span) => span.name === 'converse.backend SendMessage' && span.spanContext().traceId === wait?.spanContext().traceId)
  t.equal(wait?.parentSpanContext?.spanId, backend?.spanContext().spanId, 'the backend call\'s child')
  // Refused before its first event: a plain reply too.
  const streamed = (await rpc(app, 'SendStreamingMessage', { message: userMessage('42', { taskId }) })).json()
  t.match(streamed.error, { code: -32603, message: /is busy with another turn/ })
  const stored = (await rpc(app, 'GetTask', { id: taskId })).json()
  t.equal(stored.result.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the task is as it was')
  t.equal(stored.result.history.length, 2, 'the refused answers were not added to its history')
})

t.test('turnLock is validated at registration', async (t) => {
  for (const turnLock of [null, {}, { acquire: 1 }]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }] })
    app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: inputRequiredExecutor(), turnLock: turnLock as never }] })
    await t.rejects(async () => { await app.ready() }, { code: 'A2A_CONVERSE_INVALID_OPTION', message: /agents\[0\]\.turnLock.*must be a TaskTurnLock \(an acquire method\)/ })
  }
})
