/**
 * What an A2ADispatcher (dispatch.ts) is made with, what a call of it takes, and what a stream it opens gives.
 */
import type { AgentExecutor, TaskStore } from '@a2a-js/sdk/server'
import type { TaskEventHub } from '../../events/task-event-hub.js'
import type { AgentPush } from '../../push/push-notifications.js'
import type { TaskTurnLock } from '../../stores/task-turn-lock.js'
import type { ErrorLogger } from './dispatch-errors.js'
import type { TaskEventSource } from './task-event-relay.js'

export interface DispatcherOptions {
  /** The agent card (ProtoJSON). Its `capabilities` are what the agent serves. */
  card: Record<string, unknown>
  executor: AgentExecutor
  /** Default: a new InMemoryTaskStore. */
  taskStore?: TaskStore
  /**
   * The lean SendMessage path for Message replies (same results, see packages/a2a-converse/src/backends/local/sdk-internals.ts). Default true;
   * false sends every SendMessage through DefaultRequestHandler.sendMessage.
   */
  leanSendMessage?: boolean
  /**
   * Task events published from outside an execution (the task event hub): streams of a task relay them and end
   * with one that ends the task (see task-event-relay.ts). With its `publish`, a cancel is published too, so every
   * open stream of the task ends with it.
   */
  events?: TaskEventSource & Partial<Pick<TaskEventHub, 'publish'>>
  /**
   * Turns that name an existing task (SendMessage, SendStreamingMessage) run one at a time per task under this
   * lock. Default: a MemoryTaskTurnLock (this process); instances sharing a task store need a shared one.
   */
  turnLock?: TaskTurnLock
  /**
   * Push notifications (the card's `capabilities.pushNotifications`): where configs live and the URL policy they
   * are checked against. The task store given reports its saves' updates (packages/a2a-converse/src/push/push-notifications.ts); the
   * SDK's own sender is not used.
   */
  push?: AgentPush
}

export interface CallOptions {
  log?: ErrorLogger
  /** The request's: a turn waiting for the task's lock stops waiting when it aborts. */
  signal?: AbortSignal
}

/** A stream of JSON-RPC `result`s (StreamResponse ProtoJSON), and how to stop it early. */
export interface OpenedStream {
  source: AsyncGenerator<unknown, void, undefined>
  /** Ends the stream now (client gone, server closing); the task and its execution are left alone. Idempotent. */
  release (): void
}
