/**
 * The framework-free A2A 1.0 JSON-RPC dispatcher over @a2a-js/sdk's DefaultRequestHandler.
 *
 * It replaces the SDK's JsonRpcTransportHandler: requests are checked up front (check-request.ts), then the
 * request handler's methods are called directly with the ProtoJSON ↔ SDK conversions the transport would
 * do (handler-calls.ts), and errors are mapped to exact A2A error objects (dispatch-errors.ts). Unknown failures
 * are logged and answered with a bare -32603. A web framework adapter supplies the body, the negotiated facts and a
 * way to write JSON or SSE. This class wires the turns (their lock, retries: message-retries.ts, push URLs:
 * push-config-check.ts) and streams; CancelTask is task-cancel.ts's, the call context call-context.ts's.
 *
 * SendMessage requests that cannot involve a task up front take a lean path (packages/a2a-converse/src/backends/local/sdk-internals.ts): when the
 * agent answers with a Message, the reply is the SDK's without its task machinery; anything else is handed
 * to DefaultRequestHandler.sendMessage, which then runs as usual.
 */
import { AgentCard, CancelTaskRequest, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk'
import {
  DefaultRequestHandler, InMemoryTaskStore, type ServerCallContext, type TaskStore
} from '@a2a-js/sdk/server'
import { ExecutionBuses } from './execution-buses.js'
import { hasReplays } from '../../stores/message-replays.js'
import { createTaskWriter } from '../../events/task-writer.js'
import { MemoryTaskTurnLock, type TaskTurnLock } from '../../stores/task-turn-lock.js'
// The request marked as holding the lock where every instance shares it (a server's task store reads less).
import { acquireTaskTurn } from '../../stores/held-task-turn.js'
import { defersTaskSaves, publishesTurnAtOnce, withDeferredSaves, type DefersTaskSaves } from '../../stores/deferred-task-saves.js'
import type { TaskEventHub } from '../../events/task-event-hub.js'
import { HandoffBusManager, HandoffExecutor, HandoffRegistry, LeanSendMessage } from './sdk-internals.js'
import { followTask, relayTaskEvents, type TaskEventSource } from './task-event-relay.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { errorResponse, successResponse, type JsonRpcError, type JsonRpcResponse } from '../../protocol/errors.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { dispatchError, type ErrorLogger } from './dispatch-errors.js'
import { checkPushUrl, inlineConfigRefusal } from './push-config-check.js'
import { replayedReply, type MessageRetries } from './message-retries.js'
import { callContextOf, factsOfAgentCard, type ContextInit } from './call-context.js'
import { cancelTask, type TaskCancelling } from './task-cancel.js'
import { callHandler, HANDLER_METHODS, subscribeSnapshot } from './handler-calls.js'
import type { CallOptions, DispatcherOptions, OpenedStream } from './dispatcher-options.js'

export type { CallOptions, DispatcherOptions, OpenedStream } from './dispatcher-options.js'

/** The SDK's request handler sends nothing itself: the task store reports updates (packages/a2a-converse/src/push/). */
const NO_SENDER = { send: async (): Promise<void> => {} }

export class A2ADispatcher {
  readonly facts: AgentFacts
  readonly #handler: DefaultRequestHandler
  readonly #buses = new ExecutionBuses()
  readonly #lean: LeanSendMessage | undefined
  /** Retries answered with their first reply, when the executor keeps a record of them (stores/message-replays.ts). */
  readonly #retries: MessageRetries | undefined
  readonly #taskStore: TaskStore
  /** What CancelTask needs (task-cancel.ts). */
  readonly #cancelling: TaskCancelling
  /** Turns on an existing task, one at a time per task. */
  readonly #turnLock: TaskTurnLock
  /** Where streams of a task hear of it: the executions here, and the hub when there is one. */
  readonly #sources: readonly TaskEventSource[]
  readonly #hub: TaskEventSource | undefined
  readonly #push: AgentPush | undefined
  /** The task store, when a blocking turn's saves are written once (the executor and the store allow it). */
  readonly #deferring: DefersTaskSaves | undefined

  constructor (options: DispatcherOptions) {
    this.facts = factsOfAgentCard(options.card)
    const card = AgentCard.fromJSON(options.card)
    const taskStore = options.taskStore ?? new InMemoryTaskStore()
    this.#taskStore = taskStore
    this.#turnLock = options.turnLock ?? new MemoryTaskTurnLock()
    this.#deferring = publishesTurnAtOnce(options.executor) && defersTaskSaves(taskStore) ? taskStore : undefined
    const events = typeof options.events?.publish === 'function' ? options.events as Pick<TaskEventHub, 'publish'> : undefined
    this.#hub = options.events
    this.#sources = options.events === undefined ? [this.#buses] : [this.#buses, options.events]
    this.#push = this.facts.capabilities.pushNotifications ? options.push : undefined
    const configs = this.#push?.configs
    const sender = configs === undefined ? undefined : NO_SENDER
    // No keep-alive states: a bus lives as long as its execution (see a2a/execution-buses.ts).
    const handlerOptions = { keepBusAliveStates: [] }
    // The lean path hands what it does not answer to the SDK: the handler's executor and bus manager know.
    const registry = options.leanSendMessage === false ? undefined : new HandoffRegistry()
    this.#handler = registry === undefined
      ? new DefaultRequestHandler(card, taskStore, options.executor, this.#buses, configs, sender, undefined, undefined, handlerOptions)
      : new DefaultRequestHandler(card, taskStore, new HandoffExecutor(options.executor, registry),
        new HandoffBusManager(this.#buses, registry), configs, sender, undefined, undefined, handlerOptions)
    this.#lean = registry === undefined ? undefined : new LeanSendMessage({ card, executor: options.executor, handler: this.#handler, registry })
    this.#retries = hasReplays(options.executor) ? { replays: options.executor, taskStore, handler: this.#handler } : undefined
    this.#cancelling = { buses: this.#buses, taskStore, executor: options.executor, writer: createTaskWriter(taskStore, events), handler: this.#handler, events }
  }

  /** The SDK call context of one request: tenant from params, the caller, the requested extensions, the headers. */
  createContext (request: CheckedRequest, init: ContextInit): ServerCallContext {
    return callContextOf(request, init)
  }

  /** Answers a non-streaming method. Never rejects. */
  async call (request: CheckedRequest, context: ServerCallContext, options: CallOptions = {}): Promise<JsonRpcResponse> {
    try {
      return successResponse(request.id, await this.invoke(request, context, options))
    } catch (error) {
      return errorResponse(request.id, this.toError(error, request, options.log))
    }
  }

  /**
   * Opens a streaming method (SendStreamingMessage, SubscribeToTask). Nothing runs until the first next(). A
   * SendStreamingMessage naming a task first waits for the task's turn lock, and holds it until its SDK stream ends.
   */
  open (request: CheckedRequest, context: ServerCallContext): OpenedStream {
    if (request.method === 'SubscribeToTask') {
      const { id } = SubscribeToTaskRequest.fromJSON(request.params)
      return followTask(id, async () => await subscribeSnapshot(this.#taskStore, id, context), this.#sources)
    }
    const sendRequest = SendMessageRequest.fromJSON(request.params)
    const taskId = (sendRequest.message as Message).taskId
    const refused = inlineConfigRefusal(this.#push, request)
    /* c8 ignore next -- the service answers a stream whose first event fails as a plain error and never releases it */
    if (refused !== undefined) return { source: failing(refused), release: () => {} }
    // Stops a wait for the task's turn lock; a stream already running goes on to its end (see task-event-relay.ts).
    const stop = new AbortController()
    const events = taskId === ''
      ? this.#streamOrReplay(sendRequest, context)
      : this.#turnStream(context, taskId, sendRequest, stop.signal)
    const relayed = relayTaskEvents(toProtoJson(events), this.#hub)
    return {
      source: relayed.source,
      release: () => {
        stop.abort()
        relayed.release()
      }
    }
  }

  /** A streaming turn on an existing task, under the task's turn lock. */
  async * #turnStream (
    context: ServerCallContext, taskId: string, request: SendMessageRequest, signal: AbortSignal
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const release = await acquireTaskTurn(this.#turnLock, context, taskId, signal)
    try {
      yield * this.#streamOrReplay(request, context)
    } finally {
      await release()
    }
  }

  /** A SendStreamingMessage: the SDK's stream, or for a retry its reply as the one event (then the relay follows a running task). */
  async * #streamOrReplay (request: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const replayed = await replayedReply(this.#retries, request, context)
    if (replayed === undefined) {
      yield * this.#handler.sendMessageStream(request, context)
      return
    }
    yield 'messageId' in replayed ? { payload: { $case: 'message', value: replayed } } : { payload: { $case: 'task', value: replayed } }
  }

  /** A blocking turn on an existing task, under the task's turn lock. */
  async #turn<T> (context: ServerCallContext, taskId: string, signal: AbortSignal | undefined, turn: () => Promise<T>): Promise<T> {
    const release = await acquireTaskTurn(this.#turnLock, context, taskId, signal)
    try {
      return await turn()
    } finally {
      await release()
    }
  }

  /** The JSON-RPC error for anything thrown while handling `request`; unknown errors are logged. */
  toError (error: unknown, request: CheckedRequest, log?: ErrorLogger): JsonRpcError {
    return dispatchError(error, request, log)
  }

  /** Answers a non-streaming method with its JSON-RPC `result`; rejects with what the handler threw (see toError). */
  async invoke (request: CheckedRequest, context: ServerCallContext, options: CallOptions = {}): Promise<unknown> {
    const handler = this.#handler
    const params = request.params
    if (request.method === 'CreateTaskPushNotificationConfig') checkPushUrl(this.#push, (params as { url: string }).url, 'url')
    if (HANDLER_METHODS.has(request.method)) return await callHandler(handler, request, context)
    switch (request.method) {
      case 'SendMessage': {
        const refused = inlineConfigRefusal(this.#push, request)
        if (refused !== undefined) throw refused
        const sendRequest = SendMessageRequest.fromJSON(params)
        const lean = this.#lean
        // The params check requires a message; ProtoJSON reads an absent taskId as ''.
        const taskId = (sendRequest.message as Message).taskId
        // A retry gets the first reply (message-retries.ts); under the task's turn lock when it names one, so it sees every
        // turn before it, the first copy's too.
        const reply = async (): Promise<Message | Task> => await replayedReply(this.#retries, sendRequest, context) ?? (
          lean !== undefined && lean.eligible(sendRequest)
            ? await lean.send(sendRequest, context)
            : await handler.sendMessage(sendRequest, context))
        // A blocking turn's saves of its task are written once, before its reply (stores/deferred-task-saves.ts).
        const deferring = sendRequest.configuration?.returnImmediately === true ? undefined : this.#deferring
        const send = deferring === undefined
          ? reply
          : async () => await withDeferredSaves(deferring, context, taskId === '' ? undefined : taskId, reply)
        const answer = taskId === ''
          ? await send()
          // One turn at a time per task (packages/a2a-converse/src/stores/task-turn-lock.ts): a turn that comes after the one that
          // finished the task finds it over (-32004), as it would have a moment later.
          : await this.#turn(context, taskId, options.signal, send)
        return 'messageId' in answer ? { message: Message.toJSON(answer) } : { task: Task.toJSON(answer) }
      }
      case 'CancelTask':
        return Task.toJSON(await cancelTask(this.#cancelling, CancelTaskRequest.fromJSON(params), context))
      default:
        // Streaming methods are open()'s; GetExtendedAgentCard is the backend's (local-backend.ts).
        throw new Error(`${request.method} is not answered by the dispatcher`)
    }
  }
}

// A stream whose first next() throws: the service answers the error as a plain reply.
async function * failing (error: Error): AsyncGenerator<unknown, void, undefined> {
  throw error
}

async function * toProtoJson (events: AsyncGenerator<StreamResponse, void, undefined>): AsyncGenerator<unknown, void, undefined> {
  for await (const event of events) yield StreamResponse.toJSON(event)
}
