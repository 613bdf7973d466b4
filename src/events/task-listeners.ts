import type { TaskEventListener, TaskStreamEvent } from './task-event-hub.js'

/**
 * The subscribers of each task (or of each agent's conversations): what every TaskEventHub keeps, whatever carries
 * the events between instances.
 */
export class TaskListeners {
  readonly #byTask = new Map<string, Set<TaskEventListener>>()

  /** Adds a listener; returns the function that removes it (the task's entry goes with its last listener). */
  add (taskId: string, listener: TaskEventListener): () => void {
    let set = this.#byTask.get(taskId)
    if (set === undefined) {
      set = new Set()
      this.#byTask.set(taskId, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.#byTask.get(taskId) === set) this.#byTask.delete(taskId)
    }
  }

  has (taskId: string): boolean {
    return this.#byTask.has(taskId)
  }

  /** How many tasks have listeners. */
  get size (): number {
    return this.#byTask.size
  }

  /**
   * Calls the task's listeners in subscription order (those subscribed when delivery starts). With `onError`, a
   * throwing listener is reported there and the others still run; without it, the error propagates.
   */
  deliver (taskId: string, event: TaskStreamEvent, onError?: (error: unknown) => void): void {
    const set = this.#byTask.get(taskId)
    if (set === undefined) return
    for (const listener of [...set]) {
      if (onError === undefined) {
        listener(event)
        continue
      }
      try {
        listener(event)
      } catch (error) {
        onError(error)
      }
    }
  }

  clear (): void {
    this.#byTask.clear()
  }
}
