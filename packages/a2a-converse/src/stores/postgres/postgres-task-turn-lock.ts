/**
 * The per-task turn lock shared by every instance on one database: a lease row in `converse_task_turn_locks`.
 *
 * - **Take**: one auto-committed `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now()` — the row is ours when
 *   it did not exist or its lease ran out. Nothing is held between attempts: no pool connection, no transaction.
 * - **Wait**: turns of one instance queue in this process first (a KeyedLock), so only the first of them polls the
 *   table, with a bounded backoff (`retryInitialDelayMs` doubling up to `retryMaxDelayMs`), until `waitTimeoutMs`
 *   (TaskBusyError) or the request's signal.
 * - **Hold**: the lease lasts `leaseMs` and is renewed every third of it while the turn runs, so a long turn keeps it
 *   and a crashed holder's lease runs out at most `leaseMs` after its last renewal; the next turn then takes it over.
 * - **Release**: the row is deleted (only while it is still ours: a holder whose lease ran out and was taken over
 *   deletes nothing). A release the database does not answer is logged; the lease then runs out by itself. A
 *   statement of the turn's on the same database may delete the row with its own writes instead (TurnLease: the task
 *   store's deferred saves, the turn's last write), and the release then sends nothing.
 * - **Read**: with `taskOwner`, the take also reads the task's row, in the same round trip, once the lease is taken
 *   (`converse_take_task_turn`, take-task-turn-function.ts), and hands it to the request's task store with the lease
 *   (TurnLease `task`): the SDK's first load of the turn then sends no query.
 *
 * The database's clock (`now()`) decides expiry, so instance clocks need not agree.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { InvalidOptionError } from '../../core/errors.js'
import { KeyedLock } from '../keyed-lock.js'
import {
  taskTurnKeyString, turnWaitTimeout, waitBound, type TakenTaskRow, type TaskTurnKey, type TaskTurnLock, type TaskTurnRelease
} from '../task-turn-lock.js'
import { toStoreError } from './connection-errors.js'
import { TASK_TURN_LOCKS_TABLE } from './migrations.js'
import type { PostgresDatabase } from './postgres-database.js'
import { taskKey } from './remembered-tasks.js'
import { TAKE_TASK_TURN_FUNCTION } from './take-task-turn-function.js'

export interface PostgresTaskTurnLockOptions {
  /** Keeps the keys of different lock users apart (the gateway passes the agent id). Default ''. */
  scope?: string
  /** How long a lease lasts without renewal. Default 15 000 ms. */
  leaseMs?: number
  /** How long a turn waits for the task's earlier turns. Default 30 000 ms. */
  waitTimeoutMs?: number
  /** First delay between two attempts at a taken lease; doubled per attempt. Default 5 ms. */
  retryInitialDelayMs?: number
  /** Cap of that delay. Default 100 ms. */
  retryMaxDelayMs?: number
  /**
   * The owner a turn's task has in the task table (its task store's `ownerResolver` for the request; `key.owner` is
   * the SDK's user scope). Given, the take reads the task's row too (the task table must be on this database): one
   * round trip less per turn. A store whose owner differs reads the row itself.
   */
  taskOwner?: (key: TaskTurnKey) => string
}

export const DEFAULT_LEASE_MS = 15_000

const TAKE = `insert into ${TASK_TURN_LOCKS_TABLE} (lock_key, holder, expires_at)
    values ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
  on conflict (lock_key) do update set holder = excluded.holder, expires_at = excluded.expires_at
    where ${TASK_TURN_LOCKS_TABLE}.expires_at <= now()
  returning holder`
const TAKE_READING = `select * from ${TAKE_TASK_TURN_FUNCTION}($1, $2, $3, $4, $5, $6)`
const RENEW = `update ${TASK_TURN_LOCKS_TABLE} set expires_at = now() + make_interval(secs => $3::double precision / 1000)
  where lock_key = $1 and holder = $2`
const RELEASE = `delete from ${TASK_TURN_LOCKS_TABLE} where lock_key = $1 and holder = $2`

function positive (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer (milliseconds)')
  return value
}

export class PostgresTaskTurnLock implements TaskTurnLock {
  /** One lease row for every instance on the database. */
  readonly spansInstances = true
  readonly leaseMs: number
  readonly waitTimeoutMs: number
  readonly #scope: string
  readonly #retryInitialDelayMs: number
  readonly #retryMaxDelayMs: number
  readonly #pool: pg.Pool
  readonly #logger: PostgresDatabase['logger']
  readonly #taskOwner: ((key: TaskTurnKey) => string) | undefined
  readonly #local = new KeyedLock()

