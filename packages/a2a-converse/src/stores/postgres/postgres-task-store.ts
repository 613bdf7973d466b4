/**
 * The task store on PostgreSQL: the SDK's DatabaseTaskStore table and row format, with a save of our own. The SDK's
 * save is a blind upsert, so a turn that loaded a task while it waited could write that older state back over the
 * task another turn (on another instance) had just finished. Here the upsert's update is conditional
 * (packages/a2a-converse/src/stores/task-states.ts): a finished task stays finished, and a refused save rejects with the SDK's
 * UnsupportedOperationError (-32004), as BoundedMemoryTaskStore does. `load` and `list` are the SDK's own.
 *
 * Each completed save is signalled (`onSaved`, packages/a2a-converse/src/stores/task-save-signals.ts). With `signals` (the PostgreSQL task
 * event hub) the save is also NOTIFYed once it committed, so that readers on every instance sharing the database
 * wake (the save does not wait for that NOTIFY); without, only this instance's readers do. A refused save signals
 * nothing.
 */
import { Task, taskStateToJSON, type TaskState } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import type { Kysely } from 'kysely'
import { DatabaseTaskStore, sql, TASK_TABLE } from '../../peers/postgres.js'
import { CallerCapError, callerKeyOf } from '../caller-key.js'
import { DEFAULT_MAX_OPEN_TASKS_PER_CALLER } from '../memory-task-store.js'
import { SaveListeners, type TaskSaveSignals } from '../task-save-signals.js'
import { TERMINAL_TASK_STATES, taskFinishedError } from '../task-states.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS, type TaskReservations } from '../task-reservations.js'
import { TASK_RESERVATIONS_TABLE } from './migrations.js'
import { taskUpdates } from '../../push/task-updates.js'
import { dropPushConfigs, pushConfigsIn } from './postgres-push-config-store.js'
import { recordNotifications } from './push-outbox-rows.js'
import type { SecretBox } from '../secret-box.js'
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
}

/** The SDK's payload format (the `protocol_version` column its rows carry). */
const PAYLOAD_FORMAT = '1.0'

const TERMINAL_NAMES = [...TERMINAL_TASK_STATES].map((state) => taskStateToJSON(state as TaskState))

