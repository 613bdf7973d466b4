/**
 * Every place a2a-converse relies on @a2a-js/sdk beyond its documented API, in one module: the lean SendMessage path
 * (below). The SDK is pinned exactly in package.json; test/library/a2a/sdk-internals-contract.test.ts fails when an upgrade
 * changes any of what is relied on here — RequestContext's own properties (built without its constructor's
 * structuredClone), the handler calling its executor with the request's ServerCallContext and fetching the
 * execution's bus from its bus manager with it, and the SDK's log lines for a failed event loop / a failed
 * execution after a Message.
 *
 * The hand-off's held traffic is plain bookkeeping over the SDK's public bus, kept apart: held-bus-traffic.ts.
 */
import { randomUUID } from 'node:crypto'
import type { AgentCard, Message, SendMessageRequest, Task } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBus, RequestContext, type AgentExecutionEvent, type AgentExecutor, type DefaultRequestHandler,
  type ExecutionEventBus, type ExecutionEventBusManager, type ServerCallContext
} from '@a2a-js/sdk/server'
import { cloneData } from '../../core/clone-data.js'
import { HeldBusTraffic, type BusEntry } from './held-bus-traffic.js'

/**
 * A lean path for SendMessage when the agent answers with a Message, with the same result as
 * DefaultRequestHandler.sendMessage and a hand-off to it for everything else.
 *
 * Why: for a plain Message reply the SDK's blocking sendMessage builds a ResultManager (a structuredClone of
 * the user message), registers an EventTarget bus with the bus manager, drains it through an async-generator
 * queue and a chain of promises, and structuredClones the request and the reply — together more than the
 * rest of the dispatcher for a reply that touches no task and no store (docs/performance.md).
 *
 * How: a request is eligible when no task could be involved up front: the message names no task and no
 * reference tasks, the request gives no push config, and the agent declares no required extension (the SDK's
 * checks for those then cannot fail, and there is no push config to save; a task that comes of it after the
 * hand-off is the SDK's, and its saves report to webhooks like any other: packages/a2a-converse/src/push/). The lean path builds the
 * RequestContext as the SDK does for such a message (fresh taskId, contextId from the message or fresh,
 * requested extensions narrowed to the card's, the SDK's RequestContext class holding a deep copy of the
 * request), runs the executor on an unregistered bus of the SDK's class and waits for its first event:
 *
 * - a `message` first: the SDK would answer that message and stop reading the bus (its queue ends on a
 *   Message). The reply is a deep copy of it, taken as the SDK's ResultManager takes it (an unclonable
 *   message fails the same way); an executor failure after it is logged as the SDK logs it. Deep copies
 *   are core/clone-data.ts's: structuredClone's result, faster on plain data.
 * - anything else (a task, a status update, `finished()`, the executor returning or failing without an
 *   event): hand-off. `DefaultRequestHandler.sendMessage` runs for the request after all; the handler's
 *   executor (a {@link HandoffExecutor}) recognises the request by its ServerCallContext and, instead of
 *   starting the agent again, points the SDK's RequestContext at the taskId/contextId the agent already
 *   works with, replays the events seen so far onto the SDK's bus in order and forwards every later one.
 *   The {@link HandoffBusManager} registers that bus under the agent's taskId, so CancelTask and
 *   SubscribeToTask find it as they would have. The ResultManager, the task store, historyLength,
 *   returnImmediately, AUTH_REQUIRED snapshots and failure tasks are the SDK's own.
 *
 * Nobody can name the fresh taskId before a task event carrying it was processed, so registering the bus
 * at hand-off instead of before the executor runs is not observable.
 */
/**
 * The agent's bus traffic from the moment the lean path gives up (held-bus-traffic.ts), and the ids it works with:
 * replayed onto the SDK's bus when the SDK's run of the request starts, then forwarded as it comes.
 */
class Handoff extends HeldBusTraffic {
  /** The agent's execute() promise. */
  execution: Promise<void> = Promise.resolve()

  constructor (readonly taskId: string, readonly contextId: string) {
    super()
  }

  /** Runs in place of the agent inside DefaultRequestHandler.sendMessage: the agent is already running. */
  replay (requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> {
    // The SDK made up its own ids for this run; the agent works with the first ones. The failure task the SDK
    // builds when the agent rejects reads these fields.
    const writable = requestContext as { taskId: string, contextId: string }
    writable.taskId = this.taskId
    writable.contextId = this.contextId
    requestContext.userMessage.taskId = this.taskId
    requestContext.userMessage.contextId = this.contextId
    this.forwardTo(bus)
    return this.execution
  }
}

/**
 * Requests handed off to the SDK, by their ServerCallContext (one per request). Shared by the executor and
 * the bus manager given to the DefaultRequestHandler.
 */
export class HandoffRegistry {
  readonly #handoffs = new WeakMap<ServerCallContext, Handoff>()

  set (context: ServerCallContext, handoff: Handoff): void {
    this.#handoffs.set(context, handoff)
  }

  get (context: ServerCallContext | undefined): Handoff | undefined {
    return context === undefined ? undefined : this.#handoffs.get(context)
  }
}

/** The executor the DefaultRequestHandler gets: the agent, except for requests handed off by the lean path. */
export class HandoffExecutor implements AgentExecutor {
  readonly #agent: AgentExecutor
  readonly #registry: HandoffRegistry

  constructor (agent: AgentExecutor, registry: HandoffRegistry) {
    this.#agent = agent
    this.#registry = registry
  }

  execute (requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const handoff = this.#registry.get(requestContext.context)
    return handoff === undefined ? this.#agent.execute(requestContext, bus) : handoff.replay(requestContext, bus)
  }

