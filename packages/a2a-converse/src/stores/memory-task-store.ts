/**
 * A TaskStore in this process's memory with bounds: the SDK's InMemoryTaskStore keeps every task forever, so a
 * long run with fresh contexts grows the heap in a straight line. This one holds at most `maxTasks` tasks and
 * `maxTaskBytes` (each task measured as the length of its ProtoJSON, as stored), and forgets a finished task
 * (COMPLETED, CANCELED, FAILED, REJECTED) `finishedTaskTtlMs` after it finished; when full, the task that finished
 * earliest goes first. A forgotten task is unknown like any other: GetTask answers -32001.
 *
 * Open work is never evicted, so no caller can push another's open task out (issue 23): each caller (its caller
 * key, packages/a2a-converse/src/stores/caller-key.ts) holds at most `maxOpenTasksPerCaller` open tasks, and a new task past that is
 * refused (CallerCapError, nothing written). When the store is full and only open tasks are left, a new task is
 * refused too, whoever sends it; a task already stored is always saved (a turn is never cut off midway), so open
 * tasks that grow may hold the store over its byte bound until they finish.
 *
 * A finished task stays finished: a save that would move it to another state rejects with -32004's error
 * (packages/a2a-converse/src/stores/task-states.ts), as the PostgreSQL store's does.
 *
 * Each completed save wakes the task's save listeners (`onSaved`, packages/a2a-converse/src/stores/task-save-signals.ts): a reader waiting
 * for a task to change re-reads it then, instead of polling.
 *
 * Otherwise it behaves as InMemoryTaskStore (test/library/stores/memory-task-store.test.ts compares the two): tasks are
 * scoped by tenant and owner, copies go in and out, and `list` filters, orders and pages exactly as the SDK's
 * does (its page token is the same base64 `<status timestamp>|<id>`).
 *
 * This module holds and bounds the tasks; ListTasks is memory-task-list.ts's, the per-caller counts caller-open-tasks.ts's.
 */
import { Task, type ListTasksRequest, type ListTasksResponse, type TaskState } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { cloneData } from '../core/clone-data.js'
import { CallerCapError, callerKeyOf } from './caller-key.js'
import { CallerOpenTasks } from './caller-open-tasks.js'
import { listTasks } from './memory-task-list.js'
import { SaveListeners, type TaskSaveSignals } from './task-save-signals.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS, type TaskReservations, type TurnRefusal } from './task-reservations.js'
import { mayReplace, taskFinishedError, TERMINAL_TASK_STATES } from './task-states.js'
import { integerOption } from '../core/integer-option.js'

export interface MemoryTaskStoreOptions {
  /** Tasks held at most (finished and open). Default 10 000. */
  maxTasks?: number
  /** The sum of the tasks' sizes (the length of each one's ProtoJSON) held at most. Default 256 MiB (268 435 456). */
  maxTaskBytes?: number
  /** Open tasks one caller (caller key) holds at most. Default 1 000. */
  maxOpenTasksPerCaller?: number
  /** How long a finished task stays, in milliseconds. Default 3 600 000 (one hour). */
  finishedTaskTtlMs?: number
  /** Clock (milliseconds). Default Date.now. */
  now?: () => number
}

export const DEFAULT_MAX_TASKS = 10_000
export const DEFAULT_MAX_TASK_BYTES = 256 * 1024 * 1024
/**
 * A tenth of DEFAULT_MAX_TASKS: ten callers' open work fits before the store is full, and one caller's runaway
 * client (1 000 conversations waiting for input) stays far from what the others need.
 */
export const DEFAULT_MAX_OPEN_TASKS_PER_CALLER = 1_000
export const DEFAULT_FINISHED_TASK_TTL_MS = 3_600_000
const FINISHED = TERMINAL_TASK_STATES

interface Entry {
  scope: string
  taskId: string
  task: Task
  /** The caller key of the request that first saved it: whose open work it is. */
  caller: string
  /** The length of its ProtoJSON. */
  bytes: number
  open: boolean
}

