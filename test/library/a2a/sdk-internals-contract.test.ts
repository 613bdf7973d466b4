/**
 * What packages/a2a-converse/src/backends/local/sdk-internals.ts relies on in @a2a-js/sdk beyond its documented API, and what the dispatcher relies on
 * in the documented behaviour of its request handler (packages/a2a-converse/src/backends/local/execution-buses.ts, SubscribeToTask), checked against
 * the installed SDK. Each test names the reliance; when an upgrade changes one, this file fails before anything else
 * does and says which module to revisit.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { AgentCard, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import {
  AgentEvent, DefaultRequestHandler, InMemoryTaskStore, RequestContext, ServerCallContext,
  type AgentExecutor, type ExecutionEventBus
} from '@a2a-js/sdk/server'
import { ExecutionBuses } from '../../../packages/a2a-converse/src/backends/local/execution-buses.js'
import { requestContextOf } from '../../../packages/a2a-converse/src/backends/local/sdk-internals.js'
import { A2ADispatcher } from '../../../packages/a2a-converse/src/backends/local/dispatch.js'
import { fromSdkError } from '../../../packages/a2a-converse/src/backends/local/sdk-errors.js'
import { inputRequiredExecutor } from '../../fixtures/a2a-executors.js'

const card = AgentCard.fromJSON({ name: 'Contract', description: 'c', capabilities: { streaming: true } })
const request = () => SendMessageRequest.fromJSON({ message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })

t.test('the SDK is pinned exactly, and the installed one is the pinned one', async (t) => {
  const manifest = JSON.parse(await readFile(new URL('../../../packages/a2a-converse/package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }
  const pinned = manifest.dependencies['@a2a-js/sdk']
  t.match(pinned, /^\d+\.\d+\.\d+$/, 'an exact version, no range: sdk-internals.ts was checked against this one')
  // The package's exports hide its package.json: find it next to the entry point that is loaded.
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk')
  const installed = JSON.parse(await readFile(join(entry.slice(0, entry.lastIndexOf('/dist/')), 'package.json'), 'utf8')) as { version: string }
  t.equal(installed.version, pinned, 'an upgrade: re-check every section of packages/a2a-converse/src/backends/local/sdk-internals.ts, then this file')
})

t.test('lean path: RequestContext built without its constructor has the constructor\'s own properties, in order', async (t) => {
  const context = new ServerCallContext()
  const sdk = new RequestContext(request(), 't1', 'c1', context)
  const lean = requestContextOf(request(), 't1', 'c1', context)
  t.strictSame(Reflect.ownKeys(lean), Reflect.ownKeys(sdk))
  t.equal(Object.getPrototypeOf(lean), RequestContext.prototype)
  t.strictSame(lean.userMessage, sdk.userMessage)
  t.equal(lean.context, sdk.context)
})

/** Execution buses that record what the handler does with them. */
class RecordingBuses extends ExecutionBuses {
  readonly log: string[] = []

  override createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    this.log.push('bus')
    return super.createOrGetByTaskId(taskId, context)
  }

  override cleanupByTaskId (taskId: string, context?: ServerCallContext): void {
    this.log.push('cleanup')
    super.cleanupByTaskId(taskId, context)
  }
}

function handlerOn (buses: ExecutionBuses, executor: AgentExecutor, store = new InMemoryTaskStore()) {
  return new DefaultRequestHandler(card, store, executor, buses, undefined, undefined, undefined, undefined, { keepBusAliveStates: [] })
}

t.test('buses: the execution\'s bus comes from the bus manager before the executor runs, with the request\'s context (lean path: the executor gets it too)', async (t) => {
  const buses = new RecordingBuses()
  const seen: ServerCallContext[] = []
  const executor: AgentExecutor = {
    async execute (requestContext, bus) {
      buses.log.push('execute')
      seen.push(requestContext.context as ServerCallContext)
      bus.finished()
    },
    async cancelTask () {}
  }
  const context = new ServerCallContext()
  for await (const event of handlerOn(buses, executor).sendMessageStream(request(), context)) t.ok(event)
  t.strictSame(buses.log.slice(0, 2), ['bus', 'execute'])
  t.equal(seen[0], context, 'the same ServerCallContext object reaches the executor')
})

t.test('buses: with no keep-alive states every bus is finished and removed when its executor returns, interrupted or not', async (t) => {
  for (const state of ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED', 'TASK_STATE_WORKING']) {
    const buses = new RecordingBuses()
    let finished = 0
    const executor: AgentExecutor = {
      async execute (requestContext, bus) {
        bus.on('finished', () => { finished++ })
        bus.publish(AgentEvent.task(Task.fromJSON({ id: requestContext.taskId, contextId: requestContext.contextId, status: { state: 'TASK_STATE_SUBMITTED' } })))
        bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
          taskId: requestContext.taskId, contextId: requestContext.contextId, status: { state }
        })))
      },
      async cancelTask () {}
    }
    const context = new ServerCallContext()
    const results: StreamResponse[] = []
    // The stream of an execution ends with it (the relay reads a stream nobody listens to any more to its end).
    for await (const result of handlerOn(buses, executor).sendMessageStream(request(), context)) results.push(result)
    t.equal(results.length, 2, state)
    while (!buses.log.includes('cleanup')) await new Promise((resolve) => setImmediate(resolve))
    t.equal(finished, 1, `${state}: finished`)
    const taskId = (results[0].payload?.value as Task).id
    t.equal(buses.getByTaskId(taskId, context), undefined, `${state}: removed`)
  }
})

t.test('SubscribeToTask: the dispatcher\'s errors are the ones DefaultRequestHandler.resubscribe throws', async (t) => {
  const store = new InMemoryTaskStore()
  const context = new ServerCallContext()
  await store.save(Task.fromJSON({ id: 'over', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } }), context)
  const sdk = new DefaultRequestHandler(AgentCard.fromJSON({ name: 'S', description: 's', capabilities: { streaming: true } }), store, inputRequiredExecutor())
  const dispatcher = new A2ADispatcher({ card: { name: 'S', description: 's', capabilities: { streaming: true } }, executor: inputRequiredExecutor(), taskStore: store })
  for (const id of ['over', 'missing', ' ']) {
    const request = { id: 1, method: 'SubscribeToTask' as const, params: { id } }
    let expected: unknown
    try {
      for await (const event of sdk.resubscribe(SubscribeToTaskRequest.fromJSON({ id }), context)) t.fail(String(event))
    } catch (error) {
      expected = fromSdkError(error, { taskId: id.trim() === '' ? undefined : id })
    }
    t.ok(expected, `${id}: the SDK refuses it`)
    let actual: unknown
    try {
      for await (const event of dispatcher.open(request, context).source) t.fail(String(event))
    } catch (error) {
      actual = dispatcher.toError(error, request)
    }
    t.strictSame(actual, expected, id)
  }
})

t.test('cancelTask answers a task that is already CANCELED as it is (the dispatcher cancels first, then asks the SDK)', async (t) => {
  const store = new InMemoryTaskStore()
  const context = new ServerCallContext()
  await store.save(Task.fromJSON({ id: 'x', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' } }), context)
  const handler = new DefaultRequestHandler(card, store, inputRequiredExecutor())
  const task = await handler.cancelTask({ id: 'x', tenant: '', metadata: undefined } as never, context)
  t.equal(task.status?.state, TaskState.TASK_STATE_CANCELED)
})
