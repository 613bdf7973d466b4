/**
 * Human takeover for a proxied agent: the upstream backend behind the gateway's conversation state.
 *
 * - SendMessage / SendStreamingMessage naming a contextId the gateway knows as human-owned are not forwarded: a
 *   local backend answers them with the held-turn executor (a gateway-local task, WORKING, suppressed), and a
 *   person's replies reach that task through the inbox, exactly as for local agents. Every other turn goes
 *   upstream, and is recorded in the conversation (the caller's text, the agent's reply, the upstream's own
 *   envelope when it sent one), so the inbox lists proxied conversations and can take them over.
 * - GetTask, CancelTask, SubscribeToTask and the push-config methods of a gateway-local task are answered locally
 *   (a held turn's inline config too); every other request goes upstream.
 *
 * Conversations are the caller's own (`conversationKey(caller, contextId)`, the caller recorded on them), as for
 * local agents: a person's reply reaches only the caller whose conversation was taken over.
 *
 * Ownership is read (not locked) before a turn is forwarded: a takeover that lands while a forwarded turn is on
 * its way applies from the next turn.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import { callerContext } from '../../auth/sdk-user.js'
import { localBackend } from '../local/local-backend.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import type { TaskEventSource } from '../local/task-event-relay.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { conversationKey, type ConversationStore } from '../../stores/conversation-store.js'
import { inConversationSpan } from '../../stores/traced-conversations.js'
import { heldTurnExecutor } from './held-turn-executor.js'
import { observeResult, recordForwardedTurn, type TurnOutcome, type TurnRecording, type WireObject } from './forwarded-turns.js'
import { UpstreamError } from './upstream-errors.js'
import { CONFIG_METHODS } from './relayed-push-backend.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { randomUUID } from 'node:crypto'

export interface TakeoverBackendOptions {
  agentId: string
  upstream: A2ABackend
  conversations: ConversationStore
  /** Where the held turns' tasks live (the agent's task store in the gateway, the inbox's). */
  taskStore: TaskStore
  /** Live task events: a person's replies to open streams of a held task. */
  events?: TaskEventSource
  /**
   * Push notifications of the held tasks (configs, URL policy; `taskStore` reports its saves): a person's reply
   * reaches a held task's webhooks as any update of a local task.
   */
  push?: AgentPush
  newId?: () => string
}

const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage'])
const TASK_METHODS = new Set(['GetTask', 'CancelTask', 'SubscribeToTask'])

export function takeoverBackend (options: TakeoverBackendOptions): A2ABackend {
  const { agentId, upstream, conversations, taskStore } = options
  const newId = options.newId ?? randomUUID
  const recording: TurnRecording = { agentId, conversations, newId }
  const local = localBackend({
    card: heldTurnsCard(agentId, options.push !== undefined),
    executor: heldTurnExecutor({ agentId, store: conversations, newId }),
    taskStore,
    events: options.events,
    push: options.push
  })

  /**
   * Whether the request is answered here rather than upstream. The caller's own conversation (conversationKey: an
   * authenticated caller's contextIds are its own) and its own held tasks (the task store's caller scope) only.
   */
  async function answeredHere (request: CheckedRequest, context: BackendContext): Promise<boolean> {
    if (SEND_METHODS.has(request.method)) {
      const { contextId, taskId } = request.params.message as WireObject & { taskId?: unknown }
      // A turn naming the caller's own held task continues it, with or without its contextId.
      if (taskId !== undefined && await isLocalTask(taskId, context)) return true
      if (typeof contextId !== 'string') return false
      const state = await inConversationSpan(conversations, 'get', agentId, contextId, context.traceContext,
        async () => await conversations.get(agentId, conversationKey(context.caller?.id, contextId)))
      return state?.ownership === 'human_owned'
    }
    if (TASK_METHODS.has(request.method)) return await isLocalTask(request.params.id, context)
    if (CONFIG_METHODS.has(request.method)) return await isLocalTask(request.params.taskId, context)
    return false
  }

  async function isLocalTask (taskId: unknown, context: BackendContext): Promise<boolean> {
    return typeof taskId === 'string' && await taskStore.load(taskId, callerContext(context.caller?.id)) !== undefined
  }

  /** A held turn continues a held task, or starts one: a taskId of an upstream task is not carried over. */
  async function heldRequest (request: CheckedRequest, context: BackendContext): Promise<CheckedRequest> {
    const message = request.params.message as Record<string, unknown>
    return message.taskId === undefined || await isLocalTask(message.taskId, context) ? request : withoutTaskId(request)
  }

  async function * forwardedStream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    if (await answeredHere(request, context)) {
      yield * iterate(local.stream(request.method === 'SubscribeToTask' ? request : await heldRequest(request, context), context))
      return
    }
    const outcome: TurnOutcome = {}
    const turn = request.method === 'SendStreamingMessage'
    try {
      for await (const result of iterate(upstream.stream(request, context))) {
        if (turn) observeResult(outcome, result)
        yield result
      }
    } finally {
      if (turn) await recordForwardedTurn(recording, request, outcome, context)
    }
  }

  return {
    get facts () { return upstream.facts },
    async call (request, context) {
      if (await answeredHere(request, context)) {
        return await local.call(request.method === 'SendMessage' ? await heldRequest(request, context) : request, context)
      }
      const result = await upstream.call(request, context)
      if (request.method === 'SendMessage') {
        const outcome: TurnOutcome = {}
        observeResult(outcome, result)
        await recordForwardedTurn(recording, request, outcome, context)
      }
      return result
    },
    stream: forwardedStream,
    toError (error, request, log) {
      return error instanceof UpstreamError ? upstream.toError(error, request, log) : local.toError(error, request, log)
    }
  }
}

/**
 * The card of the local backend that runs the held turns only: streaming is what the upstream's facts allow. The
 * converse extension declared as the gateway serves it: the SDK keeps only declared extensions of a turn's request,
 * and a held turn's inline push config carries the envelope when its request activated it.
 */
function heldTurnsCard (agentId: string, pushNotifications: boolean): Record<string, unknown> {
  return {
    name: agentId,
    description: '',
    capabilities: { streaming: true, pushNotifications, extensions: [{ uri: CONVERSE_EXTENSION_URI, required: false }] }
  }
}

/** A turn without its message's taskId (an upstream task's, not carried over to a held turn). */
function withoutTaskId (request: CheckedRequest): CheckedRequest {
  const { taskId: _upstreamTask, ...rest } = request.params.message as Record<string, unknown>
  return { ...request, params: { ...request.params, message: rest } }
}

function iterate<T> (iterator: AsyncIterator<T, void, undefined>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator }
}
