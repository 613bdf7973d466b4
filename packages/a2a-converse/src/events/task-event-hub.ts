/**
 * Task events published after the executor returned (a person's reply in a human-owned conversation, say).
 * The A2A endpoint relays them to open streams on the task (SendStreamingMessage, SubscribeToTask).
 * Events are A2A 1.0 wire StreamResponse objects: { statusUpdate } | { artifactUpdate } | { task }.
 *
 * A second, agent-level channel carries conversation events (a conversation of the agent changed: see
 * runtime/conversation-feed.ts); the operator inbox follows it.
 */
import { TaskListeners } from './task-listeners.js'

export type TaskStreamEvent = Record<string, unknown>

export type TaskEventListener = (event: TaskStreamEvent) => void

export interface TaskEventHub {
  /** Delivers the event to every current subscriber of the task (on every instance, for shared hubs). */
  publish (taskId: string, event: TaskStreamEvent): Promise<void>
  /** Returns the function that unsubscribes; listeners are called in publish order. */
  subscribe (taskId: string, listener: TaskEventListener): () => void
  /** Delivers a conversation event to every current subscriber of the agent's conversations (on every instance). */
  publishConversation (agentId: string, event: TaskStreamEvent): Promise<void>
  /** Follows an agent's conversation events; returns the function that unsubscribes. */
  subscribeConversations (agentId: string, listener: TaskEventListener): () => void
  close (): Promise<void>
}

/** One process: listeners called directly. No timers, nothing kept once the last listener leaves. */
export class MemoryTaskEventHub implements TaskEventHub {
  readonly #listeners = new TaskListeners()
  readonly #agentListeners = new TaskListeners()

  async publish (taskId: string, event: TaskStreamEvent): Promise<void> {
    this.#listeners.deliver(taskId, event)
  }

  subscribe (taskId: string, listener: TaskEventListener): () => void {
    return this.#listeners.add(taskId, listener)
  }

  async publishConversation (agentId: string, event: TaskStreamEvent): Promise<void> {
    this.#agentListeners.deliver(agentId, event)
  }

  subscribeConversations (agentId: string, listener: TaskEventListener): () => void {
    return this.#agentListeners.add(agentId, listener)
  }

  /** How many tasks have subscribers (for tests and metrics). */
  get size (): number {
    return this.#listeners.size
  }

  async close (): Promise<void> {
    this.#listeners.clear()
    this.#agentListeners.clear()
  }
}
