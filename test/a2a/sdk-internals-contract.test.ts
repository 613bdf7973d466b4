/**
 * What src/a2a/sdk-internals.ts relies on in @a2a-js/sdk beyond its documented API, checked against the installed
 * SDK. Each test names the reliance; when an upgrade changes one, this file fails before anything else does and
 * says which part of sdk-internals.ts to revisit.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { AgentCard, SendMessageRequest, Task, TaskState } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore, RequestContext, ServerCallContext,
  type AgentExecutor, type ExecutionEventBus, type ExecutionEventBusManager
} from '@a2a-js/sdk/server'
import { INTERRUPTED, requestContextOf } from '../../src/a2a/sdk-internals.js'
import { inputRequiredExecutor } from '../fixtures/a2a-executors.js'

const card = AgentCard.fromJSON({ name: 'Contract', description: 'c', capabilities: { streaming: true } })
const request = () => SendMessageRequest.fromJSON({ message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })

t.test('the SDK is pinned exactly, and the installed one is the pinned one', async (t) => {
  const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }
  const pinned = manifest.dependencies['@a2a-js/sdk']
  t.match(pinned, /^\d+\.\d+\.\d+$/, 'an exact version, no range: sdk-internals.ts was checked against this one')
  // The package's exports hide its package.json: find it next to the entry point that is loaded.
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk')
  const installed = JSON.parse(await readFile(join(entry.slice(0, entry.lastIndexOf('/dist/')), 'package.json'), 'utf8')) as { version: string }
  t.equal(installed.version, pinned, 'an upgrade: re-check every section of src/a2a/sdk-internals.ts, then this file')
})

t.test('3. RequestContext built without its constructor has the constructor\'s own properties, in order', async (t) => {
  const context = new ServerCallContext()
  const sdk = new RequestContext(request(), 't1', 'c1', context)
  const lean = requestContextOf(request(), 't1', 'c1', context)
  t.strictSame(Reflect.ownKeys(lean), Reflect.ownKeys(sdk))
  t.equal(Object.getPrototypeOf(lean), RequestContext.prototype)
  t.strictSame(lean.userMessage, sdk.userMessage)
  t.equal(lean.context, sdk.context)
})

/** A bus manager that records, per fetched bus, the order of `finished` listeners and executor starts. */
class RecordingBusManager extends DefaultExecutionEventBusManager {
  readonly log: string[] = []
  readonly settled: Array<TaskState | undefined> = []

  override createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const bus = super.createOrGetByTaskId(taskId, context)
    const on = bus.on.bind(bus) as (name: string, listener: unknown) => ExecutionEventBus
    bus.on = ((name: 'event' | 'finished', listener: never) => {
      this.log.push(`on:${name}`)
      return on(name, listener)
    }) as ExecutionEventBus['on']
    return bus
  }

  settleByTaskId (_taskId: string, _bus: ExecutionEventBus, lastState: TaskState | undefined): boolean {
    this.settled.push(lastState)
    return false
  }
}

t.test('1. a stream\'s queue stop handler is the first finished listener, added before the executor runs; 3. the executor gets the request\'s context', async (t) => {
  const buses = new RecordingBusManager()
  const seen: ServerCallContext[] = []
  const executor: AgentExecutor = {
    async execute (requestContext, bus) {
      buses.log.push('execute')
      seen.push(requestContext.context as ServerCallContext)
      bus.finished()
    },
    async cancelTask () {}
  }
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor, buses)
  const context = new ServerCallContext()
  for await (const event of handler.sendMessageStream(request(), context)) t.ok(event)
  t.equal(buses.log.indexOf('on:finished') >= 0 && buses.log.indexOf('on:finished') < buses.log.indexOf('execute'), true,
    `order seen: ${buses.log.join(', ')}`)
  t.equal(seen[0], context, 'the same ServerCallContext object reaches the executor')
})

t.test('2. interrupted states keep the bus, and settleByTaskId is offered the decision first', async (t) => {
  const buses = new RecordingBusManager()
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), inputRequiredExecutor(), buses as ExecutionEventBusManager)
  t.strictSame(new Set((handler as unknown as { keepBusAliveStates: Set<TaskState> }).keepBusAliveStates), INTERRUPTED,
    'the default keepBusAliveStates')
  const reply = await handler.sendMessage(request(), new ServerCallContext())
  t.equal((reply as Task).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  while (buses.settled.length === 0) await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(buses.settled, [TaskState.TASK_STATE_INPUT_REQUIRED])
})

t.test('cancelTask answers a task that is already CANCELED as it is (the dispatcher cancels first, then asks the SDK)', async (t) => {
  const store = new InMemoryTaskStore()
  const context = new ServerCallContext()
  await store.save(Task.fromJSON({ id: 'x', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' } }), context)
  const handler = new DefaultRequestHandler(card, store, inputRequiredExecutor())
  const task = await handler.cancelTask({ id: 'x', tenant: '', metadata: undefined } as never, context)
  t.equal(task.status?.state, TaskState.TASK_STATE_CANCELED)
})
