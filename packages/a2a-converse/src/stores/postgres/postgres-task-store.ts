/**
 * The task store on PostgreSQL: the SDK's DatabaseTaskStore table and row format, with a save of our own. The SDK's
 * save is a blind upsert, so a turn that loaded a task while it waited could write that older state back over the
 * task another turn (on another instance) had just finished. Here the upsert's update is conditional
 * (packages/a2a-converse/src/stores/task-states.ts): a finished task stays finished, and a refused save rejects with the SDK's
 * UnsupportedOperationError (-32004), as BoundedMemoryTaskStore does. `load` and `list` are the SDK's own. A save
 * and a reservation are one statement each, SQL functions of our migrations (task-store-functions.ts): one round trip.
 *
 * Each completed save is signalled (`onSaved`, packages/a2a-converse/src/stores/task-save-signals.ts). With `signals` (the PostgreSQL task
 * event hub) the save is also NOTIFYed once it committed, so that readers on every instance sharing the database
 * wake (the save does not wait for that NOTIFY); without, only this instance's readers do. A refused save signals
 * nothing.
 *
 * With `soleWriter` (the embedded database: this process alone writes the table), a `load` answers from the tasks
 * saved or read here lately (remembered-tasks.ts) when it can, without a query: the SDK reads a task again before each
 * of its saves, and a routine turn saves several times (issue 43). Without (a server), a request that holds the task's
 * turn lock on every instance is answered from what it last saved or read of the task (held-task-turn.ts).
 */
import { Task, taskStateFromJSON, taskStateToJSON } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import type { Kysely } from 'kysely'
import { DatabaseTaskStore, sql } from '../../peers/postgres.js'
import { CallerCapError, callerKeyOf } from '../caller-key.js'
import { DEFAULT_MAX_OPEN_TASKS_PER_CALLER } from '../memory-task-store.js'
import { SaveListeners, type TaskSaveSignals } from '../task-save-signals.js'
import { taskFinishedError } from '../task-states.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS, type TaskReservations, type TurnRefusal } from '../task-reservations.js'
import { resealTaskPushConfigs } from './postgres-push-config-store.js'
import { CONFIG_TO_RESEAL, RESERVE_TASK_FUNCTION, SAVE_TASK_FUNCTION } from './task-store-functions.js'
import { currentPrefix, type SecretBox } from '../secret-box.js'
import { RememberedTasks, taskKey } from './remembered-tasks.js'
import { columnsOf, sameColumns, taskOf, type TaskColumns } from './task-rows.js'
import { heldTaskTurn } from '../held-task-turn.js'
import { traceContextIn, traceHeadersFor } from '../../telemetry/tracing.js'

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

/** The SDK's payload format (the `protocol_version` column its rows carry). */
const PAYLOAD_FORMAT = '1.0'

/** What converse_save_task answers: `saved` (and whether the task has push configs), or why nothing was written. */
interface SaveOutcome {
  outcome: 'saved' | 'finished' | 'capped' | 'refused'
  /** The stored task's state (status_state) when `finished`. */
  stored_state: string
  pushed: boolean
}

function capped (max: number): CallerCapError {
  return new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', max,
    `this caller has ${max} open tasks (MAX_OPEN_TASKS_PER_CALLER): finish or cancel one before starting another`)
}

export class PostgresTaskStore implements TaskStore, TaskSaveSignals, TaskReservations {
  readonly #db: Kysely<any>
  readonly #sdk: DatabaseTaskStore
  readonly #ownerResolver: (context: ServerCallContext) => string
  readonly #signals: PostgresSaveSignals
  readonly #callerResolver: (context: ServerCallContext) => string
  readonly maxOpenTasksPerCaller: number
  readonly #refused = new RefusedTasks()
  readonly #push: PostgresTaskStoreOptions['push']
  /** The tasks saved or read lately, when this process alone writes the table. */
  readonly #remembered: RememberedTasks | undefined

