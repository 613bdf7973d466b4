/**
 * A decided turn as the events the SDK persists and relays (packages/a2a-converse/src/runtime/turn-plan.ts decides):
 * a Message reply is one event; a task reply opens with the task, then a person's held replies, the artifact and
 * the status that carries the reply.
 */
import { TaskState, type Artifact, type Message, type Task } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutionEvent, type RequestContext } from '@a2a-js/sdk/server'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { agentMessage, humanMessage } from './agent-messages.js'
import type { TaskPlan } from './turn-plan.js'

type TurnRequest = Pick<RequestContext, 'taskId' | 'contextId' | 'task' | 'userMessage'>

/** The events of a task reply, stamped `timestamp`. */
export function taskTurnEvents (plan: TaskPlan, request: TurnRequest, newId: () => string, timestamp: string): AgentExecutionEvent[] {
  const { taskId, contextId } = request
  const events: AgentExecutionEvent[] = [AgentEvent.task(turnTask(request, timestamp))]
  for (const reply of plan.replies ?? []) {
    events.push(AgentEvent.statusUpdate({
      taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: humanMessage(contextId, taskId, reply, newId), timestamp },
      metadata: undefined
    }))
  }
  if (plan.artifact !== undefined) {
    const artifact: Artifact = {
      artifactId: newId(),
      name: plan.artifact.name,
      description: '',
      parts: plan.artifact.parts,
      metadata: { [CONVERSE_EXTENSION_URI]: plan.envelope },
      extensions: [CONVERSE_EXTENSION_URI]
    }
    events.push(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }))
  }
  const message: Message = agentMessage({ messageId: newId(), contextId, taskId, parts: plan.parts, envelope: plan.envelope })
  events.push(AgentEvent.statusUpdate({ taskId, contextId, status: { state: plan.state, message, timestamp }, metadata: undefined }))
  return events
}

/**
 * The task event a turn opens with. An existing task was loaded when the request came in; parallel requests may
 * have added to it since. Its event carries no history or artifacts, so the SDK merges what is persisted instead of
 * writing an old copy. A new task starts SUBMITTED with the user's message.
 */
export function turnTask (request: TurnRequest, timestamp: string): Task {
  const { taskId, contextId, task: existing } = request
  return existing !== undefined
    ? { ...existing, history: [], artifacts: [] }
    : {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp },
        artifacts: [],
        history: [request.userMessage],
        metadata: undefined
      }
}
