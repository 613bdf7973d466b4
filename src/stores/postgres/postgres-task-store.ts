/**
 * The task store on PostgreSQL: the SDK's DatabaseTaskStore table and row format, with a save of our own. The SDK's
 * save is a blind upsert, so a turn that loaded a task while it waited could write that older state back over the
 * task another turn (on another instance) had just finished. Here the upsert's update is conditional
 * (src/stores/task-states.ts): a finished task stays finished, and a refused save rejects with the SDK's
 * UnsupportedOperationError (-32004), as BoundedMemoryTaskStore does. `load` and `list` are the SDK's own.
 *
 * Each completed save is signalled (`onSaved`, src/stores/task-save-signals.ts). With `signals` (the PostgreSQL task
 * event hub) the save is also NOTIFYed once it committed, so that readers on every instance sharing the database
 * wake (the save does not wait for that NOTIFY); without, only this instance's readers do. A refused save signals
 * nothing.
 */
import { Task, taskStateToJSON, type TaskState } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { DatabaseTaskStore, TASK_TABLE } from '@a2a-js/sdk/server/database'
import { sql, type Kysely } from 'kysely'
import { CallerCapError, callerKeyOf } from '../caller-key.js'
import { DEFAULT_MAX_OPEN_TASKS_PER_CALLER } from '../memory-task-store.js'
import { SaveListeners, type TaskSaveSignals } from '../task-save-signals.js'
import { TERMINAL_TASK_STATES, taskFinishedError } from '../task-states.js'

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
   * of the context (src/stores/caller-key.ts), for one agent per table.
   */
  callerResolver?: (context: ServerCallContext) => string
  /** Open tasks one caller holds at most (MAX_OPEN_TASKS_PER_CALLER, as in memory). Default 1 000. */
  maxOpenTasksPerCaller?: number
}

/** The SDK's payload format (the `protocol_version` column its rows carry). */
const PAYLOAD_FORMAT = '1.0'

const TERMINAL_NAMES = [...TERMINAL_TASK_STATES].map((state) => taskStateToJSON(state as TaskState))

function encode (value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

export class PostgresTaskStore implements TaskStore, TaskSaveSignals {
  readonly #db: Kysely<any>
  readonly #sdk: DatabaseTaskStore
  readonly #ownerResolver: (context: ServerCallContext) => string
  readonly #signals: PostgresSaveSignals
  readonly #callerResolver: (context: ServerCallContext) => string
  readonly maxOpenTasksPerCaller: number

  constructor (db: Kysely<any>, options: PostgresTaskStoreOptions = {}) {
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
    if (!TERMINAL_TASK_STATES.has(task.status?.state)) await this.#admit(tenant, owner, task.id, callerKey)
    const saved = await this.#db.insertInto(TASK_TABLE)
      // caller_key is written with a new row only: a task stays the open work of the caller that started it.
      .values({ tenant, owner, id: task.id, caller_key: callerKey, ...replaceable })
      .onConflict((conflict) => conflict.columns(['tenant', 'owner', 'id']).doUpdateSet(replaceable).where((eb) => eb.or([
        eb(`${TASK_TABLE}.status_state`, 'is', null),
        eb(`${TASK_TABLE}.status_state`, 'not in', TERMINAL_NAMES),
        eb(`${TASK_TABLE}.status_state`, '=', sql.ref('excluded.status_state'))
      ])))
      .returning('id')
      .executeTakeFirst()
    if (saved !== undefined) {
      this.#signals.saved(task.id)
      return
    }
    // Refused: the stored task is finished. Say in which state (the SDK's load reads it back).
    const stored = await this.#sdk.load(task.id, context) as Task
    throw taskFinishedError(task.id, (stored.status as { state: TaskState }).state)
  }

  /**
   * An open task not stored yet is refused (CallerCapError) when its caller already holds maxOpenTasksPerCaller open
   * tasks: one indexed read per open save (is it new?), and a count over the caller's open tasks (a partial index) only for
   * a new one.
   * Two new tasks of one caller saved at the same moment may both pass the count: the cap holds to within the
   * caller's concurrent starts.
   */
  async #admit (tenant: string, owner: string, taskId: string, callerKey: string): Promise<void> {
    const table = sql.table(TASK_TABLE)
    // The count runs only when the task is not held (an InitPlan the planner evaluates once).
    const { rows } = await sql<{ held: boolean, open: string }>`
      with held as (select 1 from ${table} where tenant = ${tenant} and owner = ${owner} and id = ${taskId})
      select exists(select 1 from held) as held,
        (select count(*) from ${table} where not exists(select 1 from held) and caller_key = ${callerKey}
          and (status_state is null or status_state not in (${sql.join(TERMINAL_NAMES)}))) as open`.execute(this.#db)
    const { held, open } = rows[0]
    if (held || Number(open) < this.maxOpenTasksPerCaller) return
    throw new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', this.maxOpenTasksPerCaller,
      `this caller has ${this.maxOpenTasksPerCaller} open tasks (MAX_OPEN_TASKS_PER_CALLER): finish or cancel one before starting another`)
  }

  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return await this.#sdk.load(taskId, context)
  }

  list: TaskStore['list'] = async (params, context) => await this.#sdk.list(params, context)
}

/** The SDK's `status_last_updated`: the status timestamp in milliseconds, 0 when absent or unreadable. */
function statusLastUpdated (timestamp: string | undefined): number {
  if (timestamp === undefined || timestamp === '') return 0
  const parsed = Date.parse(timestamp)
  return Number.isNaN(parsed) ? 0 : parsed
}
