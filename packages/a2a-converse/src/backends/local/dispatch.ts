/**
 * The framework-free A2A 1.0 JSON-RPC dispatcher over @a2a-js/sdk's DefaultRequestHandler.
 *
 * It replaces the SDK's JsonRpcTransportHandler: requests are checked up front (check-request.ts), then the
 * request handler's methods are called directly with the ProtoJSON ↔ SDK conversions the transport would
 * do, and errors are mapped to exact A2A error objects (sdk-errors.ts). Unknown failures are logged and
 * answered with a bare -32603. A web framework adapter supplies the body, the negotiated facts and a way to
 * write JSON or SSE.
 *
 * SendMessage requests that cannot involve a task up front take a lean path (packages/a2a-converse/src/backends/local/sdk-internals.ts): when the
 * agent answers with a Message, the reply is the SDK's without its task machinery; anything else is handed
 * to DefaultRequestHandler.sendMessage, which then runs as usual.
 */
import {
  AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
  GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
  ListTasksResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig
} from '@a2a-js/sdk'
import {
  DefaultExecutionEventBus, DefaultRequestHandler, InMemoryTaskStore, ServerCallContext,
  STATE_HEADERS_KEY, type AgentExecutionEvent, type AgentExecutor, type TaskStore
} from '@a2a-js/sdk/server'
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { ExecutionBuses } from './execution-buses.js'
import { hasReplays, MessageIdReusedError, type MessageReplays } from '../../stores/message-replays.js'
import { createTaskWriter, type TaskWriter } from '../../events/task-writer.js'
import { CALLER_KEY_STATE, CallerCapError } from '../../stores/caller-key.js'
import { TERMINAL_TASK_STATES } from '../../stores/task-states.js'
import { MemoryTaskTurnLock, TaskBusyError, type TaskTurnLock } from '../../stores/task-turn-lock.js'
import { acquireTurn } from '../../stores/traced-turn-lock.js'
import { AuthenticatedCaller } from '../../auth/sdk-user.js'
import type { TaskEventHub } from '../../events/task-event-hub.js'
import { HandoffBusManager, HandoffExecutor, HandoffRegistry, LeanSendMessage } from './sdk-internals.js'
import { followTask, relayTaskEvents, type TaskEventSource, type TaskStreamEvent } from './task-event-relay.js'
import { withoutUnsetStatusFilter } from '../../protocol/params.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import {
  capReached, errorResponse, internalError, invalidParams, successResponse, type JsonRpcError, type JsonRpcResponse
} from '../../protocol/errors.js'
import { fromSdkError } from './sdk-errors.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { TRACE_CONTEXT_STATE, type Context } from '../../telemetry/tracing.js'
import { ConverseError, ERROR_CODES, isConverseError } from '../../core/errors.js'

/** pino-compatible. */
export interface ErrorLogger {
  error (object: object, message: string): void
}

export interface DispatcherOptions {
  /** The agent card (ProtoJSON). Its `capabilities` are what the agent serves. */
  card: Record<string, unknown>
  executor: AgentExecutor
  /** Default: a new InMemoryTaskStore. */
  taskStore?: TaskStore
  /**
   * The lean SendMessage path for Message replies (same results, see packages/a2a-converse/src/backends/local/sdk-internals.ts). Default true;
   * false sends every SendMessage through DefaultRequestHandler.sendMessage.
   */
  leanSendMessage?: boolean
  /**
   * Task events published from outside an execution (the task event hub): streams of a task relay them and end
   * with one that ends the task (see task-event-relay.ts). With its `publish`, a cancel is published too, so every
   * open stream of the task ends with it.
   */
  events?: TaskEventSource & Partial<Pick<TaskEventHub, 'publish'>>
  /**
   * Turns that name an existing task (SendMessage, SendStreamingMessage) run one at a time per task under this
   * lock. Default: a MemoryTaskTurnLock (this process); instances sharing a task store need a shared one.
   */
  turnLock?: TaskTurnLock
  /**
   * Push notifications (the card's `capabilities.pushNotifications`): where configs live and the URL policy they
   * are checked against. The task store given reports its saves' updates (packages/a2a-converse/src/push/push-notifications.ts); the
   * SDK's own sender is not used.
   */
  push?: AgentPush
}

