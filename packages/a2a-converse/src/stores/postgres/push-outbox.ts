/**
 * The push-notification outbox on PostgreSQL (and the embedded database): a notification is a row written in the
 * same transaction as the task save it reports (PostgresTaskStore with `push`), so a save that committed has its
 * notifications recorded, whatever happens to the instance next; any instance on the database delivers them.
 *
 * Claiming: a row is claimable when it is due, not under a live lease, and no earlier row of its task and config is
 * left (the queue index): so a task's notifications reach each webhook in order, across instances, one at a time.
 * A claim takes the row `FOR UPDATE SKIP LOCKED` and leases it (`claimed_until`: an attempt's timeout and a margin);
 * the attempt counter goes up at the claim. Delivered or given up: the row is deleted. To be retried: its next
 * attempt's time is written and the lease dropped. An instance killed mid-attempt leaves a lease that runs out; then
 * any instance claims the row again (at least once: the receiver drops a duplicate by its A2A-Notification-Id).
 *
 * The rows are written in the task save's own statement (converse_save_task, task-store-functions.ts);
 * test/fixtures/push-outbox-rows.ts writes such rows from a test.
 *
 * Waking: the instance that committed a save wakes its own deliverer at once (`wake`), and on PostgreSQL tells the
 * others over the task event hub's LISTEN/NOTIFY (src/gateway/postgres-state.ts), which wake theirs; every instance
 * also polls every `pollMs` (PUSH_POLL_MS: a NOTIFY missed while its LISTEN connection was down) and when a retry
 * falls due.
 */