function encode (value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

/**
 * The advisory-lock class of a caller's open-task count (the two-key form: its keys never meet the migrator's
 * one-key lock). Taken for the transaction that counts and then reserves or inserts, so that two new tasks of one
 * caller, on any instance, are counted one after the other.
 */
const CALLER_LOCK_CLASS = 230_006

type Executor = Kysely<any>

export class PostgresTaskStore implements TaskStore, TaskSaveSignals, TaskReservations {
  readonly #db: Kysely<any>
  readonly #sdk: DatabaseTaskStore
  readonly #ownerResolver: (context: ServerCallContext) => string
  readonly #signals: PostgresSaveSignals
  readonly #callerResolver: (context: ServerCallContext) => string
  readonly maxOpenTasksPerCaller: number
  readonly #refused = new RefusedTasks()
  readonly #push: PostgresTaskStoreOptions['push']

  constructor (db: Kysely<any>, options: PostgresTaskStoreOptions = {}) {
    this.#push = options.push
    this.#db = db
    this.#ownerResolver = options.ownerResolver ?? resolveUserScope
    this.#callerResolver = options.callerResolver ?? callerKeyOf
    this.maxOpenTasksPerCaller = options.maxOpenTasksPerCaller ?? DEFAULT_MAX_OPEN_TASKS_PER_CALLER
    this.#sdk = new DatabaseTaskStore(db, { ownerResolver: this.#ownerResolver })
    this.#signals = options.signals ?? new SaveListeners()
  }

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#signals.onSaved(taskId, listener)
  }

  /** The SDK's row (toTaskRow in its database module), upserted unless the stored task is finished in another state. */
  async save (task: Task, context: ServerCallContext): Promise<void> {
    const payload = Task.toJSON(task) as Record<string, unknown>
    const replaceable = {
      context_id: task.contextId,
      status_last_updated: statusLastUpdated(task.status?.timestamp),
      status_state: task.status === undefined ? null : taskStateToJSON(task.status.state),
      status: encode(payload.status),
      artifacts: encode(payload.artifacts),
      history: encode(payload.history),
      metadata: encode(payload.metadata),
      protocol_version: PAYLOAD_FORMAT
    }
    const tenant = context.tenant ?? ''
    const owner = this.#ownerResolver(context)
    const callerKey = this.#callerResolver(context)
    const upsert = async (db: Executor): Promise<unknown> => await db.insertInto(TASK_TABLE)
      // caller_key is written with a new row only: a task stays the open work of the caller that started it.
      .values({ tenant, owner, id: task.id, caller_key: callerKey, ...replaceable })
      .onConflict((conflict) => conflict.columns(['tenant', 'owner', 'id']).doUpdateSet(replaceable).where((eb) => eb.or([
        eb(`${TASK_TABLE}.status_state`, 'is', null),
        eb(`${TASK_TABLE}.status_state`, 'not in', TERMINAL_NAMES),
        eb(`${TASK_TABLE}.status_state`, '=', sql.ref('excluded.status_state'))
      ])))
      .returning('id')
      .executeTakeFirst()
    // The upsert's update alone, on the stored task under the same condition: a turn saves its task several times, and
    // for a stored task this is the whole save, one statement. Nothing updated: a new task, or a finished one.
    const update = async (db: Executor): Promise<unknown> => await db.updateTable(TASK_TABLE).set(replaceable)
      .where('tenant', '=', tenant).where('owner', '=', owner).where('id', '=', task.id)
      .where((eb) => eb.or([
        eb('status_state', 'is', null),
        eb('status_state', 'not in', TERMINAL_NAMES),
        eb('status_state', '=', replaceable.status_state)
      ]))
      .returning('id')
      .executeTakeFirst()
    const push = this.#push
    const configs = push === undefined ? [] : await pushConfigsIn(this.#db, tenant, owner, task.id, push.secrets)
    let saved: unknown
    if (push === undefined || configs.length === 0) {
      saved = await update(this.#db) ?? await this.#write(this.#db, task, tenant, owner, callerKey, upsert, await this.#held(tenant, owner, task.id))
    } else {
      // The task's updates are recorded in the save's own transaction (the outbox), against the task it replaces.
      saved = await this.#db.transaction().execute(async (trx) => {
        const previous = await lockedTask(trx, tenant, owner, task.id)
        const written = await this.#write(trx, task, tenant, owner, callerKey, upsert, previous !== undefined)
        if (written === undefined) return undefined
        const updates = taskUpdates(previous, task)
        if (updates.length > 0) {
          await recordNotifications(trx, { agentId: push.agentId, tenant, owner, taskId: task.id, configs, updates, trace: traceHeadersFor(traceContextIn(context.state)), secrets: push.secrets })
        }
        if (TERMINAL_TASK_STATES.has(task.status?.state)) await dropPushConfigs(trx, tenant, owner, task.id)
        return written
      })
      if (saved !== undefined) push.recorded?.()
    }
    if (saved !== undefined) {
      this.#signals.saved(task.id)
      return
    }
    // Refused: the stored task is finished. Say in which state (the SDK's load reads it back).
    const stored = await this.#sdk.load(task.id, context) as Task
    throw taskFinishedError(task.id, (stored.status as { state: TaskState }).state)
  }

  /**
   * The upsert of a stored task (`held`), or for a new one: counted (unless reserved) and inserted under the caller's
   * lock, its reservation taken (in a transaction of its own unless `db` is one already).
   */
  async #write (
    db: Executor, task: Task, tenant: string, owner: string, callerKey: string, upsert: (db: Executor) => Promise<unknown>, held: boolean
  ): Promise<unknown> {
    if (held) return await upsert(db)
    // The SDK's FAILED task for a turn whose reservation was refused: refused alike (nothing stored).
    const refused = this.#refused.take(task.id)
    if (refused !== undefined) throw refused
    const open = !TERMINAL_TASK_STATES.has(task.status?.state)
    const insert = async (trx: Executor): Promise<unknown> => {
      await lockCaller(trx, callerKey)
      const reserved = await sql<{ task_id: string }>`delete from ${sql.table(TASK_RESERVATIONS_TABLE)}
        where caller_key = ${callerKey} and task_id = ${task.id} returning task_id, expires_at > now() as live`.execute(trx)
      const live = (reserved.rows[0] as { live?: boolean } | undefined)?.live === true
      if (open && !live) await this.#admit(trx, callerKey, task.id)
      return await upsert(trx)
    }
    return db.isTransaction ? await insert(db) : await db.transaction().execute(insert)
  }

  async reserve (taskId: string, context: ServerCallContext): Promise<void> {
    const callerKey = this.#callerResolver(context)
    if (await this.#held(context.tenant ?? '', this.#ownerResolver(context), taskId)) return
    await this.#db.transaction().execute(async (trx) => {
      await lockCaller(trx, callerKey)
      // Its own earlier reservation is not counted: reserving again only renews it.
      try {
        await this.#admit(trx, callerKey, taskId)
      } catch (error) {
        throw this.#refused.add(taskId, error as CallerCapError)
      }
      await sql`insert into ${sql.table(TASK_RESERVATIONS_TABLE)} (caller_key, task_id, expires_at)
        values (${callerKey}, ${taskId}, now() + ${`${TASK_RESERVATION_TTL_MS} milliseconds`}::interval)
        on conflict (caller_key, task_id) do update set expires_at = excluded.expires_at`.execute(trx)
    })
    // Admitted after all (an earlier try was refused): its task's saves are the task's own.
    this.#refused.take(taskId)
  }

  /** Whether the task is stored (one indexed read). */
  async #held (tenant: string, owner: string, taskId: string): Promise<boolean> {
    const { rows } = await sql`select 1 from ${sql.table(TASK_TABLE)} where tenant = ${tenant} and owner = ${owner} and id = ${taskId}`.execute(this.#db)
    return rows.length > 0
  }

  /**
   * Refuses (CallerCapError) one more open task of the caller when its open tasks (a partial index) and live
   * reservations other than `taskId`'s reach maxOpenTasksPerCaller. Run under lockCaller, in the transaction that
   * then inserts, so the count holds against concurrent new tasks of the caller on every instance. Expired
   * reservations of the caller are dropped on the way.
   */
  async #admit (trx: Executor, callerKey: string, taskId: string): Promise<void> {
    const table = sql.table(TASK_TABLE)
    const reservations = sql.table(TASK_RESERVATIONS_TABLE)
    const { rows } = await sql<{ open: string }>`
      with expired as (delete from ${reservations} where caller_key = ${callerKey} and expires_at <= now())
      select (select count(*) from ${table} where caller_key = ${callerKey}
          and (status_state is null or status_state not in (${sql.join(TERMINAL_NAMES)})))
        + (select count(*) from ${reservations} where caller_key = ${callerKey} and task_id <> ${taskId} and expires_at > now()) as open`.execute(trx)
    if (Number(rows[0].open) < this.maxOpenTasksPerCaller) return
    throw new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', this.maxOpenTasksPerCaller,
      `this caller has ${this.maxOpenTasksPerCaller} open tasks (MAX_OPEN_TASKS_PER_CALLER): finish or cancel one before starting another`)
  }

  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return await this.#sdk.load(taskId, context)
  }

  list: TaskStore['list'] = async (params, context) => await this.#sdk.list(params, context)
}

