/**
 * Task events published after the executor returned (a person's reply in a human-owned conversation, say).
 * The A2A endpoint relays them to open streams on the task (SendStreamingMessage, SubscribeToTask).
 * Events are A2A 1.0 wire StreamResponse objects: { statusUpdate } | { artifactUpdate } | { task }.
 */
export type TaskStreamEvent = Record<string, unknown>

export type TaskEventListener = (event: TaskStreamEvent) => void

export interface TaskEventHub {
  /** Delivers the event to every current subscriber of the task (on every instance, for shared hubs). */
  publish (taskId: string, event: TaskStreamEvent): Promise<void>
  /** Returns the function that unsubscribes; listeners are called in publish order. */
  subscribe (taskId: string, listener: TaskEventListener): () => void
  close (): Promise<void>
}

/** One process: a map of listener sets. No timers, nothing kept once the last listener leaves. */
export class MemoryTaskEventHub implements TaskEventHub {
  readonly #listeners = new Map<string, Set<TaskEventListener>>()

  async publish (taskId: string, event: TaskStreamEvent): Promise<void> {
    for (const listener of this.#listeners.get(taskId) ?? []) listener(event)
  }

  subscribe (taskId: string, listener: TaskEventListener): () => void {
    let set = this.#listeners.get(taskId)
    if (set === undefined) {
      set = new Set()
      this.#listeners.set(taskId, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.#listeners.get(taskId) === set) this.#listeners.delete(taskId)
    }
  }

  /** How many tasks have subscribers (for tests and metrics). */
  get size (): number {
    return this.#listeners.size
  }

  async close (): Promise<void> {
    this.#listeners.clear()
  }
}
