/**
 * The turns of a proxied agent's conversation while a person owns it: not forwarded, answered here as for local
 * agents (conversation-executor.ts) — a gateway-local task, WORKING, whose status says the turn waits for a person
 * (`ownership: { state: human_owned, suppressed: true }`), with the person's replies written before the turn
 * delivered into it first. The person's later replies reach the task through the inbox (operator API), which finds
 * it as the conversation's last task turn.
 */
import { TaskState, type Message } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor } from '@a2a-js/sdk/server'
import { callerIdOf } from '../../auth/sdk-user.js'
import type { ConverseEnvelope } from '../../core/envelope.js'
import { turnTask } from '../../runtime/turn-events.js'
import { agentMessage, dataPart, humanMessage, textPart } from '../../runtime/agent-messages.js'
import { messageText, toWireParts } from '../../runtime/slot-input.js'
import { conversationKey, newConversationState, type ConversationStore, type HumanReply } from '../../stores/conversation-store.js'
import { inConversationSpan } from '../../stores/traced-conversations.js'
import { traceContextIn } from '../../telemetry/tracing.js'

export interface HeldTurnExecutorOptions {
  agentId: string
  store: ConversationStore
  newId: () => string
}

export function heldTurnExecutor (options: HeldTurnExecutorOptions): AgentExecutor {
  const { agentId, store, newId } = options

  function replyOf (contextId: string, taskId: string, envelope: ConverseEnvelope, parts: Message['parts']): Message {
    return agentMessage({ messageId: newId(), contextId, taskId, parts, envelope })
  }

  return {
    async execute (requestContext, eventBus) {
      const { taskId, contextId, userMessage } = requestContext
      const turnId = newId()
      let replies: HumanReply[] = []
      // The caller's own conversation (as the takeover backend found it human-owned).
      const callerId = callerIdOf(requestContext.context)
      const key = conversationKey(callerId, contextId)
      await inConversationSpan(store, 'update', agentId, contextId, traceContextIn(requestContext.context.state), async () => await store.update(agentId, key, (current) => {
        // The conversation was found human-owned; one removed since (evicted) starts again, held.
        const state = current ?? { ...newConversationState(agentId, key), ownership: 'human_owned' }
        if (callerId !== undefined) state.caller = { id: callerId, contextId }
        // A person's replies written since the last turn (there was no task to put them in) go into this one.
        replies = state.inbox
        state.inbox = []
        state.turns.push({
          id: turnId, at: new Date().toISOString(), role: 'user', text: messageText(toWireParts(userMessage.parts)), taskId, messageId: userMessage.messageId
        })
        return state
      }))
      const timestamp = new Date().toISOString()
      eventBus.publish(AgentEvent.task(turnTask(requestContext, timestamp)))
      for (const reply of replies) {
        eventBus.publish(AgentEvent.statusUpdate({
          taskId, contextId, status: { state: TaskState.TASK_STATE_WORKING, message: humanMessage(contextId, taskId, reply, newId), timestamp }, metadata: undefined
        }))
      }
      const envelope: ConverseEnvelope = {
        author: 'agent',
        answerCoverage: { availability: 'not_recorded', originatingTurnId: turnId, originatingRequestId: userMessage.messageId },
        ownership: { state: 'human_owned', suppressed: true }
      }
      eventBus.publish(AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_WORKING,
          // No generated text: a data part says the turn waits for a person (A2A needs at least one part).
          message: replyOf(contextId, taskId, envelope, [dataPart({ ownership: 'human_owned', suppressed: true })]),
          timestamp
        },
        metadata: undefined
      }))
    },
    async cancelTask (taskId, eventBus) {
      // A held task canceled by its client: it ends CANCELED (the SDK waits for a terminal status on the bus).
      const envelope: ConverseEnvelope = {
        author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'human_owned', suppressed: false }
      }
      eventBus.publish(AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: replyOf('', taskId, envelope, [textPart('Task canceled.')]), timestamp: new Date().toISOString() },
        metadata: undefined
      }))
    }
  }
}
