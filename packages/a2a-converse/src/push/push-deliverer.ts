/**
 * Delivers notifications to webhooks: one queue per task and config, so the notifications of a task reach each
 * webhook in the order of the saves that recorded them, while every other queue goes on (a slow or dead webhook holds
 * only its own queue; a turn never waits for a delivery: queueing is synchronous, posting is not).
 *
 * A notification is tried until delivered, refused (another 4xx, a 3xx: redirects are not followed, a URL or address
 * the policy refuses) or out of attempts or time (retry-schedule.ts); a give-up is logged with the task id and the
 * webhook's host (never the token or the URL's path) and counted. Each notification has an id (the
 * A2A-Notification-Id header), the same on every attempt.
 *
 * In-process (STATE=memory and library doors): what is queued is lost when the process ends. The PostgreSQL outbox
 * (packages/a2a-converse/src/stores/postgres/push-outbox.ts) delivers through the same `deliverOnce`.
 */
import { randomUUID } from 'node:crypto'
import type { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { DEFAULT_RETRY_SETTINGS, nextStep, type RetrySettings } from './retry-schedule.js'
import type { PostOutcome, WebhookPoster } from './webhook-post.js'
import type { Context } from '../telemetry/tracing.js'

type Json = Record<string, unknown>

export interface PushLogger {
  warn (object: object, message: string): void
}

/** Shapes a notification for its config: the converse envelope when the config's request activated it, else none. */
export type PresentNotification = (agentId: string, event: Json, converse: boolean) => Promise<Json> | Json

export interface Notification {
  /** The delivery id (A2A-Notification-Id). */
  id: string
  agentId: string
  taskId: string
  config: Pick<TaskPushNotificationConfig, 'id' | 'url' | 'token' | 'authentication'>
  converse: boolean
  /** The StreamResponse (ProtoJSON) before presentation. */
  event: Json
  /** When the update was recorded (ms). */
  recordedAt: number
  /** The trace context of the turn that recorded it, which its POSTs continue (the outbox keeps it as `traceparent`). */
  traceContext?: Context
}

export interface PushStats {
  delivered: number
  retried: number
  gaveUp: number
}

export interface DeliveryOptions {
  poster: WebhookPoster
  retry?: Partial<RetrySettings>
  present?: PresentNotification
  log?: PushLogger
  /** Notifications waiting per queue (task and config) at most; past it the oldest waiting is given up (logged). */
  maxQueued?: number
}

export const DEFAULT_MAX_QUEUED = 1000

/* c8 ignore next -- #run never rejects (each attempt's failure is an outcome); the handler only rules out an unhandled rejection */
function noop (): void {}

/** The host of a webhook URL, for logs (never its path, query or credentials). */
export function webhookHost (url: string): string {
  try {
    return new URL(url).host
  } catch {
    return '(unreadable url)'
  }
}

/** One attempt: presentation, then the POST. */
export async function deliverOnce (notification: Notification, poster: WebhookPoster, present: PresentNotification | undefined): Promise<PostOutcome> {
  let event = notification.event
  if (present !== undefined) event = await present(notification.agentId, event, notification.converse)
  return await poster.post(notification.config, JSON.stringify(event), notification.id, notification.traceContext)
}

export function logGiveUp (log: PushLogger | undefined, notification: Pick<Notification, 'taskId' | 'id' | 'config'>, reason: string, attempts: number): void {
  log?.warn({ taskId: notification.taskId, notificationId: notification.id, webhookHost: webhookHost(notification.config.url), attempts, reason },
    'push notification given up')
}

interface Queue {
  waiting: Notification[]
  running: boolean
}

export class PushDeliverer {
  readonly stats: PushStats = { delivered: 0, retried: 0, gaveUp: 0 }
  readonly #poster: WebhookPoster
  readonly #retry: RetrySettings
  readonly #present: PresentNotification | undefined
  readonly #log: PushLogger | undefined
  readonly #maxQueued: number
  readonly #queues = new Map<string, Queue>()
  readonly #timers = new Set<{ timer: NodeJS.Timeout, wake: () => void }>()
  #closed = false
  readonly #idle = new Set<() => void>()

  constructor (options: DeliveryOptions) {
    this.#poster = options.poster
    this.#retry = { ...DEFAULT_RETRY_SETTINGS, ...options.retry }
    this.#present = options.present
    this.#log = options.log
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED
  }

  /** Notifications not yet delivered or given up (tests, metrics). */
  get pending (): number {
    let pending = 0
    for (const queue of this.#queues.values()) pending += queue.waiting.length
    return pending
  }

  /** Queues a notification of `event` for each config; returns at once. `traceContext`: the turn's (its POSTs' parent). */
  enqueue (
    agentId: string, taskId: string, configs: ReadonlyArray<{ config: Notification['config'], converse: boolean }>, events: readonly Json[], traceContext?: Context
  ): void {
    if (this.#closed) return
    const recordedAt = Date.now()
    for (const { config, converse } of configs) {
      const key = JSON.stringify([agentId, taskId, config.id])
      let queue = this.#queues.get(key)
      if (queue === undefined) this.#queues.set(key, queue = { waiting: [], running: false })
      for (const event of events) {
        queue.waiting.push({ id: randomUUID(), agentId, taskId, config, converse, event, recordedAt, traceContext })
        if (queue.waiting.length > this.#maxQueued) {
          // The oldest waiting one (not the one being posted now, which is first while running).
          const dropped = queue.waiting.splice(queue.running ? 1 : 0, 1)[0]
          this.stats.gaveUp++
          logGiveUp(this.#log, dropped, `more than ${this.#maxQueued} notifications waiting for this webhook`, 0)
        }
      }
      if (!queue.running) this.#run(key, queue).then(undefined, noop)
    }
  }

  /** Resolves when nothing is queued (tests). */
  async idle (): Promise<void> {
    if (this.#queues.size === 0) return
    await new Promise<void>((resolve) => this.#idle.add(resolve))
  }

  async #run (key: string, queue: Queue): Promise<void> {
    queue.running = true
    while (queue.waiting.length > 0 && !this.#closed) {
      const notification = queue.waiting[0]
      await this.#deliver(notification)
      queue.waiting.shift()
    }
    queue.running = false
    this.#queues.delete(key)
    if (this.#queues.size > 0) return
    for (const resolve of this.#idle) resolve()
    this.#idle.clear()
  }

  async #deliver (notification: Notification): Promise<void> {
    for (let attempt = 1; !this.#closed; attempt++) {
      let outcome: PostOutcome
      try {
        outcome = await deliverOnce(notification, this.#poster, this.#present)
      } catch (error) {
        outcome = { kind: 'refused', reason: `the notification could not be built: ${(error as Error).message}` }
      }
      const step = nextStep(outcome, attempt, notification.recordedAt, Date.now(), this.#retry)
      if (step.kind === 'done') {
        this.stats.delivered++
        return
      }
      if (step.kind === 'give-up') {
        this.stats.gaveUp++
        logGiveUp(this.#log, notification, step.reason, attempt)
        return
      }
      this.stats.retried++
      await this.#sleep(step.atMs - Date.now())
    }
  }

  async #sleep (ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => { this.#timers.delete(entry); resolve() }, Math.max(0, ms)), wake: resolve }
      this.#timers.add(entry)
    })
  }

  /** Stops: nothing more is posted; what is queued is dropped (in-process delivery does not survive the process). */
  async close (): Promise<void> {
    this.#closed = true
    for (const entry of this.#timers) {
      clearTimeout(entry.timer)
      entry.wake()
    }
    this.#timers.clear()
    await this.#poster.close()
  }
}