  constructor (database: Pick<PostgresDatabase, 'pool' | 'logger'>, options: PostgresTaskTurnLockOptions = {}) {
    if (options.scope !== undefined && typeof options.scope !== 'string') throw new InvalidOptionError('scope', 'must be a string')
    this.#scope = options.scope ?? ''
    this.leaseMs = positive('leaseMs', options.leaseMs, DEFAULT_LEASE_MS)
    this.waitTimeoutMs = turnWaitTimeout('waitTimeoutMs', options.waitTimeoutMs)
    this.#retryInitialDelayMs = positive('retryInitialDelayMs', options.retryInitialDelayMs, 5)
    this.#retryMaxDelayMs = positive('retryMaxDelayMs', options.retryMaxDelayMs, 100)
    this.#pool = database.pool
    this.#logger = database.logger
    if (options.taskOwner !== undefined && typeof options.taskOwner !== 'function') throw new InvalidOptionError('taskOwner', 'must be a function')
    this.#taskOwner = options.taskOwner
  }

  async acquire (key: TaskTurnKey, signal?: AbortSignal): Promise<TaskTurnRelease> {
    const name = taskTurnKeyString(key, this.#scope)
    const holder = randomUUID()
    const bound = waitBound(key, this.waitTimeoutMs, signal)
    let releaseLocal: (() => void) | undefined
    let task: TakenTaskRow | undefined
    try {
      releaseLocal = await this.#local.acquire(name, bound.abandoned)
      let delay = this.#retryInitialDelayMs
      let taken = await this.#take(name, holder, key)
      while (taken === false) {
        await Promise.race([sleep(delay), bound.abandoned])
        delay = Math.min(delay * 2, this.#retryMaxDelayMs)
        taken = await this.#take(name, holder, key)
      }
      task = taken
    } catch (error) {
      releaseLocal?.()
      throw error
    } finally {
      bound.done()
    }
    const renewal = setInterval(() => { this.#renew(name, holder) }, Math.max(1, Math.floor(this.leaseMs / 3)))
    renewal.unref()
    let released: Promise<void> | undefined
    // Deleted by a statement of the turn's (TurnLease: its last save): nothing left to delete.
    let deleted = false
    const local = releaseLocal
    const release = async (): Promise<void> => {
      released ??= (async () => {
        clearInterval(renewal)
        try {
          if (!deleted) await this.#pool.query(RELEASE, [name, holder])
        } catch (error) {
          this.#logger.warn({ err: error, taskId: key.taskId }, 'task turn lock: release failed (the lease runs out by itself)')
        } finally {
          local()
        }
      })()
      await released
    }
    return Object.assign(release, { lease: { key: name, holder, deleted: () => { deleted = true }, task } })
  }

  /** False when another holder has the lease; else the task's row when the take read it (`taskOwner`). */
  async #take (name: string, holder: string, key: TaskTurnKey): Promise<TakenTaskRow | undefined | false> {
    try {
      if (this.#taskOwner === undefined) {
        const { rowCount } = await this.#pool.query(TAKE, [name, holder, this.leaseMs])
        return rowCount === 1 ? undefined : false
      }
      const owner = this.#taskOwner(key)
      const { rows: [taken] } = await this.#pool.query<TakeReading>(TAKE_READING, [name, holder, this.leaseMs, key.tenant, owner, key.taskId])
      if (!taken.taken) return false
      const row = taken.has_row
        ? { contextId: taken.task_context_id as string, status: taken.task_status, artifacts: taken.task_artifacts, history: taken.task_history, metadata: taken.task_metadata }
        : null
      return { key: taskKey(key.tenant, owner, key.taskId), row }
    } catch (error) {
      throw toStoreError(error)
    }
  }

  async #renew (name: string, holder: string): Promise<void> {
    try {
      await this.#pool.query(RENEW, [name, holder, this.leaseMs])
    } catch (error) {
      this.#logger.warn({ err: error }, 'task turn lock: lease renewal failed')
    }
  }
}

/** converse_take_task_turn's row. */
interface TakeReading {
  taken: boolean
  has_row: boolean
  task_context_id: string | null
  task_status: string | null
  task_artifacts: string | null
  task_history: string | null
  task_metadata: string | null
}

async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
