/**
 * The task event hub's dedicated LISTEN connection (postgres-task-event-hub.ts): opened at once, re-opened with
 * exponential backoff when it drops (server restart, terminated backend), and checked every `healthCheckIntervalMs`
 * (a connection the network silently lost stops answering). Apart from the hub because keeping one connection alive
 * is a job of its own; the hub only hears the notifications it hands on.
 */
import type pg from 'pg'
import { integerOption } from '../../core/integer-option.js'
import { pgDriver } from '../../peers/postgres.js'
import type { PostgresDatabase } from './postgres-database.js'

/** How long `close()` waits for the LISTEN connection to end. */
const CLOSE_TIMEOUT_MS = 1000

export interface ListenTimings {
  /** First delay before re-opening a lost LISTEN connection; doubled per failed attempt. Default 100 ms. */
  reconnectInitialDelayMs?: number
  /** Cap of that delay. Default 5000 ms. */
  reconnectMaxDelayMs?: number
  /** How often the LISTEN connection is checked with `SELECT 1`; 0 disables. Default 30000 ms. */
  healthCheckIntervalMs?: number
  /** A check not answered within this drops and re-opens the connection. Default 5000 ms. */
  healthCheckTimeoutMs?: number
}

/** The timings given, checked, with their defaults. */
export function listenTimings (options: ListenTimings): Required<ListenTimings> {
  return {
    reconnectInitialDelayMs: integerOption('reconnectInitialDelayMs', options.reconnectInitialDelayMs, 100),
    reconnectMaxDelayMs: integerOption('reconnectMaxDelayMs', options.reconnectMaxDelayMs, 5000),
    healthCheckIntervalMs: integerOption('healthCheckIntervalMs', options.healthCheckIntervalMs, 30_000, 0),
    healthCheckTimeoutMs: integerOption('healthCheckTimeoutMs', options.healthCheckTimeoutMs, 5000)
  }
}

export interface ListenConnectionOptions extends Required<ListenTimings> {
  clientConfig: pg.ClientConfig
  channel: string
  logger: PostgresDatabase['logger']
  onNotification: (message: pg.Notification) => void
}

interface Waiter {
  resolve: () => void
  reject: (error: Error) => void
}

export class ListenConnection {
  readonly #options: ListenConnectionOptions
  /** The LISTEN connection, connecting or connected; undefined while waiting to reconnect and once closed. */
  #client: pg.Client | undefined
  #listening = false
  #backendPid: number | undefined
  #failedAttempts = 0
  #reconnectTimer: NodeJS.Timeout | undefined
  #healthTimer: NodeJS.Timeout | undefined
  #waiters: Waiter[] = []
  #closed = false

  constructor (options: ListenConnectionOptions) {
    // One query at a time on this connection: nothing to pipeline.
    this.#options = { ...options, clientConfig: { ...options.clientConfig, pipeline: false } as pg.ClientConfig }
    this.#connect()
  }

  /** True while the connection is up. */
  get listening (): boolean {
    return this.#listening
  }

  /** The server process of the connection while it is up. */
  get backendPid (): number | undefined {
    return this.#backendPid
  }

  /** Resolves once listening (at once when it is); rejects when closed first. */
  async ready (): Promise<void> {
    if (this.#listening) return
    if (this.#closed) throw new Error('the task event hub is closed')
    await new Promise<void>((resolve, reject) => { this.#waiters.push({ resolve, reject }) })
  }

  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    clearTimeout(this.#healthTimer)
    this.#listening = false
    this.#backendPid = undefined
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error('the task event hub is closed'))
    const client = this.#client
    this.#client = undefined
    if (client !== undefined) await endClient(client)
  }

  async #connect (): Promise<void> {
    this.#reconnectTimer = undefined
    const client = new pgDriver.Client(this.#options.clientConfig)
    this.#client = client
    client.on('notification', (message) => { this.#options.onNotification(message) })
    // Stays attached for the client's whole life: an 'error' without a listener would crash the process.
    client.on('error', (error) => { this.#lost(client, error) })
    client.on('end', () => { this.#lost(client, new Error('the LISTEN connection ended')) })
    let pid: number
    try {
      await client.connect()
      await client.query(`listen ${pgDriver.escapeIdentifier(this.#options.channel)}`)
      pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid
    } catch (error) {
      this.#lost(client, error)
      return
    }
    // Closed, or lost and replaced, while connecting: that path already took care of this client.
    if (this.#client !== client) return
    this.#listening = true
    this.#backendPid = pid
    this.#failedAttempts = 0
    for (const waiter of this.#waiters.splice(0)) waiter.resolve()
    this.#scheduleHealthCheck(client)
  }

  /** The LISTEN connection failed or ended: drop it and try again later (doubling the delay up to the cap). */
  #lost (client: pg.Client, error: unknown): void {
    if (client !== this.#client) return
    this.#client = undefined
    this.#listening = false
    this.#backendPid = undefined
    clearTimeout(this.#healthTimer)
    endClient(client)
    const delayMs = Math.min(this.#options.reconnectMaxDelayMs, this.#options.reconnectInitialDelayMs * 2 ** this.#failedAttempts)
    this.#failedAttempts++
    this.#options.logger.warn({ err: error, channel: this.#options.channel, delayMs }, 'task event hub: the LISTEN connection is down; reconnecting')
    this.#reconnectTimer = setTimeout(() => { this.#connect() }, delayMs)
  }

  /** The next check of the connection, unless checks are off or the connection is no longer the hub's. */
  #scheduleHealthCheck (client: pg.Client): void {
    if (this.#options.healthCheckIntervalMs === 0 || this.#client !== client) return
    this.#healthTimer = setTimeout(() => { this.#checkHealth(client) }, this.#options.healthCheckIntervalMs)
  }

  async #checkHealth (client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(reject, this.#options.healthCheckTimeoutMs, new Error(`the LISTEN connection did not answer within ${this.#options.healthCheckTimeoutMs} ms`))
    })
    try {
      await Promise.race([client.query('select 1'), timedOut])
    } catch (error) {
      this.#lost(client, error)
      return
    } finally {
      clearTimeout(timer)
    }
    this.#scheduleHealthCheck(client)
  }
}

/** Ends a client without waiting more than CLOSE_TIMEOUT_MS (a peer that stopped answering never confirms). */
async function endClient (client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    client.end().catch(() => {}),
    new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS) })
  ])
  clearTimeout(timer)
}
