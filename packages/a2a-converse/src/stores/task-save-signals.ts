/**
 * Save signals: a task store that says when a save of a task completed, so that a reader waiting for the task to
 * reach some state (the conversation executor, before it closes a task a newer turn superseded) re-reads it on each
 * save instead of polling. BoundedMemoryTaskStore signals its saves in process; PostgresTaskStore, given the
 * PostgreSQL task event hub, also has the hub NOTIFY each save once committed, so that a save on one instance wakes
 * a reader on another.
 *
 * A TaskStore without signals (a user's own): the gateway wraps it with `withSaveSignals`, so the saves made through
 * this process are signalled (saves by other processes are not: a reader then waits for its bound). Given as it is
 * to `loadWhen`, the task is read once and, when not there yet, once more after the whole bound: right for turns
 * one after the other and for two parallel ones, but a chain of parallel turns each waiting for the one before can
 * read too early and leave a task open — give such a store to the executor and to its endpoint wrapped.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Task } from '@a2a-js/sdk'
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import { TaskListeners } from '../events/task-listeners.js'
import { decorateTaskStore } from './decorate-task-store.js'
import { forgetHeldTask } from './held-task-turn.js'

export interface TaskSaveSignals {
  /**
   * Calls `listener` after each completed save of a task with this id (whatever its tenant and owner: the listener
   * re-reads the task in its own scope). Returns the function that removes the listener.
   */
  onSaved (taskId: string, listener: () => void): () => void
}

/** Whether the store signals its saves. */
export function signalsSaves (store: TaskStore): store is TaskStore & TaskSaveSignals {
  return typeof (store as Partial<TaskSaveSignals>).onSaved === 'function'
}

/** The save listeners of one process: a store calls `saved` after each save it completed. */
export class SaveListeners implements TaskSaveSignals {
  readonly #listeners = new TaskListeners<string>()

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#listeners.add(taskId, listener)
  }

  /** Wakes the task's listeners (those added before the call). */
  saved (taskId: string): void {
    this.#listeners.deliver(taskId, taskId)
  }

  /** How many tasks have listeners (0 once every wait ended). */
  get size (): number {
    return this.#listeners.size
  }
}

/**
 * The store itself when it signals its saves; otherwise the store decorated to signal the saves made through it (in
 * this process).
 */
export function withSaveSignals (store: TaskStore): TaskStore & TaskSaveSignals {
  if (signalsSaves(store)) return store
  const listeners = new SaveListeners()
  const save: TaskStore['save'] = async (task, context) => {
    await store.save(task, context)
    listeners.saved(task.id)
  }
  const onSaved: TaskSaveSignals['onSaved'] = (taskId, listener) => listeners.onSaved(taskId, listener)
  return decorateTaskStore(store, { save, onSaved })
}

/**
 * The task once `until` holds for it, or as it is after `timeoutMs`. With save signals, the listener is added before
 * the first read (a save between the two is not missed) and the task is read again after each save, never on a
 * timer; at the bound it is read one last time (a signal that did not arrive: a LISTEN connection that was down).
 * The listener is removed when the wait ends, either way.
 */
export async function loadWhen (
  store: TaskStore, taskId: string, context: ServerCallContext, until: (task: Task | undefined) => boolean, timeoutMs: number
): Promise<Task | undefined> {
  // Waiting for another writer's save: what the request kept of a task whose turn lock it holds would hide it.
  const load = async (): Promise<Task | undefined> => {
    forgetHeldTask(context, taskId)
    return await store.load(taskId, context)
  }
  if (!signalsSaves(store)) {
    const task = await load()
    if (until(task)) return task
    await sleep(timeoutMs)
    return await load()
  }
  let wake = signal()
  const stop = store.onSaved(taskId, () => { wake.resolve(true) })
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<false>((resolve) => { timer = setTimeout(resolve, timeoutMs, false) })
  try {
    let task = await load()
    while (!until(task)) {
      const saved = await Promise.race([wake.promise, bound])
      // A save during the next read resolves the new signal: the loop reads again after it.
      wake = signal()
      task = await load()
      if (!saved) break
    }
    return task
  } finally {
    stop()
    clearTimeout(timer)
  }
}

function signal (): { promise: Promise<true>, resolve: (value: true) => void } {
  let resolve!: (value: true) => void
  const promise = new Promise<true>((_resolve) => { resolve = _resolve })
  return { promise, resolve }
}
