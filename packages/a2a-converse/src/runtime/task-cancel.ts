/**
 * CancelTask on a conversation's task: the conversation's routine abandoned when that task carries it, and the task
 * always ended CANCELED (the SDK waits for a terminal status on the bus), with the routine's prompt or "Task canceled.".
 */
import { TaskState } from '@a2a-js/sdk'
import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server'
import type { ConverseEnvelope } from '../core/envelope.js'
import { clientContextId, type ConversationRoutine, type ConversationState, type ConversationStore } from '../stores/conversation-store.js'
import { agentMessage, textPart } from './agent-messages.js'
import { isTerminal, type RoutineEngine } from './routine-engine.js'

/** What a cancel changes and answers with. */
export interface CancelSources {
  agentId: string
  store: ConversationStore
  engine: RoutineEngine
  newId: () => string
}

export async function cancelConversationTask (sources: CancelSources, taskId: string, eventBus: ExecutionEventBus): Promise<void> {
  const { agentId, store, engine, newId } = sources
  const key = await store.findContextByTaskId(agentId, taskId)
  let routine: ConversationRoutine | undefined
  let contextId: string | undefined
  if (key !== undefined) {
    await store.update(agentId, key, (current) => {
      const state = current as ConversationState
      contextId = clientContextId(state)
      routine = undefined
      if (state.routine !== undefined && state.routine.taskId === taskId && !isTerminal(state.routine)) {
        routine = { ...engine.abandon(state.routine), taskId }
        state.routine = routine
      }
      return state
    })
  }
  const envelope: ConverseEnvelope = {
    author: 'agent',
    answerCoverage: { availability: 'not_recorded' },
    ownership: { state: 'ai_owned', suppressed: false }
  }
  if (routine !== undefined) envelope.routine = engine.routineState(routine)
  const text = routine !== undefined ? engine.prompt(routine) : 'Task canceled.'
  eventBus.publish(AgentEvent.statusUpdate({
    taskId,
    // The conversation may no longer know the task (evicted); the SDK keeps the task's own contextId.
    contextId: contextId ?? '',
    status: {
      state: TaskState.TASK_STATE_CANCELED,
      message: agentMessage({ messageId: newId(), contextId: contextId ?? '', taskId, parts: [textPart(text)], envelope }),
      timestamp: new Date().toISOString()
    },
    metadata: undefined
  }))
}