/** A task's size as this store counts it: the length of its ProtoJSON (bytes as base64). */
export function taskSize (task: Task): number {
  return JSON.stringify(Task.toJSON(task)).length
}

/** The SDK's scope of a call: tenant and owner. JSON arrays, so no separator can make two scopes collide. */
function scopeOf (context: ServerCallContext): string {
  return JSON.stringify([context.tenant ?? '', resolveUserScope(context)])
}

export class BoundedMemoryTaskStore implements TaskStore, TaskSaveSignals, TaskReservations {
  readonly maxTasks: number
  readonly maxTaskBytes: number
  readonly maxOpenTasksPerCaller: number
  readonly finishedTaskTtlMs: number
  readonly #now: () => number
  /** scope → taskId → entry. */
  readonly #buckets = new Map<string, Map<string, Entry>>()
  /** Every entry, least recently saved first. */
  readonly #bySave = new Set<Entry>()
  /** Finished entries → when they were last saved, the earliest first. */
  readonly #finished = new Map<Entry, number>()
  readonly #saved = new SaveListeners()
  /** The sum of the entries' `bytes`. */
  #bytes = 0
  /** Per caller: its open tasks held, its reserved new tasks (scope and task id, JSON). */
  readonly #callers: CallerOpenTasks
  readonly #refused = new RefusedTasks()

  constructor (options: MemoryTaskStoreOptions = {}) {
    this.maxTasks = integerOption('maxTasks', options.maxTasks, DEFAULT_MAX_TASKS)
    this.maxTaskBytes = integerOption('maxTaskBytes', options.maxTaskBytes, DEFAULT_MAX_TASK_BYTES)
    this.maxOpenTasksPerCaller = integerOption('maxOpenTasksPerCaller', options.maxOpenTasksPerCaller, DEFAULT_MAX_OPEN_TASKS_PER_CALLER)
    this.finishedTaskTtlMs = integerOption('finishedTaskTtlMs', options.finishedTaskTtlMs, DEFAULT_FINISHED_TASK_TTL_MS)
    this.#now = options.now ?? Date.now
    this.#callers = new CallerOpenTasks(this.#now)
  }

  /** Tasks held now (for tests and metrics). */
  get size (): number {
    return this.#bySave.size
  }

  /** The sum of the tasks' sizes held now (taskSize). */
  get bytes (): number {
    return this.#bytes
  }

  /** Open tasks the caller (caller key) holds now. */
  openTasksOf (caller: string): number {
    return this.#callers.open(caller)
  }

