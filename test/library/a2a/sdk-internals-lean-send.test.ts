/**
 * The lean SendMessage path (packages/a2a-converse/src/backends/local/sdk-internals.ts) against DefaultRequestHandler.sendMessage:
 * every scenario runs through a dispatcher with the lean path (the default) and one without it
 * (`leanSendMessage: false`), and the JSON-RPC responses, what the agent saw, what the task store holds and
 * what was logged must be the same (generated UUIDs and timestamps compared by position). Task replies must
 * still be produced by the SDK's sendMessage.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { Artifact, Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import {
  AgentEvent, DefaultRequestHandler, InMemoryTaskStore, RequestContext, ServerCallContext,
  type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type ExecutionEventBusManager
} from '@a2a-js/sdk/server'
import { A2ADispatcher, type DispatcherOptions } from '../../../packages/a2a-converse/src/backends/local/dispatch.js'
import type { CheckedRequest } from '../../../packages/a2a-converse/src/protocol/check-request.js'
import { HandoffBusManager, HandoffRegistry, LeanSendMessage } from '../../../packages/a2a-converse/src/backends/local/sdk-internals.js'

type Behaviour = (context: RequestContext, bus: ExecutionEventBus) => Promise<void>

const X = 'https://x.example/ext/v1'
const Y = 'https://y.example/ext/v1'
const baseCard = { name: 'Lean', description: 'lean path tests', capabilities: { streaming: true, extensions: [{ uri: X }] } }

function reply (context: RequestContext, extra: Record<string, unknown> = {}): Message {
  return Message.fromJSON({
    messageId: `agent-${context.userMessage.messageId}`,
    contextId: context.contextId,
    role: 'ROLE_AGENT',
    parts: [{ text: 'You can return an order within 30 days of delivery.' }],
    metadata: { [X]: { author: 'agent', citations: [{ documentId: 'returns', chunkId: 'returns#0', title: 'Returns' }] } },
    extensions: [X],
    ...extra
  })
}

function task (context: RequestContext): Task {
  return Task.fromJSON({
    id: context.taskId,
    contextId: context.contextId,
    status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
    history: [Message.toJSON(context.userMessage)]
  })
}

function status (context: RequestContext, state: string, text?: string): AgentExecutionEvent {
  return AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
    taskId: context.taskId,
    contextId: context.contextId,
    status: {
      state,
      timestamp: new Date().toISOString(),
      ...(text === undefined ? {} : { message: { messageId: `status-${state}`, role: 'ROLE_AGENT', parts: [{ text }], contextId: context.contextId, taskId: context.taskId } })
    }
  }))
}

function artifact (context: RequestContext): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({
    taskId: context.taskId,
    contextId: context.contextId,
    artifact: Artifact.fromJSON({ artifactId: 'a-1', parts: [{ text: 'the answer' }] }),
    append: false,
    lastChunk: true,
    metadata: undefined
  })
}

/** What each scenario's agent does. */
const behaviours: Record<string, Behaviour> = {
  message: async (context, bus) => {
    bus.publish(AgentEvent.message(reply(context)))
    bus.finished()
  },
  'message after a delay': async (context, bus) => {
    await sleep(2)
    bus.publish(AgentEvent.message(reply(context)))
  },
  'message, then a task and finished()': async (context, bus) => {
    bus.publish(AgentEvent.message(reply(context)))
    bus.publish(AgentEvent.task(task(context)))
    bus.finished()
  },
  'message, then a failure': async (context, bus) => {
    bus.publish(AgentEvent.message(reply(context)))
    await sleep(1)
    throw new Error('late failure')
  },
  'unclonable message': async (context, bus) => {
    const message = reply(context)
    ;(message.metadata as Record<string, unknown>).callback = () => 'not data'
    bus.publish(AgentEvent.message(message))
  },
  'task lifecycle': async (context, bus) => {
    bus.publish(AgentEvent.task(task(context)))
    bus.publish(status(context, 'TASK_STATE_WORKING'))
    bus.publish(artifact(context))
    bus.publish(status(context, 'TASK_STATE_COMPLETED', 'done'))
    bus.finished()
  },
  'task, then more events later': async (context, bus) => {
    bus.publish(AgentEvent.task(task(context)))
    await sleep(1)
    bus.publish(status(context, 'TASK_STATE_WORKING'))
    await sleep(1)
    bus.publish(artifact(context))
    bus.publish(status(context, 'TASK_STATE_COMPLETED', 'done'))
  },
  'input required': async (context, bus) => {
    bus.publish(AgentEvent.task(task(context)))
    bus.publish(status(context, 'TASK_STATE_INPUT_REQUIRED', 'which order?'))
  },
  'auth required, then completed': async (context, bus) => {
    bus.publish(AgentEvent.task(task(context)))
    bus.publish(status(context, 'TASK_STATE_AUTH_REQUIRED', 'sign in'))
    await sleep(2)
    bus.publish(status(context, 'TASK_STATE_COMPLETED', 'signed in'))
  },
  'status update before any task': async (context, bus) => {
    bus.publish(status(context, 'TASK_STATE_COMPLETED', 'no task'))
  },
  'task, then a failure': async (context, bus) => {
    bus.publish(AgentEvent.task(task(context)))
    throw new Error('failed mid-task')
  },
  'failure before any event': async () => {
    await sleep(1)
    throw new Error('agent down')
  },
  'no event at all': async () => {},
  'finished() before any event': async (_context, bus) => {
    bus.finished()
    await sleep(1)
  },
  'synchronous throw': (() => { throw new Error('sync throw') }) as unknown as Behaviour
}

