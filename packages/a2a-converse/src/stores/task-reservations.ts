/**
 * A new task's slot under MAX_OPEN_TASKS_PER_CALLER, reserved before its turn writes anything (docs/guarantees.md).
 * The task store counts open tasks at a task's first save, but the SDK saves a task only after the executor ran the
 * turn and recorded it in the conversation: a refusal there comes after the fact. So the conversation executor
 * reserves the slot once it has decided that the turn opens a task, before the conversation is written; the task's
 * first save takes the reservation (no second count). A reservation the turn never uses (its conversation write
 * failed) holds the slot until it expires.
 *
 * A refused reservation makes the executor reject; the SDK then saves a FAILED task of its own for it. That save is
 * refused with the same error (RefusedTasks), so the request answers -32000 and no task is stored.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { CallerCapError } from './caller-key.js'
import type { MessageIdReusedError } from './message-replays.js'

/** A turn refused before it stored anything: a cap, or a messageId used for other content. */
export type TurnRefusal = CallerCapError | MessageIdReusedError

/** How long a reservation holds its slot without the task's first save: longer than any turn takes to store it. */
export const TASK_RESERVATION_TTL_MS = 120_000

export interface TaskReservations {
  /**
   * Reserves the slot of the new open task `taskId` for the context's caller, or rejects with CallerCapError (the
   * caller holds its cap of open tasks and reservations; nothing is kept). Race-free: of concurrent reservations of
   * one caller, at most the cap succeed. A task already stored or reserved succeeds again (idempotent).
   */
  reserve (taskId: string, context: ServerCallContext): Promise<void>
  /**
   * Optional: `reserve`, or — when the request defers a new task's saves (deferred-task-saves.ts) — the reservation
   * left to their statement, ahead of the conversation's write that joins them (a refusal then answered there, with
   * nothing written). For a caller whose conversation store `joinsTaskSaves`: it makes the reservation first before a
   * write it does not join (alone, or ahead of an insert in its statement).
   */
  reserveWithSaves? (taskId: string, context: ServerCallContext): Promise<void>
  /**
   * The turn of `taskId` was refused with `error` before it stored anything (its new conversation past
   * MAX_CONVERSATIONS_PER_CALLER, refused by the conversation store's write; a retry with other content found under
   * the conversation's lock): the SDK's FAILED save of that task is refused alike, so the request answers as a
   * refused reservation does (-32000, -32602) and no task is stored.
   */
  refuse (taskId: string, error: TurnRefusal): void
}

export function reservesTasks<T extends object> (store: T): store is T & TaskReservations {
  return typeof (store as Partial<TaskReservations>).reserve === 'function'
}

/** Refused reservations waiting for the SDK's FAILED save of the same task; bounded (the oldest forgotten). */
export class RefusedTasks {
  readonly #refused = new Map<string, TurnRefusal>()
  readonly #max: number

  constructor (max = 1000) {
    this.#max = max
  }

  add<E extends TurnRefusal> (taskId: string, error: E): E {
    this.#refused.delete(taskId)
    this.#refused.set(taskId, error)
    if (this.#refused.size > this.#max) this.#refused.delete(this.#refused.keys().next().value as string)
    return error
  }

  /** The refusal recorded for the task (forgotten now), or undefined. */
  take (taskId: string): TurnRefusal | undefined {
    const error = this.#refused.get(taskId)
    this.#refused.delete(taskId)
    return error
  }
}