  /** Tasks someone waits to see saved (for tests: 0 once every wait ended). */
  get saveListeners (): number {
    return this.#saved.size
  }

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#saved.onSaved(taskId, listener)
  }

  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    this.#expire()
    const entry = this.#buckets.get(scopeOf(context))?.get(taskId)
    return entry === undefined ? undefined : cloneData(entry.task)
  }

  async reserve (taskId: string, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context)
    if (this.#buckets.get(scope)?.has(taskId) === true) return
    const caller = callerKeyOf(context)
    const key = JSON.stringify([scope, taskId])
    const live = this.#callers.take(caller, key)
    if (!live && this.#callers.held(caller) >= this.maxOpenTasksPerCaller) throw this.#refused.add(taskId, this.#capError())
    this.#callers.reserve(caller, key, this.#now() + TASK_RESERVATION_TTL_MS)
    this.#refused.take(taskId)
  }

  refuse (taskId: string, error: TurnRefusal): void {
    this.#refused.add(taskId, error)
  }

  async save (task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context)
    const previous = this.#buckets.get(scope)?.get(task.id)
    // The SDK's FAILED task for a turn whose reservation was refused: refused alike (nothing stored).
    const refused = previous === undefined ? this.#refused.take(task.id) : undefined
    if (refused !== undefined) throw refused
    const stored = previous?.task.status?.state
    // A finished task stays finished (packages/a2a-converse/src/stores/task-states.ts), as on PostgreSQL.
    if (!mayReplace(stored, task.status?.state)) throw taskFinishedError(task.id, stored as TaskState)
    const open = !FINISHED.has(task.status?.state)
    const bytes = taskSize(task)
    const caller = previous?.caller ?? callerKeyOf(context)
    if (previous === undefined) this.#admit(caller, open, bytes, this.#callers.take(caller, JSON.stringify([scope, task.id])))
    else this.#forget(previous)
    const entry: Entry = { scope, taskId: task.id, task: cloneData(task), caller, bytes, open }
    // Looked up after #admit, which may have emptied (and dropped) the scope's bucket.
    let bucket = this.#buckets.get(scope)
    if (bucket === undefined) {
      bucket = new Map()
      this.#buckets.set(scope, bucket)
    }
    bucket.set(task.id, entry)
    this.#bySave.add(entry)
    this.#bytes += bytes
    if (open) this.#callers.opened(caller)
    // A finished task's time is its last save (a late artifact counts): the map stays ordered by time.
    else this.#finished.set(entry, this.#now())
    this.#expire()
    this.#evict(entry)
    this.#saved.saved(task.id)
  }

  /**
   * Room for a new task of `caller`, or CallerCapError (nothing written): the caller is at its open-task cap, or the
   * store stays full after every finished task it may evict went (only open work is left).
   */
  #capError (): CallerCapError {
    return new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', this.maxOpenTasksPerCaller,
      `this caller has ${this.maxOpenTasksPerCaller} open tasks (MAX_OPEN_TASKS_PER_CALLER): finish or cancel one before starting another`)
  }

  /** `reserved`: the task's slot was reserved (counted then), so the caller's cap is not asked again. */
  #admit (caller: string, open: boolean, bytes: number, reserved: boolean): void {
    if (open && !reserved && this.#callers.held(caller) >= this.maxOpenTasksPerCaller) throw this.#capError()
    this.#expire()
    const full = (): boolean => this.#bySave.size + 1 > this.maxTasks || this.#bytes + bytes > this.maxTaskBytes
    for (const entry of this.#finished.keys()) {
      if (!full()) return
      this.#remove(entry)
    }
    if (!full()) return
    const [cap, limit] = this.#bySave.size + 1 > this.maxTasks ? ['MEMORY_MAX_TASKS', this.maxTasks] : ['MEMORY_MAX_TASK_BYTES', this.maxTaskBytes]
    throw new CallerCapError(cap as string, limit as number,
      `the agent holds as many open tasks as it may keep (${cap as string}); try again when some have finished`)
  }

  async list (params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.#expire()
    return listTasks([...(this.#buckets.get(scopeOf(context))?.values() ?? [])].map((entry) => entry.task), params)
  }

  /** Finished tasks past their time, the earliest finished first. */
  #expire (): void {
    const limit = this.#now() - this.finishedTaskTtlMs
    for (const [entry, finishedAt] of this.#finished) {
      if (finishedAt > limit) return
      this.#remove(entry)
    }
  }

  /** Over a bound (an open task grew): the earliest finished first, never `keep`, never open work. */
  #evict (keep: Entry): void {
    for (const entry of this.#finished.keys()) {
      if (this.#bySave.size <= this.maxTasks && this.#bytes <= this.maxTaskBytes) return
      if (entry !== keep) this.#remove(entry)
    }
  }

  /** Takes an entry out of the order, the sums and the counts (its bucket keeps it until replaced or removed). */
  #forget (entry: Entry): void {
    this.#bySave.delete(entry)
    this.#finished.delete(entry)
    this.#bytes -= entry.bytes
    if (entry.open) this.#callers.closed(entry.caller)
  }

  #remove (entry: Entry): void {
    this.#forget(entry)
    const bucket = this.#buckets.get(entry.scope) as Map<string, Entry>
    bucket.delete(entry.taskId)
    if (bucket.size === 0) this.#buckets.delete(entry.scope)
  }
}
