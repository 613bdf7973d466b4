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
 */
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk'
import { RequestMalformedError } from '@a2a-js/sdk/errors'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { cloneData } from '../core/clone-data.js'
import { InvalidOptionError } from '../core/errors.js'
import { CallerCapError, callerKeyOf } from './caller-key.js'
import { SaveListeners, type TaskSaveSignals } from './task-save-signals.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS, type TaskReservations, type TurnRefusal } from './task-reservations.js'
import { mayReplace, taskFinishedError, TERMINAL_TASK_STATES } from './task-states.js'

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
/** ListTasks' page size when the request gives none (the SDK's). */
const DEFAULT_PAGE_SIZE = 50

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

function positiveInteger (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer')
  return value
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
  /** Caller key → its open tasks held. */
  readonly #openByCaller = new Map<string, number>()
  /** Caller key → its reserved new tasks (scope and task id, JSON) → when each reservation expires. */
  readonly #reserved = new Map<string, Map<string, number>>()
  readonly #refused = new RefusedTasks()

  constructor (options: MemoryTaskStoreOptions = {}) {
    this.maxTasks = positiveInteger('maxTasks', options.maxTasks, DEFAULT_MAX_TASKS)
    this.maxTaskBytes = positiveInteger('maxTaskBytes', options.maxTaskBytes, DEFAULT_MAX_TASK_BYTES)
    this.maxOpenTasksPerCaller = positiveInteger('maxOpenTasksPerCaller', options.maxOpenTasksPerCaller, DEFAULT_MAX_OPEN_TASKS_PER_CALLER)
    this.finishedTaskTtlMs = positiveInteger('finishedTaskTtlMs', options.finishedTaskTtlMs, DEFAULT_FINISHED_TASK_TTL_MS)
    this.#now = options.now ?? Date.now
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
    return this.#openByCaller.get(caller) ?? 0
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

  /** Open tasks plus live reservations of the caller (what its cap counts). */
  #heldBy (caller: string): number {
    const reserved = this.#reserved.get(caller)
    if (reserved === undefined) return this.openTasksOf(caller)
    const now = this.#now()
    for (const [key, until] of reserved) if (until <= now) reserved.delete(key)
    if (reserved.size === 0) this.#reserved.delete(caller)
    return this.openTasksOf(caller) + reserved.size
  }

  /** Takes the task's reservation; true when there was a live one. */
  #takeReservation (caller: string, key: string): boolean {
    const reserved = this.#reserved.get(caller)
    const until = reserved?.get(key)
    if (reserved === undefined || until === undefined) return false
    reserved.delete(key)
    if (reserved.size === 0) this.#reserved.delete(caller)
    return until > this.#now()
  }

  async reserve (taskId: string, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context)
    if (this.#buckets.get(scope)?.has(taskId) === true) return
    const caller = callerKeyOf(context)
    const key = JSON.stringify([scope, taskId])
    const live = this.#takeReservation(caller, key)
    if (!live && this.#heldBy(caller) >= this.maxOpenTasksPerCaller) throw this.#refused.add(taskId, this.#capError())
    let reserved = this.#reserved.get(caller)
    if (reserved === undefined) {
      reserved = new Map()
      this.#reserved.set(caller, reserved)
    }
    reserved.set(key, this.#now() + TASK_RESERVATION_TTL_MS)
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
    if (previous === undefined) this.#admit(caller, open, bytes, this.#takeReservation(caller, JSON.stringify([scope, task.id])))
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
    if (open) this.#openByCaller.set(caller, this.openTasksOf(caller) + 1)
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
    if (open && !reserved && this.#heldBy(caller) >= this.maxOpenTasksPerCaller) throw this.#capError()
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
    const { contextId, status, pageSize = DEFAULT_PAGE_SIZE, pageToken, statusTimestampAfter, includeArtifacts = false } = params
    let tasks = [...(this.#buckets.get(scopeOf(context))?.values() ?? [])].map((entry) => entry.task)
    if (contextId !== '' && contextId !== undefined) tasks = tasks.filter((task) => task.contextId === contextId)
    if (status !== undefined && status !== TaskState.TASK_STATE_UNSPECIFIED) tasks = tasks.filter((task) => task.status?.state === status)
    if (statusTimestampAfter !== undefined && statusTimestampAfter !== '') {
      const after = new Date(statusTimestampAfter).getTime()
      tasks = tasks.filter((task) => task.status?.timestamp !== undefined && task.status.timestamp !== '' && new Date(task.status.timestamp).getTime() > after)
    }
    const stamp = (task: Task): string => task.status?.timestamp ?? ''
    tasks.sort((a, b) => stamp(a) !== stamp(b) ? stamp(b).localeCompare(stamp(a)) : b.id.localeCompare(a.id))
    const totalSize = tasks.length
    if (pageToken !== undefined && pageToken !== '') {
      const cursor = decodePageToken(pageToken)
      const at = tasks.findIndex((task) => stamp(task) === cursor.timestamp && task.id === cursor.id)
      tasks = at === -1 ? [] : tasks.slice(at + 1)
    }
    const page = tasks.slice(0, pageSize)
    const last = page[page.length - 1]
    return {
      tasks: page.map((task) => ({ ...cloneData(task), ...(includeArtifacts ? {} : { artifacts: [] }) })),
      nextPageToken: page.length > 0 && tasks.length > page.length ? Buffer.from(`${stamp(last)}|${last.id}`).toString('base64') : '',
      pageSize,
      totalSize
    }
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
    if (entry.open) {
      const left = this.openTasksOf(entry.caller) - 1
      if (left === 0) this.#openByCaller.delete(entry.caller)
      else this.#openByCaller.set(entry.caller, left)
    }
  }

  #remove (entry: Entry): void {
    this.#forget(entry)
    const bucket = this.#buckets.get(entry.scope) as Map<string, Entry>
    bucket.delete(entry.taskId)
    if (bucket.size === 0) this.#buckets.delete(entry.scope)
  }
}

/** The SDK's cursor: base64 of `<status timestamp>|<id>`; anything else is RequestMalformedError (-32602). */
function decodePageToken (pageToken: string): { timestamp: string, id: string } {
  const [timestamp, ...idParts] = Buffer.from(pageToken, 'base64').toString('utf-8').split('|')
  if (idParts.length === 0) throw new RequestMalformedError('Invalid page token format.')
  return { timestamp, id: idParts.join('|') }
}
