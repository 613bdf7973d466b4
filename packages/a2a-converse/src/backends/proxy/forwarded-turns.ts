/**
 * What a forwarded turn of a proxied agent leaves in the caller's conversation (takeover-backend.ts): the caller's
 * text, the agent's last words (a reply Message, or the status message of its task) with the upstream's own envelope
 * when it sent one, and the task they belong to — folded from the reply or the stream's events as they pass, then
 * turned into conversation turns and added to the caller's conversation.
 */
import type { ConverseEnvelope } from '../../core/envelope.js'
import { normalizeEnvelope } from '../../core/normalize-envelope.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import type { BackendContext } from '../../protocol/backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { messageText } from '../../runtime/slot-input.js'
import { conversationKey, newConversationState, type ConversationStore, type ConversationTurn } from '../../stores/conversation-store.js'
import { inConversationSpan } from '../../stores/traced-conversations.js'

export interface WireObject {
  contextId?: string
  id?: string
  parts?: unknown[]
  metadata?: Record<string, unknown>
  status?: { message?: WireObject }
}

/** What a forwarded turn leaves to record: its conversation, its task, the agent's last words. */
export interface TurnOutcome {
  contextId?: string
  taskId?: string
  reply?: WireObject
}

/** Folds one result (a SendMessage reply or a stream event) into what the turn leaves. */
export function observeResult (outcome: TurnOutcome, result: unknown): void {
  if (result === null || typeof result !== 'object') return
  const { message, task, statusUpdate } = result as { message?: WireObject, task?: WireObject, statusUpdate?: { taskId?: string } & WireObject }
  const source = message ?? task ?? statusUpdate
  if (source === undefined) return
  outcome.contextId ??= source.contextId
  if (message !== undefined) outcome.reply = message
  if (task !== undefined) outcome.taskId = task.id
  if (statusUpdate !== undefined) outcome.taskId ??= statusUpdate.taskId
  const status = (task ?? statusUpdate)?.status?.message
  if (status !== undefined) outcome.reply = status
}

/** The conversation turns of a forwarded turn: the caller's, then the agent's when it said something. */
export function forwardedTurns (request: CheckedRequest, outcome: TurnOutcome, newId: () => string, at: string): ConversationTurn[] {
  const message = request.params.message as WireObject & { messageId?: string }
  const turns: ConversationTurn[] = [
    { id: newId(), at, role: 'user', text: messageText(message.parts), taskId: outcome.taskId, messageId: message.messageId }
  ]
  const reply = outcome.reply
  if (reply !== undefined) {
    const turn: ConversationTurn = { id: newId(), at, role: 'agent', text: messageText(reply.parts), taskId: outcome.taskId }
    const attached = reply.metadata?.[CONVERSE_EXTENSION_URI]
    if (attached !== undefined) turn.envelope = normalizeEnvelope(attached).envelope as ConverseEnvelope
    turns.push(turn)
  }
  return turns
}

export interface TurnRecording {
  agentId: string
  conversations: ConversationStore
  newId: () => string
}

/**
 * Adds the forwarded turn (the caller's text, the reply's) to the caller's conversation, when it names one. Never
 * throws: the caller has its answer; a conversation not recorded costs the inbox one turn (logged), not the reply.
 */
export async function recordForwardedTurn (
  recording: TurnRecording, request: CheckedRequest, outcome: TurnOutcome, context: BackendContext
): Promise<void> {
  const { agentId, conversations } = recording
  const contextId = outcome.contextId
  if (contextId === undefined) return
  try {
    const callerId = context.caller?.id
    const turns = forwardedTurns(request, outcome, recording.newId, new Date().toISOString())
    const key = conversationKey(callerId, contextId)
    await inConversationSpan(conversations, 'update', agentId, contextId, context.traceContext, async () => await conversations.update(agentId, key, (current) => {
      const state = current ?? newConversationState(agentId, key)
      if (callerId !== undefined) state.caller = { id: callerId, contextId }
      state.turns.push(...turns)
      return state
    }))
  } catch (error) {
    context.log?.error({ agentId, err: { name: (error as Error).name, message: (error as Error).message } }, 'proxied turn not recorded')
  }
}
