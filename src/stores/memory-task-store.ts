/**
 * A TaskStore in this process's memory with a bound: the SDK's InMemoryTaskStore keeps every task forever, so a
 * long run with fresh contexts grows the heap in a straight line. This one holds at most `maxTasks` tasks and
 * forgets a finished task (COMPLETED, CANCELED, FAILED, REJECTED) `finishedTaskTtlMs` after it finished; when full,
 * the task that finished earliest goes first, then (no finished task left) the open task saved least recently. A
 * forgotten task is unknown like any other: GetTask answers -32001.
 *
 * A finished task stays finished: a save that would move it to another state rejects with -32004's error
 * (src/stores/task-states.ts), as the PostgreSQL store's does.
 *
 * Each completed save wakes the task's save listeners (`onSaved`, src/stores/task-save-signals.ts): a reader waiting
 * for a task to change re-reads it then, instead of polling.
 *
 * Otherwise it behaves as InMemoryTaskStore (test/stores/memory-task-store.test.ts compares the two): tasks are
 * scoped by tenant and owner, copies go in and out, and `list` filters, orders and pages exactly as the SDK's
 * does (its page token is the same base64 `<status timestamp>|<id>`).
 */
import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk'
import { RequestMalformedError } from '@a2a-js/sdk/errors'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { cloneData } from '../core/clone-data.js'
import { InvalidOptionError } from '../core/errors.js'
import { SaveListeners, type TaskSaveSignals } from './task-save-signals.js'
import { mayReplace, taskFinishedError, TERMINAL_TASK_STATES } from './task-states.js'

export interface MemoryTaskStoreOptions {
  /** Tasks held at most (finished and open). Default 10 000. */
  maxTasks?: number
  /** How long a finished task stays, in milliseconds. Default 3 600 000 (one hour). */
  finishedTaskTtlMs?: number
  /** Clock (milliseconds). Default Date.now. */
  now?: () => number
}

export const DEFAULT_MAX_TASKS = 10_000
export const DEFAULT_FINISHED_TASK_TTL_MS = 3_600_000
/** ListTasks' page size when the request gives none (the SDK's). */
const DEFAULT_PAGE_SIZE = 50

const FINISHED = TERMINAL_TASK_STATES

interface Entry {
  scope: string
  taskId: string
  task: Task
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

export class BoundedMemoryTaskStore implements TaskStore, TaskSaveSignals {
  readonly maxTasks: number
  readonly finishedTaskTtlMs: number
  readonly #now: () => number
  /** scope → taskId → entry. */
  readonly #buckets = new Map<string, Map<string, Entry>>()
  /** Every entry, least recently saved first. */
  readonly #bySave = new Set<Entry>()
  /** Finished entries → when they were last saved, the earliest first. */
  readonly #finished = new Map<Entry, number>()
  readonly #saved = new SaveListeners()

  constructor (options: MemoryTaskStoreOptions = {}) {
    this.maxTasks = positiveInteger('maxTasks', options.maxTasks, DEFAULT_MAX_TASKS)
    this.finishedTaskTtlMs = positiveInteger('finishedTaskTtlMs', options.finishedTaskTtlMs, DEFAULT_FINISHED_TASK_TTL_MS)
    this.#now = options.now ?? Date.now
  }

  /** Tasks held now (for tests and metrics). */
  get size (): number {
    return this.#bySave.size
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

  async save (task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context)
    let bucket = this.#buckets.get(scope)
    if (bucket === undefined) {
      bucket = new Map()
      this.#buckets.set(scope, bucket)
    }
    const previous = bucket.get(task.id)
    const stored = previous?.task.status?.state
    // A finished task stays finished (src/stores/task-states.ts), as on PostgreSQL.
    if (!mayReplace(stored, task.status?.state)) throw taskFinishedError(task.id, stored as TaskState)
    if (previous !== undefined) this.#bySave.delete(previous)
    const entry: Entry = { scope, taskId: task.id, task: cloneData(task) }
    bucket.set(task.id, entry)
    this.#bySave.add(entry)
    if (previous !== undefined) this.#finished.delete(previous)
    // A finished task's time is its last save (a late artifact counts): the map stays ordered by time.
    if (FINISHED.has(task.status?.state)) this.#finished.set(entry, this.#now())
    this.#expire()
    this.#evict(entry)
    this.#saved.saved(task.id)
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

  /** Over the cap: the earliest finished first, then the least recently saved open task; never `keep`. */
  #evict (keep: Entry): void {
    for (const entry of this.#finished.keys()) {
      if (this.#bySave.size <= this.maxTasks) return
      if (entry !== keep) this.#remove(entry)
    }
    // `keep` was saved last: every entry before it goes before the cap (at least 1) could reach it.
    const leastRecent = this.#bySave.values()
    while (this.#bySave.size > this.maxTasks) this.#remove(leastRecent.next().value as Entry)
  }

  #remove (entry: Entry): void {
    this.#bySave.delete(entry)
    this.#finished.delete(entry)
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
