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
 * turn lock on every instance is answered from what it last saved or read of the task (held-task-turn.ts). A blocking
 * turn's saves may be written once, before its reply (deferred-task-saves.ts: `writeDeferredSaves`), with the
 * conversation's write when it joined them.
 */
import { Task, taskStateFromJSON } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import type { Kysely } from 'kysely'
import { DatabaseTaskStore, sql } from '../../peers/postgres.js'
import { CallerCapError, callerKeyOf } from '../caller-key.js'
import { DEFAULT_MAX_OPEN_TASKS_PER_CALLER } from '../memory-task-store.js'
import { SaveListeners, type TaskSaveSignals } from '../task-save-signals.js'
import { taskFinishedError } from '../task-states.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS, type TaskReservations, type TurnRefusal } from '../task-reservations.js'
import { RESERVE_TASK_FUNCTION } from './task-store-functions.js'
import { saveTask, saveTaskSteps, writeJoined, type SaveOutcome, type TaskSaveScope } from './task-save-statements.js'
import { heldTurnTask, RememberedTasks, taskKey } from './remembered-tasks.js'
import { columnsOf, sameColumns, savedRowOf, taskOf, type SavedRow, type TaskColumns } from './task-rows.js'
import { heldTaskTurn } from '../held-task-turn.js'
import type { PostgresSaveSignals, PostgresTaskStoreOptions } from './task-store-options.js'
import { adoptTask, deferReservation, deferredSavesOf, takeDeferredSaves, type DefersTaskSaves } from '../deferred-task-saves.js'

export type { PostgresSaveSignals, PostgresTaskStoreOptions } from './task-store-options.js'

function capped (max: number): CallerCapError {
  return new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', max,
    `this caller has ${max} open tasks (MAX_OPEN_TASKS_PER_CALLER): finish or cancel one before starting another`)
}

