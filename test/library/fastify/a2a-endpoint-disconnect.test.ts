/**
 * a2aEndpoint on a real listening server: a client that disconnects ends its stream at once and leaves the task
 * alone (its execution runs on and every event it publishes is still stored; nothing is left on any bus once the
 * execution ends), and closing the app ends open streams cleanly.
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Task, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, DefaultExecutionEventBus, type AgentExecutor } from '@a2a-js/sdk/server'
import { buildApp, parseSse, rpc, until, userMessage, V1, type SseEvent } from '../../fixtures/a2a-app.js'
import { hangingExecutor } from '../../fixtures/a2a-executors.js'
import { TestEventHub } from '../../fixtures/task-events.js'

/** Net listener counts on every SDK event bus, by event type. */
function countBusListeners (t: Test) {
  const counts = { event: 0, finished: 0 }
  const proto = DefaultExecutionEventBus.prototype as unknown as EventTarget
  const add = EventTarget.prototype.addEventListener
  const remove = EventTarget.prototype.removeEventListener
  proto.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
    counts[type as keyof typeof counts]++
    return (add as (...args: unknown[]) => void).call(this, type, ...rest)
  }
  proto.removeEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
    counts[type as keyof typeof counts]--
    return (remove as (...args: unknown[]) => void).call(this, type, ...rest)
  }
  t.teardown(() => {
    delete (proto as unknown as Record<string, unknown>).addEventListener
    delete (proto as unknown as Record<string, unknown>).removeEventListener
  })
  return counts
}

interface OpenStream {
  events: SseEvent[]
  statusCode: Promise<number>
  ended: Promise<void>
  waitFor (count: number): Promise<void>
  abort (): void
}

function openStream (port: number, body: unknown): OpenStream {
  const events: SseEvent[] = []
  let buffer = ''
  let resolveStatus!: (status: number) => void
  let resolveEnded!: () => void
  const statusCode = new Promise<number>((resolve) => { resolveStatus = resolve })
  const ended = new Promise<void>((resolve) => { resolveEnded = resolve })
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/a2a/demo',
    agent: false,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...V1 }
  }, (response) => {
    resolveStatus(response.statusCode as number)
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => {
      buffer += chunk
      const cut = buffer.lastIndexOf('\n\n')
      if (cut === -1) return
      events.push(...parseSse(buffer.slice(0, cut + 2)))
      buffer = buffer.slice(cut + 2)
    })
    response.on('end', () => resolveEnded())
    response.on('close', () => resolveEnded())
  })
  request.on('error', () => resolveEnded())
  request.end(JSON.stringify(body))
  return {
    events,
    statusCode,
    ended,
    waitFor: (count) => until(() => events.length >= count),
    abort: () => request.destroy()
  }
}

