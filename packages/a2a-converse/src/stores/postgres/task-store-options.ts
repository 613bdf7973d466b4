/**
 * What a PostgresTaskStore (postgres-task-store.ts) is made with: its options, and the save signals it calls.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { TaskSaveSignals } from '../task-save-signals.js'
import type { SecretBox } from '../secret-box.js'
import type { RememberedTasks } from './remembered-tasks.js'

/** Where the saves are signalled across instances: PostgresTaskEventHub (it NOTIFYs them and LISTENs for them). */
export interface PostgresSaveSignals extends TaskSaveSignals {
  /** A save on this instance committed: wakes the listeners here at once, and (in the background) elsewhere. */
  saved (taskId: string): void
}

export interface PostgresTaskStoreOptions {
  /** The owner column of a call (the SDK's option of the same name). Default: the SDK's resolveUserScope. */
  ownerResolver?: (context: ServerCallContext) => string
  /** Signals each save to every instance on the database (the task event hub). Default: to this instance only. */
  signals?: PostgresSaveSignals
  /**
   * Whose open work a new task is (the `caller_key` column): the agent and the caller key. Default: the caller key
   * of the context (packages/a2a-converse/src/stores/caller-key.ts), for one agent per table.
   */
  callerResolver?: (context: ServerCallContext) => string
  /** Open tasks one caller holds at most (MAX_OPEN_TASKS_PER_CALLER, as in memory). Default 1 000. */
  maxOpenTasksPerCaller?: number
  /**
   * Push notifications (packages/a2a-converse/src/stores/postgres/push-outbox.ts): a save of a task with push configs writes, in its own
   * transaction, an outbox row per config and update (packages/a2a-converse/src/push/task-updates.ts), and drops the task's configs when
   * it finishes; `recorded` is called after such a commit (this instance's deliverer wakes).
   */
  push?: { agentId: string, recorded?: () => void, secrets?: SecretBox }
  /**
   * This process is the only writer of the task table (the embedded database: its folder lock keeps other processes
   * out): `load` answers from the tasks saved or read here lately (remembered-tasks.ts), without a query. `true`: a
   * memory of this store's own; a RememberedTasks: one shared by the task stores of this process on the database
   * (the gateway's), so that a save through any of them is seen by all. Default false: on a PostgreSQL server other
   * instances write (a cancellation, a turn elsewhere), and every load reads the row, but a request's own re-reads of
   * a task whose turn lock it holds on every instance (held-task-turn.ts).
   */
  soleWriter?: boolean | RememberedTasks
}