export class PostgresTaskStore implements TaskStore, TaskSaveSignals, TaskReservations, DefersTaskSaves {
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
  /** What the save statements need (task-save-statements.ts). */
  readonly #scope: TaskSaveScope

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
    this.#scope = { db, ownerResolver: this.#ownerResolver, callerResolver: this.#callerResolver, maxOpenTasksPerCaller: this.maxOpenTasksPerCaller, push: options.push }
  }

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#signals.onSaved(taskId, listener)
  }

  /**
   * The SDK's row (toTaskRow in its database module), written unless the stored task is finished in another state; a
   * new task counted (unless reserved) and inserted under the caller's lock, its reservation taken; with push, its
   * outbox rows and a finished task's configs dropped: all one statement (converse_save_task,
   * task-store-functions.ts), so one round trip and one transaction. While the request defers its task's saves
   * (deferred-task-saves.ts), a save is kept on the request instead, and written with the others by writeDeferredSaves.
   */
  async save (task: Task, context: ServerCallContext): Promise<void> {
    const saved = savedRowOf(task)
    const row = saved.columns
    const tenant = context.tenant ?? ''
    const owner = this.#ownerResolver(context)
    // The SDK's FAILED task for a turn whose reservation was refused: refused alike, unless the task is stored.
    const refused = this.#refused.take(task.id)
    const key = taskKey(tenant, owner, task.id)
    // Kept as written, or forgotten (refused, failed): the next load reads what the row holds.
    const kept = this.#keptFor(context, task.id)
    const deferred = deferredSavesOf<SavedRow>(context, task.id)
    // What the row holds for this request: its last deferred save, else the row as kept.
    const before = deferred?.saves.at(-1)?.columns ?? (deferred?.noRow === true ? null : kept?.get(key))
    // The row as kept already (a turn's opening task event, merged by the SDK onto the task it stored): nothing to
    // write, nor to notify — the update would change no column, record no push notification, wake nobody.
    if (refused === undefined && sameColumns(before, row)) return
    if (deferred !== undefined) {
      // A refused turn's task is written now, after what was deferred before it.
      if (refused === undefined) {
        deferred.saves.push(saved)
        return
      }
      // Not the turn's last write: the turn lock's lease row stays for the release.
      await this.#writeDeferred(context, false)
    }
    const outcome = await this.#write(kept, key, row, async () => await saveTask(this.#scope, context, task.id, saved, refused === undefined))
    this.#settle(outcome, refused, task.id)
  }

  /**
   * Writes the request's deferred saves of its task (deferred-task-saves.ts) in order, in one statement
   * (converse_save_task_steps), and ends the deferral; rejects as the first save refused would have.
   */
  async writeDeferredSaves (context: ServerCallContext): Promise<void> {
    await this.#writeDeferred(context, true)
  }

  /** writeDeferredSaves; `last`: the turn's last write, which the task's turn lock's lease row may go with. */
  async #writeDeferred (context: ServerCallContext, last: boolean): Promise<void> {
    const deferred = takeDeferredSaves<SavedRow>(context)
    const saves = deferred?.saves ?? []
    // A new task's pending reservation goes ahead of a joined insert, in its statement; otherwise alone, first.
    const reservation = deferred?.joined?.takesReservation === true && saves.length > 0 ? deferred.reservation : undefined
    if (reservation === undefined) await deferred?.reservation?.alone()
    // Nothing saved: the joined write alone.
    if (deferred?.taskId === undefined || saves.length === 0) return await writeJoined(deferred?.joined)
    const taskId = deferred.taskId
    const row = (saves.at(-1) as SavedRow).columns
    const kept = this.#keptFor(context, taskId)
    const key = taskKey(context.tenant ?? '', this.#ownerResolver(context), taskId)
    // The turn's last write: the task's turn lock's lease row goes with it (held-task-turn.ts), one commit for both.
    const lease = last ? heldTaskTurn(context, taskId)?.lease : undefined
    const outcome = await this.#write(kept, key, row, async () => await saveTaskSteps(this.#scope, context, taskId, saves, { joined: deferred.joined, reservation: reservation?.call, lease }))
    this.#settle(outcome, undefined, taskId)
  }

  /** Runs a save's statement; what is kept of the task follows (kept when written, forgotten otherwise). */
  async #write (kept: RememberedTasks | undefined, key: string, row: TaskColumns, statement: () => Promise<SaveOutcome>): Promise<SaveOutcome> {
    let outcome!: SaveOutcome
    const write = async (): Promise<boolean> => {
      outcome = await statement()
      return outcome.outcome === 'saved'
    }
    if (kept === undefined) await write()
    else await kept.save(key, row, write)
    return outcome
  }

  /** After a save's statement: signalled when written, else the refusal; recorded notifications wake the deliverer. */
  #settle (saved: SaveOutcome, refused: TurnRefusal | undefined, taskId: string): void {
    if (saved.pushed) this.#push?.recorded?.()
    if (saved.outcome === 'saved') {
      this.#signals.saved(taskId)
      return
    }
    if (saved.outcome === 'capped') throw capped(this.maxOpenTasksPerCaller)
    // Refused only when asked to (a refusal recorded).
    if (refused !== undefined && saved.outcome === 'refused') throw refused
    // Refused: the stored task is finished. Say in which state.
    throw taskFinishedError(taskId, taskStateFromJSON(saved.stored_state))
  }

  /**
   * One statement (converse_reserve_task): the existence check, the caller's lock, the count and the reservation.
   * Unless `held`, the task has no row yet: kept as such when this process alone writes (its first load reads nothing).
   */
  async reserve (taskId: string, context: ServerCallContext): Promise<void> {
    const readEnds = this.#keptFor(context, taskId)?.readStarts(taskKey(context.tenant ?? '', this.#ownerResolver(context), taskId))
    let outcome: string
    let row: null | undefined
    try {
      const { rows } = await sql<{ outcome: string }>`select ${sql.raw(RESERVE_TASK_FUNCTION)}(${sql.join(this.#reservation(taskId, context))}) as outcome`.execute(this.#db)
      outcome = rows[0].outcome
      if (outcome !== 'held') row = null
    } finally {
      readEnds?.(row)
    }
    this.#reserved(taskId, context, outcome)
  }

  /** After converse_reserve_task answered `outcome`: refused past the cap; else the task's saves are its own. */
  #reserved (taskId: string, context: ServerCallContext, outcome: string): void {
    if (outcome === 'capped') throw this.#refused.add(taskId, capped(this.maxOpenTasksPerCaller))
    // A new task's saves are deferred when the request defers them (deferred-task-saves.ts).
    if (outcome === 'reserved') adoptTask(context, taskId)
    // Admitted after all (an earlier try was refused): its task's saves are the task's own.
    this.#refused.take(taskId)
  }

  /**
   * `reserve`, or left to the request's deferred saves of a new task (deferReservation: no query now): made in their
   * statement, in a new conversation's insert (`made`), or alone.
   */
  async reserveWithSaves (taskId: string, context: ServerCallContext): Promise<void> {
    const call = { fn: RESERVE_TASK_FUNCTION, values: this.#reservation(taskId, context) }
    const reservation = {
      call,
      alone: async () => { await this.reserve(taskId, context) },
      made: (outcome: string) => { this.#reserved(taskId, context, outcome) }
    }
    if (!deferReservation(context, taskId, reservation)) await this.reserve(taskId, context)
  }

  /** converse_reserve_task's arguments. */
  #reservation (taskId: string, context: ServerCallContext): unknown[] {
    return [context.tenant ?? '', this.#ownerResolver(context), taskId, this.#callerResolver(context), this.maxOpenTasksPerCaller, TASK_RESERVATION_TTL_MS]
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
    return held === undefined ? undefined : (held.kept ??= heldTurnTask(held.lease?.task, taskKey(context.tenant ?? '', this.#ownerResolver(context), taskId)))
  }

  /** The SDK's read of the row; or the task kept since its last save or read, if any (#keptFor). */
  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const deferred = deferredSavesOf<SavedRow>(context, taskId)
    const pending = deferred?.saves.at(-1)
    if (pending !== undefined) return taskOf(taskId, pending.columns)
    if (deferred?.noRow === true) return undefined
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
