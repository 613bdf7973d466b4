/**
 * CancelTask for the dispatcher (dispatch.ts). With no execution of the task on this instance (its executor returned
 * and left it waiting for input or for a person, or it ran elsewhere), the SDK would write a generic CANCELED status
 * and tell nobody: instead the agent's own cancelTask runs on a bus of its own and what it publishes is written
 * through the task writer (stored, published: every open stream of the task ends with it). Everything else (not
 * found, already over, a running execution) is the SDK's; a cancel the SDK writes is published too. A cancel whose write
 * the store refuses because the task finished meanwhile is answered -32002, as one that found it finished.
 */
import { StreamResponse, type CancelTaskRequest, type Task } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBus, type AgentExecutionEvent, type AgentExecutor, type DefaultRequestHandler, type ServerCallContext,
  type TaskStore
} from '@a2a-js/sdk/server'
import { TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors'
import type { TaskWriter } from '../../events/task-writer.js'
import type { TaskEventHub } from '../../events/task-event-hub.js'
import { TERMINAL_TASK_STATES } from '../../stores/task-states.js'
import type { ExecutionBuses } from './execution-buses.js'

export interface TaskCancelling {
  buses: ExecutionBuses
  taskStore: TaskStore
  executor: AgentExecutor
  writer: TaskWriter
  handler: DefaultRequestHandler
  events: Pick<TaskEventHub, 'publish'> | undefined
}

export async function cancelTask (cancelling: TaskCancelling, request: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
  try {
    return await cancelOnce(cancelling, request, context)
  } catch (error) {
    // The cancel's write was refused: the task finished after the cancel read it (a turn on another instance, or
    // this instance's blocking turn writing its saves, completed it). It cannot be canceled: -32002, as for a cancel
    // that reads it finished.
    if (error instanceof UnsupportedOperationError) throw new TaskNotCancelableError(`Task not cancelable: ${request.id}`)
    throw error
  }
}

async function cancelOnce (cancelling: TaskCancelling, request: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
  const taskId = request.id
  const written = taskId !== '' && cancelling.buses.getByTaskId(taskId, context) === undefined &&
    await cancelByAgent(cancelling, taskId, context)
  const canceled = await cancelling.handler.cancelTask(request, context)
  if (!written && cancelling.events !== undefined) {
    await cancelling.events.publish(taskId, StreamResponse.toJSON({
      payload: { $case: 'statusUpdate', value: { taskId, contextId: canceled.contextId, status: canceled.status, metadata: undefined } }
    }) as Record<string, unknown>)
  }
  return canceled
}

/** The agent's cancelTask for an open task with no execution here, its events written; whether it wrote any. */
async function cancelByAgent (cancelling: TaskCancelling, taskId: string, context: ServerCallContext): Promise<boolean> {
  const task = await cancelling.taskStore.load(taskId, context)
  if (task === undefined || TERMINAL_TASK_STATES.has(task.status?.state)) return false
  const bus = new DefaultExecutionEventBus()
  const published: AgentExecutionEvent[] = []
  bus.on('event', (event) => { published.push(event) })
  await cancelling.executor.cancelTask(taskId, bus)
  await cancelling.writer.writeEvents(published, context)
  return published.length > 0
}
