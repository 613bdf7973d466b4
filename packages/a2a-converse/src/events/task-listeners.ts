import type { TaskStreamEvent } from './task-event-hub.js'

/**
 * The subscribers of each task (or of each agent's conversations): what every TaskEventHub keeps, whatever carries
 * the events between instances; the task stores keep their save signals the same way (an event per save).
 */
export class TaskListeners<Event = TaskStreamEvent> {
  readonly #byTask = new Map<string, Set<(event: Event) => void>>()

  /** Adds a listener; returns the function that removes it (the task's entry goes with its last listener). */
  add (taskId: string, listener: (event: Event) => void): () => void {
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
  deliver (taskId: string, event: Event, onError?: (error: unknown) => void): void {
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