/** What the agent saw: the request context, as data. */
function seen (context: RequestContext) {
  return {
    isRequestContext: context instanceof RequestContext,
    taskId: context.taskId,
    contextId: context.contextId,
    userMessage: Message.toJSON(context.userMessage),
    requestedExtensions: context.context.requestedExtensions === undefined ? undefined : [...context.context.requestedExtensions],
    task: context.task,
    referenceTasks: context.referenceTasks
  }
}

interface Run {
  response: unknown
  seen: unknown[]
  stored: unknown[]
  errors: unknown[]
  sdkSendMessages: number
}

/** Replaces UUIDs and timestamps by their order of appearance, so two runs compare by structure. */
function normalize (value: unknown): unknown {
  const ids = new Map<string, string>()
  const text = JSON.stringify(value, (_key, item) => item instanceof Error ? { error: item.name, message: item.message } : item)
  return JSON.parse(text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `<uuid ${ids.size + 1}>`)
      return ids.get(id) as string
    })
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>'))
}

let sendMessages = 0
const sdkSendMessage = DefaultRequestHandler.prototype.sendMessage
DefaultRequestHandler.prototype.sendMessage = function (...args) {
  sendMessages++
  return sdkSendMessage.apply(this, args)
}
t.teardown(() => { DefaultRequestHandler.prototype.sendMessage = sdkSendMessage })

interface Scenario {
  behaviour: Behaviour
  params?: Record<string, unknown>
  card?: Record<string, unknown>
  requested?: string[]
  /** Let the agent run to its end before looking at the store. */
  settle?: number
  store?: InMemoryTaskStore
}

function recordingExecutor (behaviour: Behaviour, contexts: unknown[]): AgentExecutor {
  return {
    execute (context, bus) {
      contexts.push(seen(context))
      return behaviour(context, bus)
    },
    async cancelTask () {}
  }
}

async function runOnce (t: Test, lean: boolean, scenario: Scenario): Promise<Run> {
  const contexts: unknown[] = []
  const store = scenario.store ?? new InMemoryTaskStore()
  const saved: unknown[] = []
  const save = store.save.bind(store)
  store.save = async (value, context) => {
    saved.push(Task.toJSON(value))
    return await save(value, context)
  }
  const options: DispatcherOptions = {
    card: scenario.card ?? baseCard,
    executor: recordingExecutor(scenario.behaviour, contexts),
    taskStore: store,
    leanSendMessage: lean
  }
  const dispatcher = new A2ADispatcher(options)
  const params = {
    message: { messageId: 'user-1', role: 'ROLE_USER', parts: [{ text: 'How long do I have to return an order?' }] },
    ...scenario.params
  }
  const request: CheckedRequest = { id: 7, method: 'SendMessage', params }
  const context = dispatcher.createContext(request, { requestedExtensions: scenario.requested ?? [X, Y], version: '1.0', headers: { a: 'b' } })
  const errors = t.capture(console, 'error')
  const logged: unknown[] = []
  const before = sendMessages
  const response = await dispatcher.call(request, context, { log: { error: (object) => { logged.push(object) } } })
  const sdkSendMessages = sendMessages - before
  await sleep(scenario.settle ?? 10)
  // On a busy machine the agent's later writes can trail the pause above: wait until the saves stop changing.
  for (let stable = 0, count = saved.length, rounds = 0; stable < 3 && rounds < 200; rounds++) {
    await sleep(10)
    stable = saved.length === count ? stable + 1 : 0
    count = saved.length
  }
  const consoleErrors = errors().map((call: { args: unknown[] }) => call.args)
  return { response, seen: contexts, stored: saved, errors: [...consoleErrors, ...logged], sdkSendMessages }
}