import type { Kysely } from 'kysely'
import { sql } from '../../peers/postgres.js'
import { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { deliverOnce, logGiveUp, type Notification, type PresentNotification, type PushLogger, type PushStats } from '../../push/push-deliverer.js'
import { DEFAULT_RETRY_SETTINGS, nextStep, type RetrySettings } from '../../push/retry-schedule.js'
import type { PostOutcome, WebhookPoster } from '../../push/webhook-post.js'
import { PUSH_OUTBOX_TABLE } from './migrations.js'
import { extractTraceContext } from '../../telemetry/tracing.js'
import { openWith, type SecretBox } from '../secret-box.js'

type Json = Record<string, unknown>

export interface PostgresPushOutboxOptions {
  poster: WebhookPoster
  retry?: Partial<RetrySettings>
  present?: PresentNotification
  log?: PushLogger
  /** Attempts running at once at most on this instance. Default 32. */
  maxInFlight?: number
  /** How often other instances' rows are looked for. Default 1000 ms. */
  pollMs?: number
  /** Opens the rows' targets (the configs as stored: sealed with the same keys). */
  secrets?: SecretBox
}

interface OutboxRow {
  seq: string
  agent_id: string
  task_id: string
  config_id: string
  target: string
  converse: boolean
  event: string
  notification_id: string
  recorded_at: Date | string
  attempts: number
  traceparent: string | null
  tracestate: string | null
}

export class PostgresPushOutbox {
  readonly stats: PushStats = { delivered: 0, retried: 0, gaveUp: 0 }
  readonly #db: Kysely<any>
  readonly #poster: WebhookPoster
  readonly #retry: RetrySettings
  readonly #present: PresentNotification | undefined
  readonly #log: PushLogger | undefined
  readonly #maxInFlight: number
  readonly #pollMs: number
  readonly #leaseMs: number
  readonly #secrets: SecretBox | undefined
  #inFlight = 0
  #pumping = false
  /** The claim loop running (or the last one): close waits for it, so no attempt starts after. */
  #pumped: Promise<void> = Promise.resolve()
  #again = false
  #timer: NodeJS.Timeout | undefined
  /** When the timer fires (ms): a later wish never pushes an earlier wake back. */
  #timerAt = Infinity
  #closed = false
  readonly #running = new Set<Promise<void>>()

  constructor (db: Kysely<any>, options: PostgresPushOutboxOptions) {
    this.#db = db
    this.#poster = options.poster
    this.#retry = { ...DEFAULT_RETRY_SETTINGS, ...options.retry }
    this.#present = options.present
    this.#log = options.log
    this.#maxInFlight = options.maxInFlight ?? 32
    this.#pollMs = options.pollMs ?? 1000
    this.#secrets = options.secrets
    // An attempt's whole time, plus room for the row's own update.
    this.#leaseMs = this.#retry.timeoutMs + 5000
  }

  /** Starts delivering (claims what is due now, then polls). */
  start (): void {
    this.wake()
  }

  /** Looks for due rows now (a save on this instance committed some). */
  wake (): void {
    if (this.#closed) return
    if (this.#pumping) {
      this.#again = true
      return
    }
    this.#pumping = true
    this.#pumped = this.#pump().then(undefined, (error: unknown) => {
      this.#log?.warn({ err: error }, 'push outbox: claiming notifications failed; trying again at the next poll')
    }).finally(() => {
      this.#pumping = false
      if (this.#again) {
        this.#again = false
        this.wake()
      } else {
        this.#schedule(this.#pollMs)
      }
    })
  }

  #schedule (ms: number): void {
    const at = Date.now() + ms
    if (this.#closed || at >= this.#timerAt) return
    clearTimeout(this.#timer)
    this.#timerAt = at
    this.#timer = setTimeout(() => {
      this.#timerAt = Infinity
      this.wake()
    }, ms)
    this.#timer.unref()
  }

  async #pump (): Promise<void> {
    while (!this.#closed && this.#inFlight < this.#maxInFlight) {
      const rows = await this.#claim(this.#maxInFlight - this.#inFlight)
      // Closed while claiming: no attempt starts on a database about to close (the leases run out; any instance,
      // this one restarted included, claims the rows again).
      if (rows.length === 0 || this.#closed) return
      for (const row of rows) {
        this.#inFlight++
        const running = this.#attempt(row).finally(() => {
          this.#inFlight--
          this.#running.delete(running)
          this.wake()
        })
        this.#running.add(running)
      }
    }
  }

  /** Due heads of their queues, leased to this instance. */
  async #claim (limit: number): Promise<OutboxRow[]> {
    const table = sql.table(PUSH_OUTBOX_TABLE)
    const { rows } = await sql<OutboxRow>`
      with due as (
        select o.seq from ${table} o
        where o.next_attempt_at <= now() and (o.claimed_until is null or o.claimed_until < now())
          and not exists (select 1 from ${table} p where p.tenant = o.tenant and p.owner = o.owner and p.task_id = o.task_id
            and p.config_id = o.config_id and p.seq < o.seq)
        order by o.seq limit ${limit}
        for update skip locked
      )
      update ${table} o set claimed_until = now() + ${`${this.#leaseMs} milliseconds`}::interval, attempts = o.attempts + 1
      from due where o.seq = due.seq
      returning o.seq, o.agent_id, o.task_id, o.config_id, o.target, o.converse, o.event, o.notification_id, o.recorded_at, o.attempts,
        o.traceparent, o.tracestate`.execute(this.#db)
    return rows
  }

  async #attempt (row: OutboxRow): Promise<void> {
    let target: string
    try {
      target = openWith(this.#secrets, row.target)
    } catch (error) {
      // Sealed with a key this instance was not given (instances with different SECRETS_KEYs): the row stays leased
      // until its lease runs out, for an instance that holds the key.
      this.#log?.warn({ taskId: row.task_id, notificationId: row.notification_id, reason: (error as Error).message },
        'push notification not delivered from this instance: its webhook config cannot be opened (SECRETS_KEY, SECRETS_KEY_PREVIOUS)')
      return
    }
    const notification: Notification = {
      id: row.notification_id,
      agentId: row.agent_id,
      taskId: row.task_id,
      config: TaskPushNotificationConfig.fromJSON(JSON.parse(target)),
      converse: row.converse,
      event: JSON.parse(row.event) as Json,
      recordedAt: new Date(row.recorded_at).getTime(),
      traceContext: row.traceparent === null ? undefined : extractTraceContext({ traceparent: row.traceparent, tracestate: row.tracestate ?? undefined })
    }
    let outcome: PostOutcome
    try {
      outcome = await deliverOnce(notification, this.#poster, this.#present)
    } catch (error) {
      outcome = { kind: 'refused', reason: `the notification could not be built: ${(error as Error).message}` }
    }
    const step = nextStep(outcome, row.attempts, notification.recordedAt, Date.now(), this.#retry)
    const table = sql.table(PUSH_OUTBOX_TABLE)
    if (step.kind === 'retry') {
      this.stats.retried++
      await sql`update ${table} set next_attempt_at = ${new Date(step.atMs).toISOString()}::timestamptz, claimed_until = null
        where seq = ${row.seq}`.execute(this.#db)
      this.#schedule(Math.min(this.#pollMs, Math.max(0, step.atMs - Date.now())))
      return
    }
    if (step.kind === 'done') this.stats.delivered++
    else {
      this.stats.gaveUp++
      logGiveUp(this.#log, notification, step.reason, row.attempts)
    }
    await sql`delete from ${table} where seq = ${row.seq}`.execute(this.#db)
  }

  /** Stops claiming; waits for the attempts running (their rows are then deleted or rescheduled). The poster is the caller's. */
  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#pumped
    await Promise.allSettled([...this.#running])
  }
}
