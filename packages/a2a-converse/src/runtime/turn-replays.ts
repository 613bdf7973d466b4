/**
 * A message sent again (the same messageId: a lost reply, a retry): found in the conversation before the SDK runs
 * anything (`replayOf`), and its first reply published again when the turn is a replay. The conversation executor
 * composes both; they decide nothing about a new turn.
 */
import { Message } from '@a2a-js/sdk'
import { AgentEvent, type ExecutionEventBus, type RequestContext, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { callerIdOf } from '../auth/sdk-user.js'
import { callerKeyOf } from '../stores/caller-key.js'
import { conversationKey, type ConversationState, type ConversationStore } from '../stores/conversation-store.js'
import { messageContentDigest, type Replay } from '../stores/message-replays.js'
import { inConversationSpan } from '../stores/traced-conversations.js'
import { traceContextIn } from '../telemetry/tracing.js'
import { agentMessage, textPart } from './agent-messages.js'
import { taskOfTurn } from './superseded-task.js'
import { envelopeBase, firstTurnOf, type ReplayPlan } from './turn-plan.js'

/** What a replay reads: the agent's conversations and tasks. */
export interface ReplaySources {
  agentId: string
  store: ConversationStore
  taskStore: TaskStore
  newId: () => string
}

/**
 * replayOf's read may be the state the store last read or wrote (issue 43): the turn's write is made only if the
 * conversation is still at that version (`read`), else it is decided again on the stored state, retries included.
 */
const RECENT = { recent: true } as const

/**
 * How a request's conversation was found new: looked up and absent, or its id made for the request (the message named
 * no contextId: nobody else, on any instance, can know that id).
 */
export type FreshConversation = 'found absent' | 'new id'

/**
 * The first reply to a message sent again, or undefined for a new message. The conversation read for a new message
 * is kept in `reads` (by call context) for the turn's update, so a turn reads it once; a new conversation is marked
 * in `fresh` (its turn is decided on the new state before its one write) and admitted first by a store that has
 * `admit` (refused here, before anything runs, when its caller is at the store's bound; a store without refuses in
 * the write).
 */
export async function replayOf (
  sources: ReplaySources,
  reads: WeakMap<ServerCallContext, ConversationState>,
  fresh: WeakMap<ServerCallContext, FreshConversation>,
  message: Message,
  contextId: string,
  context: ServerCallContext
): Promise<Replay | undefined> {
  const { agentId, store, taskStore } = sources
  const trace = traceContextIn(context.state)
  const state = contextId === ''
    ? undefined
    : await inConversationSpan(store, 'get', agentId, contextId, trace, async () => await store.get(agentId, conversationKey(callerIdOf(context), contextId), RECENT))
  if (state === undefined) {
    fresh.set(context, contextId === '' ? 'new id' : 'found absent')
    // A new conversation: refused here, before anything runs, when its caller is at the store's bound.
    const { admit } = store
    if (admit === undefined) return undefined
    await inConversationSpan(store, 'admit', agentId, contextId === '' ? undefined : contextId, trace, async () => { await admit.call(store, agentId, callerKeyOf(context)) })
    return undefined
  }
  const first = firstTurnOf(state, message.messageId)
  if (first === undefined) {
    reads.set(context, state)
    return undefined
  }
  if (first.content !== undefined && first.content !== messageContentDigest(message)) return { kind: 'conflict' }
  if (first.reply !== undefined) return { kind: 'message', message: Message.fromJSON(JSON.parse(first.reply)) }
  if (first.taskId === undefined) return undefined
  // The first copy committed its turn; its task may still be being stored (here or on another instance).
  await taskOfTurn(taskStore, first.taskId, first.id, context)
  return { kind: 'task', taskId: first.taskId }
}

/**
 * A replayed reply: the kept Message as it was; the task holding the first reply as it stands (an event without
 * history or artifacts: the SDK merges what is stored, so nothing older is written back), or, when the store no
 * longer keeps that task, a Message that names it (in referenceTaskIds; the Message itself is in no task).
 */
export async function publishReplay (sources: ReplaySources, replay: ReplayPlan, requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
  if (replay.message !== undefined) {
    eventBus.publish(AgentEvent.message(replay.message))
    return
  }
  const { taskId, turnId } = replay.task as { taskId: string, turnId: string }
  const task = await taskOfTurn(sources.taskStore, taskId, turnId, requestContext.context)
  if (task !== undefined) {
    eventBus.publish(AgentEvent.task({ ...task, history: [], artifacts: [] }))
    return
  }
  const messageId = requestContext.userMessage.messageId
  const gone = agentMessage({
    messageId: sources.newId(),
    contextId: requestContext.contextId,
    parts: [textPart(`Message ${messageId} was already received and answered in task ${taskId}, which is no longer kept.`)],
    envelope: envelopeBase(turnId, messageId)
  })
  gone.referenceTaskIds = [taskId]
  eventBus.publish(AgentEvent.message(gone))
}