/** Runs a scenario on both paths; returns the lean run after checking it matches the SDK's. */
async function parity (t: Test, scenario: Scenario): Promise<Run> {
  const sdk = await runOnce(t, false, scenario)
  const lean = await runOnce(t, true, scenario)
  t.equal(sdk.sdkSendMessages, 1, 'the reference run goes through the SDK')
  t.strictSame(normalize(lean.response), normalize(sdk.response), 'same JSON-RPC response')
  t.strictSame(normalize(lean.seen), normalize(sdk.seen), 'the agent saw the same request context')
  t.strictSame(normalize(lean.stored), normalize(sdk.stored), 'the same task writes')
  t.strictSame(normalize(lean.errors), normalize(sdk.errors), 'the same errors logged')
  return lean
}

const replyKinds: Record<string, 'message' | 'task' | 'error'> = {
  message: 'message',
  'message after a delay': 'message',
  'message, then a task and finished()': 'message',
  'message, then a failure': 'message',
  'unclonable message': 'error',
  'task lifecycle': 'task',
  'task, then more events later': 'task',
  'input required': 'task',
  'auth required, then completed': 'task',
  'status update before any task': 'error',
  'task, then a failure': 'task',
  'failure before any event': 'task',
  'no event at all': 'error',
  'finished() before any event': 'error',
  'synchronous throw': 'error'
}

for (const [name, behaviour] of Object.entries(behaviours)) {
  t.test(`same result as the SDK: ${name}`, async (t) => {
    const lean = await parity(t, { behaviour })
    const kind = replyKinds[name]
    const response = lean.response as { result?: { message?: unknown, task?: unknown }, error?: unknown }
    if (kind === 'message') {
      t.ok(response.result?.message, 'a Message reply')
      t.equal(lean.sdkSendMessages, 0, 'answered without the SDK request handler')
      t.strictSame(lean.stored, [], 'no task written')
    } else if (kind === 'task') {
      t.ok(response.result?.task, 'a Task reply')
      t.equal(lean.sdkSendMessages, 1, 'a task reply is produced by the SDK request handler')
    } else {
      t.ok(response.error, 'an error reply')
    }
  })
}

t.test('a Message reply keeps every field the SDK path returns', async (t) => {
  const lean = await parity(t, { behaviour: behaviours.message })
  t.strictSame(normalize(lean.response), {
    jsonrpc: '2.0',
    id: 7,
    result: {
      message: {
        messageId: 'agent-user-1',
        contextId: '<uuid 1>',
        role: 'ROLE_AGENT',
        parts: [{ text: 'You can return an order within 30 days of delivery.' }],
        metadata: { [X]: { author: 'agent', citations: [{ documentId: 'returns', chunkId: 'returns#0', title: 'Returns' }] } },
        extensions: [X]
      }
    }
  })
  t.match(lean.seen, [{ isRequestContext: true, requestedExtensions: [X], task: undefined, referenceTasks: undefined }],
    'requested extensions narrowed to the card\'s')
})

t.test('request variants: contextId given, returnImmediately, historyLength', async (t) => {
  for (const params of [
    { message: { messageId: 'user-2', role: 'ROLE_USER', contextId: 'ctx-given', parts: [{ text: 'hi there' }] } },
    { configuration: { returnImmediately: true } },
    { configuration: { historyLength: 0 } },
    { configuration: { historyLength: 1, acceptedOutputModes: ['text/plain'] }, metadata: { trace: 'abc' } }
  ]) {
    for (const behaviour of [behaviours.message, behaviours['task lifecycle'], behaviours['task, then more events later']]) {
      await parity(t, { behaviour, params })
    }
  }
  const given = await parity(t, { behaviour: behaviours.message, params: { message: { messageId: 'user-3', role: 'ROLE_USER', contextId: 'ctx-given', parts: [{ text: 'hi there' }] } } })
  t.match(given.response, { result: { message: { contextId: 'ctx-given' } } })
  t.match(given.seen, [{ contextId: 'ctx-given', userMessage: { contextId: 'ctx-given' } }])
})