  cancelTask (taskId: string, bus: ExecutionEventBus): Promise<void> {
    return this.#agent.cancelTask(taskId, bus)
  }
}

/** Registers a handed-off request's bus under the agent's taskId (the SDK asks with the one it made up). */
export class HandoffBusManager implements ExecutionEventBusManager {
  readonly #inner: ExecutionEventBusManager
  readonly #registry: HandoffRegistry

  constructor (inner: ExecutionEventBusManager, registry: HandoffRegistry) {
    this.#inner = inner
    this.#registry = registry
  }

  createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    return this.#inner.createOrGetByTaskId(this.#registry.get(context)?.taskId ?? taskId, context)
  }

  getByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.#inner.getByTaskId(taskId, context)
  }

  cleanupByTaskId (taskId: string, context?: ServerCallContext): void {
    this.#inner.cleanupByTaskId(this.#registry.get(context)?.taskId ?? taskId, context)
  }
}

export interface LeanSendMessageOptions {
  /** The card the DefaultRequestHandler was built with. */
  card: AgentCard
  /** The agent itself (not the HandoffExecutor). */
  executor: AgentExecutor
  /** The handler whose executor is a HandoffExecutor and whose bus manager a HandoffBusManager on `registry`. */
  handler: DefaultRequestHandler
  registry: HandoffRegistry
}

export class LeanSendMessage {
  readonly #executor: AgentExecutor
  readonly #handler: DefaultRequestHandler
  readonly #registry: HandoffRegistry
  /** The card's extension URIs: requested extensions are narrowed to these, as the SDK does. */
  readonly #exposed: ReadonlySet<string>
  /** False when the card rules the lean path out for every request. */
  readonly #enabled: boolean

  constructor (options: LeanSendMessageOptions) {
    this.#executor = options.executor
    this.#handler = options.handler
    this.#registry = options.registry
    const extensions = options.card.capabilities?.extensions ?? []
    this.#exposed = new Set(extensions.map((extension) => extension.uri))
    this.#enabled = !extensions.some((extension) => extension.required)
  }

  /** Whether the lean path may answer this request (see the module comment). */
  eligible (params: SendMessageRequest): boolean {
    const message = params.message
    return this.#enabled && message !== undefined && message.messageId !== '' &&
      params.configuration?.taskPushNotificationConfig === undefined &&
      message.taskId === '' && message.referenceTaskIds.length === 0
  }

  /** DefaultRequestHandler.sendMessage for an eligible request. */
  async send (params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const incoming = params.message as Message
    const taskId = randomUUID()
    const contextId = incoming.contextId !== '' ? incoming.contextId : randomUUID()
    const requested = context.requestedExtensions
    if (requested !== undefined) context.setRequestedExtensions(requested.filter((uri) => this.#exposed.has(uri)))
    const requestContext = requestContextOf({ ...params, message: { ...incoming, contextId, taskId } }, taskId, contextId, context)

    const handoff = new Handoff(taskId, contextId)
    let state: 'waiting' | 'message' | 'handoff' = 'waiting'
    let answer!: (message: Message | undefined) => void
    let fail!: (error: unknown) => void
    const first = new Promise<Message | undefined>((resolve, reject) => {
      answer = resolve
      fail = reject
    })
    const giveUp = (entry?: BusEntry): void => {
      state = 'handoff'
      if (entry !== undefined) handoff.push(entry)
      answer(undefined)
    }
    const bus = new DefaultExecutionEventBus()
    const onEvent = (event: AgentExecutionEvent): void => {
      if (state === 'handoff') handoff.push({ kind: 'event', event })
      else if (state === 'waiting' && event.kind !== 'message') giveUp({ kind: 'event', event })
      else if (state === 'waiting') {
        state = 'message'
        try {
          // As ResultManager.processEvent does: the reply is a deep copy, and an unclonable one fails the request.
          answer(cloneData(event.data as Message))
        } catch (error) {
          console.error(`Event processing loop failed for task ${taskId}:`, error)
          fail(error)
        }
      }
      // After a Message nobody reads the bus: the SDK's queue stops there too.
    }
    const onFinished = (): void => {
      if (state === 'handoff') handoff.push({ kind: 'finished' })
      else if (state === 'waiting') giveUp({ kind: 'finished' })
    }
    bus.on('event', onEvent)
    bus.on('finished', onFinished)

    handoff.execution = this.#executor.execute(requestContext, bus)
    handoff.execution.then(() => {
      // Returned without an event: the SDK sees that itself through the promise replay() hands it.
      if (state === 'waiting') giveUp()
    }, (error: unknown) => {
      if (state === 'waiting') giveUp()
      else if (state === 'message') console.error(`Agent execution failed for message ${incoming.messageId}:`, error)
    })

    const message = await first
    if (message !== undefined) {
      bus.off('event', onEvent)
      bus.off('finished', onFinished)
      return message
    }
    this.#registry.set(context, handoff)
    return await this.#handler.sendMessage(params, context)
  }
}

/**
 * `new RequestContext(request, taskId, contextId, context)` with the SDK's deep copy of the request done by
 * cloneData (same result, faster): the same class, the same own properties in the same order.
 */
export function requestContextOf (request: SendMessageRequest, taskId: string, contextId: string, context: ServerCallContext): RequestContext {
  const requestContext = Object.create(RequestContext.prototype) as RequestContext
  return Object.assign(requestContext, { request: cloneData(request), taskId, contextId, context, task: undefined, referenceTasks: undefined })
}
