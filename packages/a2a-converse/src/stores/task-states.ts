/**
 * The rule every task store here keeps: a finished task stays finished. A save may replace a stored task unless the
 * stored one is in a terminal state (COMPLETED, CANCELED, FAILED, REJECTED) and the new one is in another state; a
 * save in the same terminal state (a late artifact, the SDK's last save of a turn) goes through. A refused save is
 * the SDK's UnsupportedOperationError worded as the SDK words a message to a finished task (-32004): a turn that
 * lost a race to the one that finished the task is told what it would have been told a moment later.
 */
import { TaskState, taskStateToJSON } from '@a2a-js/sdk'
import { UnsupportedOperationError } from '@a2a-js/sdk/errors'

export const TERMINAL_TASK_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED
])

/** Whether a task in state `next` may replace a stored task in state `stored`. */
export function mayReplace (stored: TaskState | undefined, next: TaskState | undefined): boolean {
  return !TERMINAL_TASK_STATES.has(stored) || next === stored
}

/** What a save that would move a finished task to another state rejects with. */
export function taskFinishedError (taskId: string, stored: TaskState): UnsupportedOperationError {
  return new UnsupportedOperationError(`Task ${taskId} is in a terminal state (${taskStateToJSON(stored)}) and cannot be modified.`)
}