t.test('no requested extensions, no extensions on the card', async (t) => {
  const card = { name: 'Plain', description: 'no extensions' }
  await parity(t, { behaviour: behaviours.message, card, requested: [] })
  await parity(t, { behaviour: behaviours['task lifecycle'], card, requested: [X] })
})

t.test('requests that may involve a task go straight to the SDK', async (t) => {
  const store = new InMemoryTaskStore()
  const context = new ServerCallContext()
  const existing = (state: string, id: string) => Task.fromJSON({
    id, contextId: 'ctx-1', status: { state, timestamp: new Date().toISOString() }, history: []
  })
  await store.save(existing('TASK_STATE_INPUT_REQUIRED', 'open-task'), context)
  await store.save(existing('TASK_STATE_COMPLETED', 'done-task'), context)
  const message = (extra: Record<string, unknown>) => ({ message: { messageId: 'user-9', role: 'ROLE_USER', parts: [{ text: 'more' }], ...extra } })

  const unknown = await parity(t, { behaviour: behaviours.message, params: message({ taskId: 'nope' }), store })
  t.match(unknown.response, { error: { code: -32001 } })
  t.equal(unknown.sdkSendMessages, 1)
  const terminal = await parity(t, { behaviour: behaviours.message, params: message({ taskId: 'done-task' }), store })
  t.match(terminal.response, { error: { code: -32004 } })
  const followUp = await runOnce(t, true, { behaviour: behaviours.message, params: message({ taskId: 'open-task', contextId: 'ctx-1' }), store })
  t.match(followUp.response, { result: { message: { messageId: 'agent-user-9' } } })
  t.equal(followUp.sdkSendMessages, 1, 'a message to an existing task')
  t.match(followUp.seen, [{ taskId: 'open-task', task: { id: 'open-task' } }])

  const references = await parity(t, { behaviour: behaviours.message, params: message({ referenceTaskIds: ['open-task', 'missing'] }), store })
  t.equal(references.sdkSendMessages, 1, 'reference tasks are loaded by the SDK')
  t.match(references.seen, [{ referenceTasks: [{ id: 'open-task' }] }])

  const pushCard = { ...baseCard, capabilities: { ...baseCard.capabilities, pushNotifications: true } }
  const pushAgent = await parity(t, { behaviour: behaviours.message, card: pushCard })
  t.equal(pushAgent.sdkSendMessages, 0, 'an agent with push notifications: a request without a config stays lean')
  const inline = await parity(t, {
    behaviour: behaviours.message,
    card: pushCard,
    params: { ...message({}), configuration: { taskPushNotificationConfig: { url: 'https://hook.example.com/a' } } }
  })
  t.equal(inline.sdkSendMessages, 1, 'a request with an inline push config')
  const required = await parity(t, {
    behaviour: behaviours.message,
    card: { ...baseCard, capabilities: { streaming: true, extensions: [{ uri: X, required: true }] } }
  })
  t.equal(required.sdkSendMessages, 1, 'an agent with a required extension')
})

t.test('a handed-off task is reachable by CancelTask and SubscribeToTask while it runs', async (t) => {
  for (const lean of [false, true]) {
    const cancels: string[] = []
    let release!: () => void
    const running = new Promise<void>((resolve) => { release = resolve })
    const executor: AgentExecutor = {
      async execute (context, bus) {
        bus.publish(AgentEvent.task(task(context)))
        bus.publish(status(context, 'TASK_STATE_WORKING'))
        await running
      },
      async cancelTask (taskId, bus) {
        cancels.push(taskId)
        bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
          taskId, contextId: 'unused', status: { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() }
        })))
        release()
      }
    }
    const dispatcher = new A2ADispatcher({ card: baseCard, executor, leanSendMessage: lean })
    const request: CheckedRequest = {
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'user-c', role: 'ROLE_USER', parts: [{ text: 'long job' }] }, configuration: { returnImmediately: true } }
    }
    const created = await dispatcher.call(request, dispatcher.createContext(request, { requestedExtensions: [], version: '1.0' })) as { result: { task: { id: string } } }
    const taskId = created.result.task.id

    const subscribe: CheckedRequest = { id: 2, method: 'SubscribeToTask', params: { id: taskId } }
    const subscribed = dispatcher.open(subscribe, dispatcher.createContext(subscribe, { requestedExtensions: [], version: '1.0' }))
    const first = await subscribed.source.next()
    t.match(first.value, { task: { id: taskId } }, `${lean ? 'lean' : 'SDK'}: SubscribeToTask attaches to the live task`)

    const cancel: CheckedRequest = { id: 3, method: 'CancelTask', params: { id: taskId } }
    const canceled = await dispatcher.call(cancel, dispatcher.createContext(cancel, { requestedExtensions: [], version: '1.0' }))
    t.match(canceled, { result: { id: taskId, status: { state: 'TASK_STATE_CANCELED' } } })
    t.strictSame(cancels, [taskId], `${lean ? 'lean' : 'SDK'}: the agent's cancelTask ran on the task's live bus`)
    const next = await subscribed.source.next()
    t.match(next.value, { statusUpdate: { status: { state: 'TASK_STATE_CANCELED' } } }, 'the subscriber saw the cancellation')
    subscribed.release()
  }
})