/** A push config the URL policy refuses: -32602 naming the field. */
export class PushConfigRefusedError extends ConverseError {
  readonly field: string
  constructor (field: string, description: string) {
    super(ERROR_CODES.PUSH_CONFIG_REFUSED, description)
    this.field = field
  }
}

/** The SDK's request handler sends nothing itself: the task store reports updates (packages/a2a-converse/src/push/). */
const NO_SENDER = { send: async (): Promise<void> => {} }

export interface CallOptions {
  log?: ErrorLogger
  /** The request's: a turn waiting for the task's lock stops waiting when it aborts. */
  signal?: AbortSignal
}

export interface ContextInit {
  /** Extension URIs the request asked for. */
  requestedExtensions: readonly string[]
  version: string
  headers?: Record<string, string | string[] | undefined>
  /** The authenticated caller's id; absent for a walk-in. */
  callerId?: string
  /** The caller key per-caller bounds count by (packages/a2a-converse/src/stores/caller-key.ts); the stores read it from the context. */
  callerKey?: string
  /** The call's trace context as it is when asked (TRACE_CONTEXT_STATE); the traced store and push read it. */
  traceContext?: () => Context | undefined
}

/** A stream of JSON-RPC `result`s (StreamResponse ProtoJSON), and how to stop it early. */
export interface OpenedStream {
  source: AsyncGenerator<unknown, void, undefined>
  /** Ends the stream now (client gone, server closing); the task and its execution are left alone. Idempotent. */
  release (): void
}

interface Capabilities { streaming?: boolean, pushNotifications?: boolean, extendedAgentCard?: boolean }
interface ExtensionEntry { uri?: unknown, required?: unknown }

/** The -32603 message when the state store (tasks, conversations) cannot be reached. */
export const STORE_UNAVAILABLE_MESSAGE = 'the state store is unreachable; try again later'

export class A2ADispatcher {
  readonly facts: AgentFacts
  readonly #handler: DefaultRequestHandler
  readonly #buses = new ExecutionBuses()
  readonly #lean: LeanSendMessage | undefined
  readonly #executor: AgentExecutor
  /** The executor's record of what each messageId was answered with, when it keeps one (a2a/message-replays.ts). */
  readonly #replays: MessageReplays | undefined
  readonly #taskStore: TaskStore
  readonly #writer: TaskWriter
  readonly #events: Pick<TaskEventHub, 'publish'> | undefined
  /** Turns on an existing task, one at a time per task. */
  readonly #turnLock: TaskTurnLock
  /** Where streams of a task hear of it: the executions here, and the hub when there is one. */
  readonly #sources: readonly TaskEventSource[]
  readonly #hub: TaskEventSource | undefined
  readonly #push: AgentPush | undefined

