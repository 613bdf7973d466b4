/**
 * Closing the task a conversation left open when a newer turn answers in a new task (a message with the contextId
 * only): CANCELED, pointing to the new task. A conversation has at most one open task.
 */
import { TaskState, type Task } from '@a2a-js/sdk'
import type { RequestContext, ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import type { ConverseEnvelope } from '../core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import { createTaskWriter } from '../events/task-writer.js'
import { loadWhen } from '../stores/task-save-signals.js'
import { agentMessage, textPart } from './agent-messages.js'
import { envelopeBase } from './turn-plan.js'

/**
 * How long a turn waits at most for a parallel turn's events to be persisted before closing that turn's task. The
 * wait ends at the save that settles the task, so this bound only counts when that save never comes (the other
 * turn's instance stopped mid-turn). It is not 1 s because parallel turns on one conversation form a chain: each
 * answers only after closing the task of the turn before it, so the last of N waits for N - 1 steps (a save, its
 * signal, a close): about 100 ms each across two instances on a loaded 2-core machine, so 1 s cut chains of ~10.
 */
export const SETTLE_TIMEOUT_MS = 5000

/**
 * How long the close of a superseded task keeps waiting, after the turn answered, for a task that was not yet stored
 * past its first save at SETTLE_TIMEOUT_MS.
 */
export const LATE_SETTLE_MS = 60_000

const FINAL_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED
])

/** Whether the task holds the reply of the turn `turnId` (its envelope's originatingTurnId), or is over. */
function settled (task: Task | undefined, turnId: string): boolean {
  if (task === undefined) return false
  if (FINAL_STATES.has(task.status?.state)) return true
  return task.history.some((message) => {
    const envelope = message.metadata?.[CONVERSE_EXTENSION_URI] as ConverseEnvelope | undefined
    return envelope?.answerCoverage?.originatingTurnId === turnId
  })
}

/**
 * The task holding a turn's reply, once a save of it holds that reply (the turn's request may still be storing it,
 * here or on another instance: re-read on the store's save signals, never polled), or undefined when the store no
 * longer keeps it or `bound` ms passed.
 */
export async function taskOfTurn (taskStore: TaskStore, taskId: string, turnId: string, context: ServerCallContext, bound = SETTLE_TIMEOUT_MS): Promise<Task | undefined> {
  return await loadWhen(taskStore, taskId, context, (task) => settled(task, turnId), bound)
}

export interface SupersededTaskCloserOptions {
  taskStore: TaskStore
  events?: Pick<TaskEventHub, 'publish'>
  newId: () => string
}

/** The task a turn supersedes: its id and the turn whose reply it holds. */
export interface SupersededTask { taskId: string, turnId: string }

/**
 * Closes `old` for the turn of `request`. The SDK persists a turn's events after the executor published them, so a
 * parallel turn (on this instance or another) may still be writing that task: wait until a save of it holds that
 * turn's reply (at most SETTLE_TIMEOUT_MS), then write through a task writer (stored — a task already over is left as
 * it is — and published to its open streams).
 */
export function supersededTaskCloser (options: SupersededTaskCloserOptions): (old: SupersededTask, request: RequestContext) => Promise<void> {
  const { taskStore, newId } = options
  const writer = createTaskWriter(taskStore, options.events)

  /** Writes the close of `task` (CANCELED, pointing to this turn's task) when it is still open. */
  async function close (task: Task | undefined, taskId: string, request: RequestContext): Promise<void> {
    const state = task?.status?.state
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED && state !== TaskState.TASK_STATE_WORKING) return
    const envelope = envelopeBase(newId(), request.userMessage.messageId)
    const message = agentMessage({ messageId: newId(), contextId: request.contextId, taskId, parts: [textPart(`Continued in task ${request.taskId}.`)], envelope })
    message.referenceTaskIds = [request.taskId]
    const update = {
      taskId,
      contextId: request.contextId,
      status: { state: TaskState.TASK_STATE_CANCELED, message, timestamp: new Date().toISOString() },
      metadata: undefined
    }
    await writer.write(update, request.context)
  }

  return async (old, request) => {
    const task = await taskOfTurn(taskStore, old.taskId, old.turnId, request.context)
    if (task === undefined || task.status?.state === TaskState.TASK_STATE_SUBMITTED) {
      // The other turn has not stored its answer within the bound (a long chain of parallel turns on a loaded
      // machine): this turn answers now, and the old task is closed once that save lands (LATE_SETTLE_MS at most;
      // a turn whose instance stopped never saves, and its task stays as it is). Closing it now instead would make
      // that turn's own save fail (a finished task stays finished), and its client be told an error.
      taskOfTurn(taskStore, old.taskId, old.turnId, request.context, LATE_SETTLE_MS)
        .then(async (late) => { await close(late, old.taskId, request) })
        // Nothing waits for this: a store failure leaves the old task open, as a turn that never saved does.
        .catch(() => {})
      return
    }
    await close(task, old.taskId, request)
  }
}