t.test('the agent\'s own bus listeners keep working after a hand-off', async (t) => {
  const heard: string[] = []
  const executor: AgentExecutor = {
    async execute (context, bus) {
      bus.on('event', (event) => { heard.push(event.kind) })
      bus.publish(AgentEvent.task(task(context)))
      bus.publish(status(context, 'TASK_STATE_COMPLETED', 'done'))
    },
    async cancelTask () {}
  }
  const dispatcher = new A2ADispatcher({ card: baseCard, executor })
  const request: CheckedRequest = { id: 1, method: 'SendMessage', params: { message: { messageId: 'u', role: 'ROLE_USER', parts: [{ text: 'x y' }] } } }
  const response = await dispatcher.call(request, dispatcher.createContext(request, { requestedExtensions: [], version: '1.0' }))
  t.match(response, { result: { task: { status: { state: 'TASK_STATE_COMPLETED' } } } })
  t.strictSame(heard, ['task', 'statusUpdate'])
})

t.test('eligibility and the bus manager, directly', async (t) => {
  const card = (capabilities: Record<string, unknown>) => ({ capabilities }) as never
  const options = (capabilities: Record<string, unknown>) => ({
    card: card(capabilities),
    executor: { execute: async () => {}, cancelTask: async () => {} },
    handler: {} as DefaultRequestHandler,
    registry: new HandoffRegistry()
  })
  const message = { messageId: 'm', taskId: '', referenceTaskIds: [] }
  const lean = new LeanSendMessage(options({}))
  t.equal(lean.eligible({ message } as never), true)
  t.equal(lean.eligible({ message: undefined } as never), false, 'no message')
  t.equal(lean.eligible({ message: { ...message, messageId: '' } } as never), false, 'no messageId')
  t.equal(lean.eligible({ message: { ...message, taskId: 't' } } as never), false, 'a task named')
  t.equal(lean.eligible({ message: { ...message, referenceTaskIds: ['t'] } } as never), false, 'reference tasks')
  t.equal(new LeanSendMessage({ ...options({}), card: {} as never }).eligible({ message } as never), true, 'a card without capabilities')
  t.equal(new LeanSendMessage(options({ pushNotifications: true })).eligible({ message } as never), true, 'push notifications declared')
  t.equal(new LeanSendMessage(options({ pushNotifications: true })).eligible({ message, configuration: { taskPushNotificationConfig: { url: 'https://h.example' } } } as never), false, 'an inline push config')
  t.equal(new LeanSendMessage(options({ extensions: [{ uri: X, required: true }] })).eligible({ message } as never), false)

  const calls: unknown[][] = []
  const inner: ExecutionEventBusManager = {
    createOrGetByTaskId: (...args) => { calls.push(['create', ...args]); return {} as ExecutionEventBus },
    getByTaskId: (...args) => { calls.push(['get', ...args]); return undefined },
    cleanupByTaskId: (...args) => { calls.push(['cleanup', ...args]) }
  }
  const manager = new HandoffBusManager(inner, new HandoffRegistry())
  manager.createOrGetByTaskId('t-1')
  manager.getByTaskId('t-2')
  manager.cleanupByTaskId('t-3')
  t.strictSame(calls, [['create', 't-1', undefined], ['get', 't-2', undefined], ['cleanup', 't-3', undefined]], 'requests not handed off pass through')
  const context = new ServerCallContext()
  const registry = new HandoffRegistry()
  registry.set(context, { taskId: 'handed-off' } as never)
  calls.length = 0
  const handing = new HandoffBusManager(inner, registry)
  handing.createOrGetByTaskId('sdk-made', context)
  handing.cleanupByTaskId('sdk-made', context)
  t.strictSame(calls, [['create', 'handed-off', context], ['cleanup', 'handed-off', context]], 'a handed-off request\'s bus is the agent\'s task\'s')
})