/** The stored task's status and artifacts (what its updates are told from), locked until the transaction ends. */
async function lockedTask (trx: Executor, tenant: string, owner: string, taskId: string): Promise<Task | undefined> {
  const { rows } = await sql<{ context_id: string, status: string | null, artifacts: string | null }>`select context_id, status, artifacts
    from ${sql.table(TASK_TABLE)} where tenant = ${tenant} and owner = ${owner} and id = ${taskId} for update`.execute(trx)
  if (rows.length === 0) return undefined
  const row = rows[0]
  return Task.fromJSON({ id: taskId, contextId: row.context_id, status: parse(row.status), artifacts: parse(row.artifacts) })
}

function parse (value: string | null): unknown {
  return value === null ? undefined : JSON.parse(value)
}

/** Holds the caller's count lock until the transaction ends. */
async function lockCaller (trx: Executor, callerKey: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${CALLER_LOCK_CLASS}, hashtext(${callerKey}))`.execute(trx)
}

/** The SDK's `status_last_updated`: the status timestamp in milliseconds, 0 when absent or unreadable. */
function statusLastUpdated (timestamp: string | undefined): number {
  if (timestamp === undefined || timestamp === '') return 0
  const parsed = Date.parse(timestamp)
  return Number.isNaN(parsed) ? 0 : parsed
}
