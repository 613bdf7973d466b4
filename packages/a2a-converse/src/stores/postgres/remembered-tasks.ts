/**
 * The tasks the task stores of this process saved or read lately (postgres-task-store.ts, `soleWriter`), so that a
 * `load` answers without a query (issue 43: the SDK reads a task again before each of its saves). Only for a database
 * this process alone writes — the embedded database, whose folder lock keeps every other process out: then a task's
 * row changes only through a save made here, and each save updates or forgets what is kept. On a PostgreSQL server
 * other instances write, so nothing is kept there.
 *
 * A task is kept as the row holds it (the SDK's JSON columns, the text its save sent), so a load answers what a read
 * of the row would: a new Task each time (the SDK mutates the tasks it loads). A task known to have no row is kept
 * too (`null`): a new task's first load. Keyed as the table is (tenant, owner, id): a caller never gets another
 * caller's task. Bounded in count and in characters, least recently used first (a Map keeps insertion order); past a
 * bound, the least recently used tenth is forgotten at once (least-recently-used.ts).
 *
 * Saves and reads of a task may overlap (several requests on one task): a read keeps what it found only when no save
 * of that task started meanwhile, and a save keeps what it wrote only when no other save of it overlapped; otherwise
 * the task is forgotten, and the next load reads the row.
 */
import { integerOption } from '../../core/integer-option.js'
import type { TaskColumns } from './task-rows.js'
import type { TakenTaskRow } from '../task-turn-lock.js'
import { afterTrim, forgetOldest } from './least-recently-used.js'

/** Tasks kept at most: a gateway's active tasks (a routine turn's task is read right after its last save). */
export const REMEMBERED_TASKS = 1000

/**
 * The kept tasks' JSON together, in characters (about bytes): 8 Mi, so that however long their histories, the kept
 * tasks stay a small part of a gateway's memory (docs/state.md, "Memory"; half the conversation store's kept states:
 * a task's history repeats its turns).
 */
export const REMEMBERED_TASK_CHARS = 8 * 1024 * 1024

/** A task's key, the table's primary key: tenant, owner and id. */
export function taskKey (tenant: string, owner: string, id: string): string {
  return JSON.stringify([tenant, owner, id])
}

/** Where a task's reads and saves stand while any is under way. */
interface Pending {
  /** Reads and saves under way. */
  calls: number
  /** Saves started since the first of these calls. */
  saves: number
  /** Saves under way. */
  saving: number
}

function charsOf (key: string, row: TaskColumns | null): number {
  if (row === null) return key.length
  return key.length + row.contextId.length + (row.status?.length ?? 0) + (row.artifacts?.length ?? 0) +
    (row.history?.length ?? 0) + (row.metadata?.length ?? 0)
}

export class RememberedTasks {
  readonly #rows = new Map<string, TaskColumns | null>()
  readonly #maxTasks: number
  readonly #maxChars: number
  #chars = 0
  /** The tasks with a read or a save under way; none otherwise. */
  readonly #pending = new Map<string, Pending>()

  /** At most `maxTasks` tasks (default REMEMBERED_TASKS) and `maxChars` characters (default REMEMBERED_TASK_CHARS). */
  constructor (maxTasks?: number, maxChars?: number) {
    this.#maxTasks = integerOption('maxTasks', maxTasks, REMEMBERED_TASKS)
    this.#maxChars = integerOption('maxChars', maxChars, REMEMBERED_TASK_CHARS)
  }

  /** How many tasks are kept (with or without a row). */
  get size (): number {
    return this.#rows.size
  }

  /** The task's row as kept (marked most recently used), null when it has none, undefined when not kept. */
  get (key: string): TaskColumns | null | undefined {
    const row = this.#rows.get(key)
    if (row === undefined) return undefined
    this.#rows.delete(key)
    this.#rows.set(key, row)
    return row
  }

  /**
   * A read of the task's row starts: the function it answers is called once the read ends, whatever happens, with what
   * the read found (null: no row; undefined: nothing learned). Kept unless a save of the task ran meanwhile.
   */
  readStarts (key: string): (row: TaskColumns | null | undefined) => void {
    const pending = this.#enter(key)
    const { saves, saving } = pending
    return (row) => {
      if (row !== undefined && saving === 0 && pending.saves === saves) this.#keep(key, row)
      this.#leave(key, pending)
    }
  }

  /**
   * Saves `row` by `save`, which answers whether it was written: kept if so and no other save of the task overlapped
   * this one; forgotten otherwise (not written, a failure, a concurrent save: the row is read again).
   */
  async save (key: string, row: TaskColumns, save: () => Promise<boolean>): Promise<void> {
    this.forget(key)
    const pending = this.#enter(key)
    pending.saves++
    const saves = pending.saves
    const alone = pending.saving === 0
    pending.saving++
    let written = false
    try {
      written = await save()
    } finally {
      pending.saving--
      this.#leave(key, pending)
      if (written && alone && pending.saves === saves) this.#keep(key, row)
      else this.forget(key)
    }
  }

  forget (key: string): void {
    const row = this.#rows.get(key)
    if (row === undefined) return
    this.#chars -= charsOf(key, row)
    this.#rows.delete(key)
  }

  #keep (key: string, row: TaskColumns | null): void {
    this.forget(key)
    const chars = charsOf(key, row)
    // A task larger than the whole bound is not kept (it would push every other one out).
    if (chars > this.#maxChars) return
    this.#rows.set(key, row)
    this.#chars += chars
    if (this.#rows.size <= this.#maxTasks && this.#chars <= this.#maxChars) return
    const [keep, keepChars] = [afterTrim(this.#maxTasks), afterTrim(this.#maxChars)]
    // Never the task just kept (the last key): alone, it is within the bound (checked above).
    forgetOldest(this.#rows, () => (this.#rows.size <= keep && this.#chars <= keepChars) || this.#rows.size === 1, (oldest) => { this.forget(oldest) })
  }

  #enter (key: string): Pending {
    let pending = this.#pending.get(key)
    if (pending === undefined) {
      pending = { calls: 0, saves: 0, saving: 0 }
      this.#pending.set(key, pending)
    }
    pending.calls++
    return pending
  }

  #leave (key: string, pending: Pending): void {
    if (--pending.calls === 0) this.#pending.delete(key)
  }
}

/**
 * What a request holding a task's turn lock on every instance keeps of the task `key` (held-task-turn.ts): one task,
 * first the row its lock's take read once the lease was taken (PostgresTaskTurnLock `taskOwner`), when that is the
 * row of `key` — kept as a read of it would keep it.
 */
export function heldTurnTask (taken: TakenTaskRow | undefined, key: string): RememberedTasks {
  const kept = new RememberedTasks(1)
  if (taken?.key === key) kept.readStarts(key)(taken.row)
  return kept
}
