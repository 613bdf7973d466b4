/**
 * One turn at a time per task. The SDK's request handler loads a task, checks it is not over and saves it with the
 * new message without a lock, and parallel turns on one task share its event bus: two answers to one waiting task
 * must not run at once, on one instance or on several. The dispatcher takes this lock around every SendMessage and
 * SendStreamingMessage that names an existing task; a turn that comes after the one that finished the task then
 * finds it over (-32004).
 *
 * Two implementations: MemoryTaskTurnLock (this process) and PostgresTaskTurnLock (a lease row shared by every
 * instance on the database, packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.ts). Both bound the wait.
 */
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server'
import { ConverseError, InvalidOptionError, ERROR_CODES } from '../core/errors.js'
import { KeyedLock } from './keyed-lock.js'
import type { TaskColumns } from './postgres/task-rows.js'

/** Whose task: the scope the task stores use (tenant and owner) and the task id. */
export interface TaskTurnKey {
  tenant: string
  owner: string
  taskId: string
}

/**
 * A held lock's lease row, which a statement on the lock's database may delete with its own writes (a turn's last
 * save: one round trip and one commit less): `where lock_key = key and holder = holder`, then `deleted()` when it
 * deleted the row, and the release deletes nothing more. A statement that deleted nothing (run on another database,
 * or the lease taken over) leaves the release to delete it as usual.
 */
export interface TurnLease {
  readonly key: string
  readonly holder: string
  deleted (): void
  /** The task's row as the take read it (a PostgresTaskTurnLock with `taskOwner`), for the request's task store. */
  readonly task?: TakenTaskRow
}

/** A task's row read with a lock's take, after it: what the SDK's first load of the turn would read. */
export interface TakenTaskRow {
  /** The row's key in the task table (tenant, owner, id: remembered-tasks.ts): a store answers from it only if its own. */
  readonly key: string
  /** Its columns as stored; null: no row. */
  readonly row: TaskColumns | null
}

/** Releases a held lock (idempotent; never rejects). `lease`: its row, when a statement may delete it. */
export type TaskTurnRelease = (() => Promise<void>) & { readonly lease?: TurnLease }

export interface TaskTurnLock {
  /**
   * True when the lock is one for every instance writing the task store (PostgresTaskTurnLock): while a request holds
   * it, no other turn anywhere writes the task, and the dispatcher marks the request so (held-task-turn.ts).
   */
  readonly spansInstances?: boolean
  /**
   * Resolves once the task's earlier turns are done, with the function that releases the lock. Rejects with
   * TaskBusyError when that takes longer than the lock's wait bound, and with the signal's reason when it aborts.
   */
  acquire (key: TaskTurnKey, signal?: AbortSignal): Promise<TaskTurnRelease>
}

/** The lock key of a turn on `taskId`: built here only, so every implementation locks the same scope. */
export function taskTurnKey (context: ServerCallContext, taskId: string): TaskTurnKey {
  return { tenant: context.tenant ?? '', owner: resolveUserScope(context), taskId }
}

/** One string per key (a JSON array: no separator can make two keys collide). */
export function taskTurnKeyString (key: TaskTurnKey, scope = ''): string {
  return JSON.stringify([scope, key.tenant, key.owner, key.taskId])
}

/** How long a turn waits for the task's earlier turns by default. */
export const DEFAULT_TURN_WAIT_TIMEOUT_MS = 30_000

/** A turn waited `waitTimeoutMs` for the task's earlier turns and gave up. Answered -32603, nothing was written. */
export class TaskBusyError extends ConverseError {
  readonly taskId: string
  constructor (taskId: string, waitTimeoutMs: number) {
    super(ERROR_CODES.TASK_BUSY, `task ${taskId} is busy with another turn (waited ${waitTimeoutMs} ms); try again later`)
    this.taskId = taskId
  }
}

export function turnWaitTimeout (name: string, value: number | undefined): number {
  if (value === undefined) return DEFAULT_TURN_WAIT_TIMEOUT_MS
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer (milliseconds)')
  return value
}

/** A wait's bound: `abandoned` rejects at the timeout or when the signal aborts; `done()` stops both. */
export interface WaitBound {
  abandoned: Promise<never>
  done (): void
}

export function waitBound (key: TaskTurnKey, timeoutMs: number, signal?: AbortSignal): WaitBound {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const abandoned = new Promise<never>((resolve, reject) => {
    timer = setTimeout(() => { reject(new TaskBusyError(key.taskId, timeoutMs)) }, timeoutMs)
    if (signal === undefined) return
    onAbort = () => { reject(signal.reason) }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  // Whoever races it sees the rejection; nobody racing it any more is not an unhandled rejection.
  abandoned.catch(() => {})
  return {
    abandoned,
    done () {
      clearTimeout(timer)
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
    }
  }
}

export interface MemoryTaskTurnLockOptions {
  /** How long a turn waits for the task's earlier turns. Default 30 000 ms. */
  waitTimeoutMs?: number
}

/** The lock of one process (memory, or one instance): a promise chain per task. */
export class MemoryTaskTurnLock implements TaskTurnLock {
  readonly waitTimeoutMs: number
  readonly #locks = new KeyedLock()

  constructor (options: MemoryTaskTurnLockOptions = {}) {
    this.waitTimeoutMs = turnWaitTimeout('waitTimeoutMs', options.waitTimeoutMs)
  }

  async acquire (key: TaskTurnKey, signal?: AbortSignal): Promise<TaskTurnRelease> {
    const bound = waitBound(key, this.waitTimeoutMs, signal)
    try {
      const release = await this.#locks.acquire(taskTurnKeyString(key), bound.abandoned)
      return async () => { release() }
    } finally {
      bound.done()
    }
  }
}
