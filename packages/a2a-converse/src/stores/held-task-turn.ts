/**
 * The task whose turn lock a request holds (issue 43: the SDK reads a task again before each of its saves). While a
 * request holds a task's turn lock, and that lock is one for every instance writing the task store (a lock with
 * `spansInstances`: PostgresTaskTurnLock), no other turn writes the task: the dispatcher takes the lock through
 * `acquireTaskTurn`, which marks the request's call context for as long as it holds it (`holdTaskTurn`), and a task
 * store whose table other instances write (postgres-task-store.ts) answers that request's reads of the task from what
 * the same request last saved or read of it. Writers that take no turn lock (CancelTask, a superseded task's close)
 * only end a task, and a save over a finished task is refused (-32004, docs/guarantees.md), so a turn never writes
 * back over them.
 *
 * Once the lock is released the mark is gone (a non-blocking SendMessage's SDK goes on saving after the reply), and
 * every read reads the row. A wait for another writer's save (`loadWhen`) forgets what is kept before each read.
 * One task per request, on its context: nothing outlives the request, nothing is shared between requests.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { acquireTurn } from './traced-turn-lock.js'
import type { TaskTurnLock, TaskTurnRelease, TurnLease } from './task-turn-lock.js'

/** The call context state naming the task whose turn lock the request holds (a HeldTaskTurn). */
export const HELD_TASK_TURN_STATE = 'a2a-converse.heldTaskTurn'

/** `Kept`: what the task store keeps (its own type: a server's PostgresTaskStore keeps a RememberedTasks). */
export interface HeldTaskTurn<Kept = unknown> {
  readonly taskId: string
  /** What the task store kept of the task for this request (the store's to make; undefined: nothing kept). */
  kept: Kept | undefined
  /** The lock's lease row, which the task store may delete with the turn's last save (TurnLease). */
  readonly lease?: TurnLease
}

/**
 * The task's turn lock for the request (acquireTurn: its wait traced). A lock every instance shares marks the request
 * as holding it until released — unmarked first: the SDK's saves after a release (a non-blocking SendMessage) read
 * the row again.
 */
export async function acquireTaskTurn (lock: TaskTurnLock, context: ServerCallContext, taskId: string, signal?: AbortSignal): Promise<TaskTurnRelease> {
  const release = await acquireTurn(lock, context, taskId, signal)
  if (lock.spansInstances !== true) return release
  const unhold = holdTaskTurn(context, taskId, release.lease)
  return async () => {
    unhold()
    await release()
  }
}

/** Marks the request as holding `taskId`'s turn lock; the function it answers removes the mark (idempotent). */
export function holdTaskTurn (context: ServerCallContext, taskId: string, lease?: TurnLease): () => void {
  const held: HeldTaskTurn = { taskId, kept: undefined, lease }
  context.state.set(HELD_TASK_TURN_STATE, held)
  return () => {
    if (context.state.get(HELD_TASK_TURN_STATE) === held) context.state.delete(HELD_TASK_TURN_STATE)
  }
}

/** The mark, when the request holds `taskId`'s turn lock now; undefined otherwise. One store keeps on a mark. */
export function heldTaskTurn<Kept = unknown> (context: ServerCallContext, taskId: string): HeldTaskTurn<Kept> | undefined {
  const held = context.state.get(HELD_TASK_TURN_STATE) as HeldTaskTurn<Kept> | undefined
  return held?.taskId === taskId ? held : undefined
}

/** Forgets what is kept of `taskId` for the request: its next load reads the row (another writer's save awaited). */
export function forgetHeldTask (context: ServerCallContext, taskId: string): void {
  const held = heldTaskTurn(context, taskId)
  if (held !== undefined) held.kept = undefined
}