  constructor (db: Kysely<any>, options: PostgresTaskStoreOptions = {}) {
    this.#push = options.push
    this.#db = db
    this.#ownerResolver = options.ownerResolver ?? resolveUserScope
    this.#callerResolver = options.callerResolver ?? callerKeyOf
    this.maxOpenTasksPerCaller = options.maxOpenTasksPerCaller ?? DEFAULT_MAX_OPEN_TASKS_PER_CALLER
    this.#sdk = new DatabaseTaskStore(db, { ownerResolver: this.#ownerResolver })
    this.#signals = options.signals ?? new SaveListeners()
    const soleWriter = options.soleWriter ?? false
    this.#remembered = soleWriter === false ? undefined : soleWriter === true ? new RememberedTasks() : soleWriter
  }

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#signals.onSaved(taskId, listener)
  }

  /**
   * The SDK's row (toTaskRow in its database module), written unless the stored task is finished in another state; a
   * new task counted (unless reserved) and inserted under the caller's lock, its reservation taken; with push, its
   * outbox rows and a finished task's configs dropped: all one statement (converse_save_task,
   * task-store-functions.ts), so one round trip and one transaction.
   */
  async save (task: Task, context: ServerCallContext): Promise<void> {
    const row = columnsOf(task)
    const tenant = context.tenant ?? ''
    const owner = this.#ownerResolver(context)
    // The SDK's FAILED task for a turn whose reservation was refused: refused alike, unless the task is stored.
    const refused = this.#refused.take(task.id)
    const key = taskKey(tenant, owner, task.id)
    // Kept as written, or forgotten (refused, failed): the next load reads what the row holds.
    const kept = this.#keptFor(context, task.id)
    // The row as kept already (a turn's opening task event, merged by the SDK onto the task it stored): nothing to
    // write, nor to notify — the update would change no column, record no push notification, wake nobody.
    if (refused === undefined && kept !== undefined && sameColumns(kept.get(key), row)) return
    const push = this.#push
    const recorded = push?.recorded
    const trace = push === undefined ? undefined : traceHeadersFor(traceContextIn(context.state))
    const values = [
      tenant, owner, task.id, this.#callerResolver(context),
      row.contextId, statusLastUpdated(task.status?.timestamp), task.status === undefined ? null : taskStateToJSON(task.status.state),
      row.status, row.artifacts, row.history, row.metadata, PAYLOAD_FORMAT,
      refused === undefined, this.maxOpenTasksPerCaller,
      push?.agentId ?? null, push?.secrets === undefined ? null : currentPrefix(push.secrets), trace?.traceparent ?? null, trace?.tracestate ?? null
    ]
    let saved!: SaveOutcome
    const write = async (): Promise<boolean> => {
      saved = await this.#written(values, tenant, owner, task.id)
      return saved.outcome === 'saved'
    }
    if (kept === undefined) await write()
    else await kept.save(key, row, write)
    if (saved.outcome === 'saved') {
      if (saved.pushed) recorded?.()
      this.#signals.saved(task.id)
      return
    }
    if (saved.outcome === 'capped') throw capped(this.maxOpenTasksPerCaller)
    // Refused only when asked to (a refusal recorded).
    if (refused !== undefined && saved.outcome === 'refused') throw refused
    // Refused: the stored task is finished. Say in which state.
    throw taskFinishedError(task.id, taskStateFromJSON(saved.stored_state))
  }

  /** converse_save_task's outcome; a config to re-seal first is re-sealed, and the save made again. */
  async #written (values: unknown[], tenant: string, owner: string, taskId: string): Promise<SaveOutcome> {
    try {
      return await this.#saveTask(values)
    } catch (error) {
      if ((error as { code?: unknown }).code !== CONFIG_TO_RESEAL) throw error
      // A config of the task sealed with a previous key (or written in clear before a key was given): its outbox
      // rows are sealed with the current one, so it is re-sealed first (as resealPushSecrets would).
      await resealTaskPushConfigs(this.#db, tenant, owner, taskId, this.#push?.secrets)
      return await this.#saveTask(values)
    }
  }

  async #saveTask (values: unknown[]): Promise<SaveOutcome> {
    const { rows } = await sql<SaveOutcome>`select outcome, stored_state, pushed
      from ${sql.raw(SAVE_TASK_FUNCTION)}(${sql.join(values)})`.execute(this.#db)
    return rows[0]
  }

  /**
   * One statement (converse_reserve_task): the existence check, the caller's lock, the count and the reservation.
   * Unless `held`, the task has no row yet: kept as such when this process alone writes (its first load reads nothing).
   */
  async reserve (taskId: string, context: ServerCallContext): Promise<void> {
    const tenant = context.tenant ?? ''
    const owner = this.#ownerResolver(context)
    const readEnds = this.#keptFor(context, taskId)?.readStarts(taskKey(tenant, owner, taskId))
    let outcome: string | undefined
    let row: null | undefined
    try {
      const { rows } = await sql<{ outcome: string }>`select ${sql.raw(RESERVE_TASK_FUNCTION)}(${tenant}, ${owner},
        ${taskId}, ${this.#callerResolver(context)}, ${this.maxOpenTasksPerCaller}, ${TASK_RESERVATION_TTL_MS}) as outcome`.execute(this.#db)
      outcome = rows[0].outcome
      if (outcome !== 'held') row = null
    } finally {
      readEnds?.(row)
    }
    if (outcome === 'capped') throw this.#refused.add(taskId, capped(this.maxOpenTasksPerCaller))
    // Admitted after all (an earlier try was refused): its task's saves are the task's own.
    this.#refused.take(taskId)
  }

  refuse (taskId: string, error: TurnRefusal): void {
    this.#refused.add(taskId, error)
  }

  /**
   * What answers a load of the task besides its row: when this process alone writes, the tasks kept since their last
   * save or read; otherwise what the request holding the task's turn lock on every instance kept (held-task-turn.ts).
   */
  #keptFor (context: ServerCallContext, taskId: string): RememberedTasks | undefined {
    if (this.#remembered !== undefined) return this.#remembered
    const held = heldTaskTurn<RememberedTasks>(context, taskId)
    return held === undefined ? undefined : (held.kept ??= new RememberedTasks(1))
  }

  /** The SDK's read of the row; or the task kept since its last save or read, if any (#keptFor). */
  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const remembered = this.#keptFor(context, taskId)
    if (remembered === undefined) return await this.#sdk.load(taskId, context)
    const key = taskKey(context.tenant ?? '', this.#ownerResolver(context), taskId)
    const kept = remembered.get(key)
    if (kept !== undefined) return kept === null ? undefined : taskOf(taskId, kept)
    const readEnds = remembered.readStarts(key)
    let row: TaskColumns | null | undefined
    try {
      const task = await this.#sdk.load(taskId, context)
      // Its columns before the caller changes it.
      row = task === undefined ? null : columnsOf(task)
      return task
    } finally {
      readEnds(row)
    }
  }

  list: TaskStore['list'] = async (params, context) => await this.#sdk.list(params, context)
}

/** The SDK's `status_last_updated`: the status timestamp in milliseconds, 0 when absent or unreadable. */
function statusLastUpdated (timestamp: string | undefined): number {
  if (timestamp === undefined || timestamp === '') return 0
  const parsed = Date.parse(timestamp)
  return Number.isNaN(parsed) ? 0 : parsed
}