async function listening (t: Test, hub?: TestEventHub) {
  const executor = hangingExecutor()
  const app = await buildApp(executor, { events: hub })
  const closeListeners: Array<() => number> = []
  let baseline = -1
  app.addHook('onRequest', async (_request, reply) => {
    baseline = reply.raw.listenerCount('close')
    closeListeners.push(() => reply.raw.listenerCount('close'))
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = (app.server.address() as AddressInfo).port
  return { app, executor, port, closeListeners, baseline: () => baseline }
}

const streamRequest = (text: string) => ({ jsonrpc: '2.0', id: 'live', method: 'SendStreamingMessage', params: { message: userMessage(text) } })

t.test('a client that disconnects ends its stream; the task keeps running, and keeps what it publishes, until canceled', async (t) => {
  const counts = countBusListeners(t)
  const { app, executor, port, closeListeners, baseline } = await listening(t)
  const stream = openStream(port, streamRequest('never ends'))
  t.equal(await stream.statusCode, 200)
  await stream.waitFor(2)
  t.strictSame(stream.events.map((event) => Object.keys(event.data.result)[0]), ['task', 'statusUpdate'])
  t.equal(stream.events[1].data.result.statusUpdate.status.state, 'TASK_STATE_WORKING')
  const taskId = stream.events[0].data.result.task.id

  stream.abort()
  await stream.ended
  await until(() => closeListeners[0]() === baseline())
  t.pass("the writer's close listener is removed")
  t.strictSame(executor.canceled, [], 'a disconnect does not cancel the task (§3.5.2)')
  t.strictSame(executor.finished, [])
  t.equal((await rpc(app, 'GetTask', { id: taskId })).json().result.status.state, 'TASK_STATE_WORKING')

  t.equal((await rpc(app, 'CancelTask', { id: taskId })).json().result.status.state, 'TASK_STATE_CANCELED')
  await until(() => executor.finished.length === 1)
  await until(() => counts.event === 0 && counts.finished === 0)
  t.pass('nothing left on any bus once the execution ended')
  t.equal((await rpc(app, 'GetTask', { id: taskId })).json().result.status.state, 'TASK_STATE_CANCELED')
})

t.test('what the execution publishes after its client left is still stored', async (t) => {
  let finish!: () => void
  const executor: AgentExecutor = {
    async execute (context, bus) {
      bus.publish(AgentEvent.task(Task.fromJSON({ id: context.taskId, contextId: context.contextId, status: { state: 'TASK_STATE_WORKING' } })))
      await new Promise<void>((resolve) => { finish = resolve })
      bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
        taskId: context.taskId, contextId: context.contextId, status: { state: 'TASK_STATE_COMPLETED', message: { messageId: 'done', role: 'ROLE_AGENT', parts: [{ text: 'done' }] } }
      })))
    },
    async cancelTask () {}
  }
  const app = await buildApp(executor)
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const stream = openStream((app.server.address() as AddressInfo).port, streamRequest('left early'))
  await stream.waitFor(1)
  const taskId = stream.events[0].data.result.task.id
  stream.abort()
  await stream.ended
  finish()
  await until(async () => (await rpc(app, 'GetTask', { id: taskId })).json().result.status.state === 'TASK_STATE_COMPLETED')
  const stored = (await rpc(app, 'GetTask', { id: taskId })).json().result
  t.equal(stored.history.at(-1).messageId, 'done', 'the completion and its message are in the task')
})

t.test('a disconnected SubscribeToTask unsubscribes and leaves the task and the other streams alone', async (t) => {
  const hub = new TestEventHub()
  const { app, executor, port } = await listening(t, hub)
  const first = openStream(port, streamRequest('watched'))
  await first.waitFor(2)
  const taskId = first.events[0].data.result.task.id
  await until(() => hub.count(taskId) === 1)
  const second = openStream(port, { jsonrpc: '2.0', id: 'sub', method: 'SubscribeToTask', params: { id: taskId } })
  await second.waitFor(1)
  t.equal(second.events[0].data.result.task.id, taskId)
  t.equal(hub.count(taskId), 2, 'the subscriber listens on the hub too')
  second.abort()
  await second.ended
  await until(() => hub.count(taskId) === 1)
  t.pass('the subscriber is gone from the hub; the first stream still listens')

  t.equal((await rpc(app, 'CancelTask', { id: taskId })).json().result.status.state, 'TASK_STATE_CANCELED')
  await first.ended
  const last = first.events[first.events.length - 1].data.result
  t.equal(last.statusUpdate.status.state, 'TASK_STATE_CANCELED', 'the remaining stream saw the end of the task')
  await until(() => executor.finished.length === 1 && hub.count(taskId) === 0)
})

t.test('a SubscribeToTask stream follows the running execution and ends with it', async (t) => {
  const { app, port } = await listening(t)
  const first = openStream(port, streamRequest('followed'))
  await first.waitFor(2)
  const taskId = first.events[0].data.result.task.id
  const second = openStream(port, { jsonrpc: '2.0', id: 'sub', method: 'SubscribeToTask', params: { id: taskId } })
  await second.waitFor(1)
  t.equal(second.events[0].data.result.task.status.state, 'TASK_STATE_WORKING', 'the stored task first')
  t.equal((await rpc(app, 'CancelTask', { id: taskId })).json().result.status.state, 'TASK_STATE_CANCELED')
  await second.ended
  t.equal(second.events.at(-1)?.data.result.statusUpdate.status.state, 'TASK_STATE_CANCELED',
    'what the execution published on cancel, without a hub')
})

t.test('closing the app ends open streams cleanly and promptly', async (t) => {
  const { app, port } = await listening(t)
  const stream = openStream(port, streamRequest('until shutdown'))
  await stream.waitFor(2)
  const started = Date.now()
  await app.close()
  await stream.ended
  t.ok(Date.now() - started < 2000, 'close() did not wait for the stream to end by itself')
  t.equal(stream.events.length, 2, 'nothing more was written: no error frame on shutdown')
})