  constructor (options: DispatcherOptions) {
    const capabilities = (options.card.capabilities ?? {}) as Capabilities & { extensions?: ExtensionEntry[] }
    this.facts = {
      capabilities: {
        streaming: capabilities.streaming === true,
        pushNotifications: capabilities.pushNotifications === true,
        extendedAgentCard: capabilities.extendedAgentCard === true
      },
      requiredExtensions: (capabilities.extensions ?? [])
        .filter((entry) => entry.required === true && typeof entry.uri === 'string')
        .map((entry) => entry.uri as string)
    }
    const card = AgentCard.fromJSON(options.card)
    const taskStore = options.taskStore ?? new InMemoryTaskStore()
    this.#executor = options.executor
    this.#replays = hasReplays(options.executor) ? options.executor : undefined
    this.#taskStore = taskStore
    this.#turnLock = options.turnLock ?? new MemoryTaskTurnLock()
    this.#events = typeof options.events?.publish === 'function' ? options.events as Pick<TaskEventHub, 'publish'> : undefined
    this.#writer = createTaskWriter(taskStore, this.#events)
    this.#hub = options.events
    this.#sources = options.events === undefined ? [this.#buses] : [this.#buses, options.events]
    this.#push = this.facts.capabilities.pushNotifications ? options.push : undefined
    const configs = this.#push?.configs
    const sender = configs === undefined ? undefined : NO_SENDER
    // No keep-alive states: a bus lives as long as its execution (see a2a/execution-buses.ts).
    const handlerOptions = { keepBusAliveStates: [] }
    if (options.leanSendMessage === false) {
      this.#handler = new DefaultRequestHandler(card, taskStore, options.executor, this.#buses,
        configs, sender, undefined, undefined, handlerOptions)
      return
    }
    // The lean path hands what it does not answer to the SDK: the handler's executor and bus manager know.
    const registry = new HandoffRegistry()
    this.#handler = new DefaultRequestHandler(card, taskStore,
      new HandoffExecutor(options.executor, registry), new HandoffBusManager(this.#buses, registry),
      configs, sender, undefined, undefined, handlerOptions)
    this.#lean = new LeanSendMessage({ card, executor: options.executor, handler: this.#handler, registry })
  }

  /** The SDK call context of one request: tenant from params, the caller, the requested extensions, the headers. */
  createContext (request: CheckedRequest, init: ContextInit): ServerCallContext {
    const tenant = request.params.tenant
    const state = new Map<string, unknown>([[STATE_HEADERS_KEY, init.headers ?? {}]])
    if (init.callerKey !== undefined) state.set(CALLER_KEY_STATE, init.callerKey)
    if (init.traceContext !== undefined) state.set(TRACE_CONTEXT_STATE, init.traceContext)
    return new ServerCallContext({
      requestedExtensions: [...init.requestedExtensions],
      requestedVersion: init.version,
      tenant: typeof tenant === 'string' && tenant !== '' ? tenant : undefined,
      user: init.callerId === undefined ? undefined : new AuthenticatedCaller(init.callerId),
      state
    })
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
      return followTask(id, async () => await this.#snapshot(id, context), this.#sources)
    }
    const sendRequest = SendMessageRequest.fromJSON(request.params)
    const taskId = (sendRequest.message as Message).taskId
    const refused = this.#inlineConfigRefusal(request)
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

  /** SubscribeToTask's first result, with the SDK's errors for the same cases (DefaultRequestHandler.resubscribe). */
  async #snapshot (taskId: string, context: ServerCallContext): Promise<TaskStreamEvent> {
    if (taskId.trim() === '') throw new RequestMalformedError('Task ID is required')
    const task = await this.#taskStore.load(taskId, context)
    if (task === undefined) throw new TaskNotFoundError(`Task not found: ${taskId}`)
    const state = task.status?.state
    if (TERMINAL_TASK_STATES.has(state)) {
      throw new UnsupportedOperationError(`Task ${taskId} is in a terminal state (${state as number}) and cannot be subscribed to.`)
    }
    return StreamResponse.toJSON({ payload: { $case: 'task', value: task } }) as TaskStreamEvent
  }

  /** A streaming turn on an existing task, under the task's turn lock. */
  async * #turnStream (
    context: ServerCallContext, taskId: string, request: SendMessageRequest, signal: AbortSignal
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const release = await acquireTurn(this.#turnLock, context, taskId, signal)
    try {
      yield * this.#streamOrReplay(request, context)
    } finally {
      await release()
    }
  }

  /**
   * A retry's reply (a2a/message-replays.ts): the first Message, or the task holding the first reply as GetTask
   * shows it (with the request's historyLength); undefined for a new message. A messageId used for other content
   * throws MessageIdReusedError (-32602). The conversation is the message's contextId, or its task's.
   */
  async #replayed (request: SendMessageRequest, context: ServerCallContext): Promise<Message | Task | undefined> {
    if (this.#replays === undefined) return undefined
    const message = request.message as Message
    let contextId = message.contextId
    if (contextId === '' && message.taskId !== '') contextId = (await this.#taskStore.load(message.taskId, context))?.contextId ?? ''
    // contextId '': a new conversation (the executor may refuse it: a per-caller bound).
    const replay = await this.#replays.replayOf(message, contextId, context)
    if (replay === undefined) return undefined
    if (replay.kind === 'conflict') throw new MessageIdReusedError(message.messageId)
    if (replay.kind === 'message') return replay.message
    const view = GetTaskRequest.fromJSON({ id: replay.taskId, historyLength: request.configuration?.historyLength })
    return await this.#handler.getTask(view, context)
  }

  /** A SendStreamingMessage: the SDK's stream, or for a retry its reply as the one event (then the relay follows a running task). */
  async * #streamOrReplay (request: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const replayed = await this.#replayed(request, context)
    if (replayed === undefined) {
      yield * this.#handler.sendMessageStream(request, context)
      return
    }
    yield 'messageId' in replayed ? { payload: { $case: 'message', value: replayed } } : { payload: { $case: 'task', value: replayed } }
  }

  /** A blocking turn on an existing task, under the task's turn lock. */
  async #turn<T> (context: ServerCallContext, taskId: string, signal: AbortSignal | undefined, turn: () => Promise<T>): Promise<T> {
    const release = await acquireTurn(this.#turnLock, context, taskId, signal)
    try {
      return await turn()
    } finally {
      await release()
    }
  }

  /** Refuses (PushConfigRefusedError) a webhook URL the agent's URL policy does not allow. */
  #checkUrl (url: string, field: string): void {
    const refusal = this.#push?.policy.refusal(url)
    if (refusal !== undefined) throw new PushConfigRefusedError(field, refusal)
  }

  /** The refusal of a SendMessage's inline push config, before anything runs; undefined when none or allowed. */
  #inlineConfigRefusal (request: CheckedRequest): PushConfigRefusedError | undefined {
    const configuration = (request.params as { configuration?: { taskPushNotificationConfig?: { url: string } } }).configuration
    const url = configuration?.taskPushNotificationConfig?.url
    if (url === undefined || this.#push === undefined) return undefined
    try {
      this.#checkUrl(url, 'configuration.taskPushNotificationConfig.url')
    } catch (error) {
      return error as PushConfigRefusedError
    }
    return undefined
  }

  /** The JSON-RPC error for anything thrown while handling `request`; unknown errors are logged. */
  toError (error: unknown, request: CheckedRequest, log?: ErrorLogger): JsonRpcError {
    const mapped = fromSdkError(error, { taskId: taskIdOf(request) })
    if (mapped !== undefined) return mapped
    if (error instanceof CallerCapError) return capReached(error.cap, error.limit, error.message)
    if (error instanceof MessageIdReusedError) return invalidParams([{ field: 'message.messageId', description: error.message }])
    if (error instanceof PushConfigRefusedError) return invalidParams([{ field: error.field, description: error.message }])
    // Waited its bound for the task's earlier turns: nothing ran, nothing was written; not a failure of ours.
    if (error instanceof TaskBusyError) return internalError(error.message)
    log?.error({ err: error, method: request.method }, 'A2A request handler failed')
    // The state store is unreachable (StoreUnavailableError): say so, but keep the driver's detail (hosts, ports)
    // in the log above, not in the reply.
    if (isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE)) return internalError(STORE_UNAVAILABLE_MESSAGE)
    return internalError(`Internal error while handling ${request.method}`)
  }

  /**
   * CancelTask. With no execution of the task on this instance (its executor returned and left it waiting for input
   * or for a person, or it ran elsewhere), the SDK would write a generic CANCELED status and tell
   * nobody: instead the agent's own cancelTask runs on a bus of its own and what it publishes is written
   * through the task writer (stored, published: every open stream of the task ends with it). Everything else
   * (not found, already over, a running execution) is the SDK's; a cancel the SDK writes is published too.
   */
  async #cancel (request: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const taskId = request.id
    let written = false
    if (taskId !== '' && this.#buses.getByTaskId(taskId, context) === undefined) {
      const task = await this.#taskStore.load(taskId, context)
      if (task !== undefined && !TERMINAL_TASK_STATES.has(task.status?.state)) {
        const bus = new DefaultExecutionEventBus()
        const published: AgentExecutionEvent[] = []
        bus.on('event', (event) => { published.push(event) })
        await this.#executor.cancelTask(taskId, bus)
        await this.#writer.writeEvents(published, context)
        written = published.length > 0
      }
    }
    const canceled = await this.#handler.cancelTask(request, context)
    if (!written && this.#events !== undefined) {
      await this.#events.publish(taskId, StreamResponse.toJSON({
        payload: { $case: 'statusUpdate', value: { taskId, contextId: canceled.contextId, status: canceled.status, metadata: undefined } }
      }) as Record<string, unknown>)
    }
    return canceled
  }

  /** Answers a non-streaming method with its JSON-RPC `result`; rejects with what the handler threw (see toError). */
  async invoke (request: CheckedRequest, context: ServerCallContext, options: CallOptions = {}): Promise<unknown> {
    const handler = this.#handler
    const params = request.params
    switch (request.method) {
      case 'SendMessage': {
        const refused = this.#inlineConfigRefusal(request)
        if (refused !== undefined) throw refused
        const sendRequest = SendMessageRequest.fromJSON(params)
        const lean = this.#lean
        // The params check requires a message; ProtoJSON reads an absent taskId as ''.
        const taskId = (sendRequest.message as Message).taskId
        // A retry gets the first reply (#replayed); under the task's turn lock when it names one, so it sees every
        // turn before it, the first copy's too.
        const send = async (): Promise<Message | Task> => await this.#replayed(sendRequest, context) ?? (
          lean !== undefined && lean.eligible(sendRequest)
            ? await lean.send(sendRequest, context)
            : await handler.sendMessage(sendRequest, context))
        const reply = taskId === ''
          ? await send()
          // One turn at a time per task (packages/a2a-converse/src/stores/task-turn-lock.ts): a turn that comes after the one that
          // finished the task finds it over (-32004), as it would have a moment later.
          : await this.#turn(context, taskId, options.signal, send)
        return 'messageId' in reply ? { message: Message.toJSON(reply) } : { task: Task.toJSON(reply) }
      }
      case 'GetTask':
        return Task.toJSON(await handler.getTask(GetTaskRequest.fromJSON(params), context))
      case 'ListTasks': {
        const listed = ListTasksResponse.toJSON(await handler.listTasks(ListTasksRequest.fromJSON(withoutUnsetStatusFilter(params)), context)) as {
          tasks?: unknown[], nextPageToken?: string, pageSize?: number, totalSize?: number
        }
        // ListTasksResponse members are all REQUIRED (§3.1.4): emit them despite ProtoJSON default omission.
        return { tasks: listed.tasks ?? [], nextPageToken: listed.nextPageToken ?? '', pageSize: listed.pageSize ?? 0, totalSize: listed.totalSize ?? 0 }
      }
      case 'CancelTask':
        return Task.toJSON(await this.#cancel(CancelTaskRequest.fromJSON(params), context))
      case 'CreateTaskPushNotificationConfig':
        this.#checkUrl((params as { url: string }).url, 'url')
        return TaskPushNotificationConfig.toJSON(
          await handler.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(params), context))
      case 'GetTaskPushNotificationConfig':
        return TaskPushNotificationConfig.toJSON(
          await handler.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON(params), context))
      case 'ListTaskPushNotificationConfigs': {
        const listed = ListTaskPushNotificationConfigsResponse.toJSON(
          await handler.listTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest.fromJSON(params), context)
        ) as { configs?: unknown[], nextPageToken?: string }
        return { configs: listed.configs ?? [], nextPageToken: listed.nextPageToken ?? '' }
      }
      case 'DeleteTaskPushNotificationConfig':
        await handler.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON(params), context)
        return {} // google.protobuf.Empty
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

function taskIdOf (request: CheckedRequest): string | undefined {
  const params = request.params as { id?: unknown, taskId?: unknown, message?: { taskId?: unknown } }
  let taskId: unknown = params.id
  if (request.method.includes('PushNotificationConfig')) taskId = params.taskId
  else if (request.method === 'SendMessage' || request.method === 'SendStreamingMessage') taskId = params.message?.taskId
  return typeof taskId === 'string' && taskId !== '' ? taskId : undefined
}
