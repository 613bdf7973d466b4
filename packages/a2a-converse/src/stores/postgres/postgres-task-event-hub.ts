/**
 * TaskEventHub across instances, on PostgreSQL LISTEN/NOTIFY (no extra service). Every hub LISTENs on one channel
 * (per schema, so deployments or test runs sharing a database do not cross-talk) over its own dedicated
 * connection; `publish` NOTIFYs through the pool, and every hub on the database hands the event to its
 * subscribers of that task. The publishing hub delivers to its own subscribers directly (in publish order) and
 * ignores its echo.
 *
 * The agent-level channel (conversation events) travels the same way, its notifications keyed by agent instead of
 * task.
 *
 * Task saves travel the same way too: PostgresTaskStore, given this hub, calls `saved(taskId)` once a save committed;
 * the hub wakes its own save listeners of that task (`onSaved`, packages/a2a-converse/src/stores/task-save-signals.ts) and NOTIFYs
 * `{"o":…,"s":<task id>}`, on which every other hub wakes its listeners of that task. One LISTEN connection serves
 * both. (Not from the save's statement: a NOTIFY holds PostgreSQL's notify lock through its transaction's commit, so
 * concurrent saves that NOTIFY would commit one at a time — docs/postgres.md has the figures.)
 *
 * NOTIFY payloads must stay under 8000 bytes: a bigger event is written to `converse_task_events` (its `task_id`
 * column holds the agent id for a conversation event) and only its id is notified; receivers read it back (rows older than `spillRetentionMs` are pruned by later spills).
 *
 * Delivery is at most once and only while connected: LISTEN/NOTIFY keeps nothing for a hub that is not listening.
 * The listening connection is re-opened with exponential backoff when it drops (server restart, terminated
 * backend) and checked every `healthCheckIntervalMs` (a connection the network silently lost stops answering).
 */
import { createHash, randomUUID } from 'node:crypto'
import type pg from 'pg'
import { pgDriver } from '../../peers/postgres.js'
import { InvalidOptionError } from '../../core/errors.js'
import type { TaskEventHub, TaskEventListener, TaskStreamEvent } from '../../events/task-event-hub.js'
import { TaskListeners } from '../../events/task-listeners.js'
import { SaveListeners } from '../task-save-signals.js'
import { toStoreError } from './connection-errors.js'
import { TASK_EVENTS_TABLE } from './migrations.js'
import type { PostgresDatabase } from './postgres-database.js'
import type { PostgresSaveSignals } from './postgres-task-store.js'

export interface PostgresTaskEventHubOptions {
  /** The NOTIFY channel. Default: `taskEventChannel(database.schema)`. Every instance of a service must use the same. */
  channel?: string
  /** First delay before re-opening a lost LISTEN connection; doubled per failed attempt. Default 100 ms. */
  reconnectInitialDelayMs?: number
  /** Cap of that delay. Default 5000 ms. */
  reconnectMaxDelayMs?: number
  /** How often the LISTEN connection is checked with `SELECT 1`; 0 disables. Default 30000 ms. */
  healthCheckIntervalMs?: number
  /** A check not answered within this drops and re-opens the connection. Default 5000 ms. */
  healthCheckTimeoutMs?: number
  /** How long a spilled (large) event is kept for the receivers to read. Default 60000 ms. */
  spillRetentionMs?: number
}

/** The channel of a database without a schema option. */
export const TASK_EVENT_CHANNEL = 'a2a_converse_task_events'
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more (default build). */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7999
/** Channel names are identifiers: at most 63 bytes. */
const MAX_CHANNEL_LENGTH = 63
/** How long `close()` waits for the LISTEN connection to end. */
const CLOSE_TIMEOUT_MS = 1000

/** `a2a_converse_task_events:<schema>` (a hash of the schema when that would be too long for a channel name). */
export function taskEventChannel (schema?: string): string {
  if (schema === undefined) return TASK_EVENT_CHANNEL
  const channel = `${TASK_EVENT_CHANNEL}:${schema}`
  if (channel.length <= MAX_CHANNEL_LENGTH) return channel
  return `${TASK_EVENT_CHANNEL}:${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`
}

/**
 * What travels in a notification: origin hub, the task (`t`) or the agent whose conversations it concerns (`a`),
 * and the event or the id of its spilled row; or, for a task save, origin and task (`s`) alone.
 */
interface Envelope {
  o: string
  t?: string
  a?: string
  e?: TaskStreamEvent
  r?: number
  s?: string
  /** Push notifications were recorded (packages/a2a-converse/src/stores/postgres/push-outbox.ts): the other instances' outboxes look now. */
  p?: 1
}

type Channel = 't' | 'a'

function parseEnvelope (payload: string | undefined): Envelope | undefined {
  try {
    const value = JSON.parse(String(payload)) as Partial<Envelope> | null
    if (typeof value === 'object' && value !== null && (typeof value.s === 'string' || value.p === 1)) return value as Envelope
    if (typeof value === 'object' && value !== null && (typeof value.t === 'string') !== (typeof value.a === 'string') &&
      ((typeof value.e === 'object' && value.e !== null) || typeof value.r === 'number')) return value as Envelope
  } catch {}
  return undefined
}

const SPILL = `with spilled as (
    insert into ${TASK_EVENTS_TABLE} (task_id, event) values ($1::text, $2) returning id
  ), pruned as (
    delete from ${TASK_EVENTS_TABLE} where created_at < now() - make_interval(secs => $5::double precision / 1000)
  )
  select pg_notify($3, json_build_object('o', $4::text, $6::text, $1::text, 'r', id)::text) from spilled`
const READ_SPILLED = `select event from ${TASK_EVENTS_TABLE} where id = $1`

function integerOption (name: string, value: number | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidOptionError(name, min === 0 ? 'must be a non-negative integer' : 'must be a positive integer')
  }
  return value
}

interface Waiter {
  resolve: () => void
  reject: (error: Error) => void
}

export class PostgresTaskEventHub implements TaskEventHub, PostgresSaveSignals {
  readonly channel: string
  readonly #pool: pg.Pool
  readonly #clientConfig: pg.ClientConfig
  readonly #logger: PostgresDatabase['logger']
  readonly #reconnectInitialDelayMs: number
  readonly #reconnectMaxDelayMs: number
  readonly #healthCheckIntervalMs: number
  readonly #healthCheckTimeoutMs: number
  readonly #spillRetentionMs: number
  /** Tells this hub's notifications apart from the others'. */
  readonly #origin = randomUUID()
  readonly #listeners = new TaskListeners()
  readonly #agentListeners = new TaskListeners()
  readonly #saveListeners = new SaveListeners()
  readonly #pushListeners = new Set<() => void>()
  /** The LISTEN connection, connecting or connected; undefined while waiting to reconnect and once closed. */
  #client: pg.Client | undefined
  #listening = false
  #backendPid: number | undefined
  #failedAttempts = 0
  #reconnectTimer: NodeJS.Timeout | undefined
  #healthTimer: NodeJS.Timeout | undefined
  /** Other hubs' events, delivered in notification order (a spilled one is read before the next is delivered). */
  #delivery: Promise<void> = Promise.resolve()
  #waiters: Waiter[] = []
  /** Save NOTIFYs on their way (close waits for them: the pool may end right after). */
  readonly #sendingSaves = new Set<Promise<void>>()
  #closed = false

  /** Starts listening at once (see `ready()`); shares the database's pool for publishing. */
  constructor (database: Pick<PostgresDatabase, 'pool' | 'clientConfig' | 'schema' | 'logger'>, options: PostgresTaskEventHubOptions = {}) {
    this.channel = options.channel ?? taskEventChannel(database.schema)
    if (this.channel === '' || Buffer.byteLength(this.channel) > MAX_CHANNEL_LENGTH) {
      throw new InvalidOptionError('channel', `must be 1 to ${MAX_CHANNEL_LENGTH} bytes long`)
    }
    this.#reconnectInitialDelayMs = integerOption('reconnectInitialDelayMs', options.reconnectInitialDelayMs, 100, 1)
    this.#reconnectMaxDelayMs = integerOption('reconnectMaxDelayMs', options.reconnectMaxDelayMs, 5000, 1)
    this.#healthCheckIntervalMs = integerOption('healthCheckIntervalMs', options.healthCheckIntervalMs, 30_000)
    this.#healthCheckTimeoutMs = integerOption('healthCheckTimeoutMs', options.healthCheckTimeoutMs, 5000, 1)
    this.#spillRetentionMs = integerOption('spillRetentionMs', options.spillRetentionMs, 60_000, 1)
    this.#pool = database.pool
    // One query at a time on this connection: nothing to pipeline.
    this.#clientConfig = { ...database.clientConfig, pipeline: false }
    this.#logger = database.logger
    this.#connect()
  }

  /** True while the LISTEN connection is up. */
  get listening (): boolean {
    return this.#listening
  }

  /** The server process of the LISTEN connection while it is up (diagnostics: `pg_stat_activity.pid`). */
  get backendPid (): number | undefined {
    return this.#backendPid
  }

  /** How many tasks have subscribers here (for tests and metrics). */
  get size (): number {
    return this.#listeners.size
  }

  /** How many tasks have save listeners here (for tests: 0 once every wait ended). */
  get saveListeners (): number {
    return this.#saveListeners.size
  }

  /** Resolves once the hub is listening (at once when it is); rejects when the hub is closed first. */
  async ready (): Promise<void> {
    if (this.#listening) return
    if (this.#closed) throw new Error('the task event hub is closed')
    await new Promise<void>((resolve, reject) => { this.#waiters.push({ resolve, reject }) })
  }

  /**
   * NOTIFYs every hub on the channel (this one's subscribers get the event directly, once the NOTIFY is sent).
   * Rejects with StoreUnavailableError when the database is unreachable; resolves without doing anything once
   * the hub is closed (as the memory hub does).
   */
  async publish (taskId: string, event: TaskStreamEvent): Promise<void> {
    await this.#publish('t', taskId, event)
  }

  subscribe (taskId: string, listener: TaskEventListener): () => void {
    if (this.#closed) return () => {}
    return this.#listeners.add(taskId, listener)
  }

  /** As `publish`, on the agent-level channel. */
  async publishConversation (agentId: string, event: TaskStreamEvent): Promise<void> {
    await this.#publish('a', agentId, event)
  }

  subscribeConversations (agentId: string, listener: TaskEventListener): () => void {
    if (this.#closed) return () => {}
    return this.#agentListeners.add(agentId, listener)
  }

  onSaved (taskId: string, listener: () => void): () => void {
    return this.#saveListeners.onSaved(taskId, listener)
  }

  /**
   * A save on this instance committed: its listeners here wake at once; every other hub's wake on a NOTIFY sent in
   * the background (the save does not wait for it; the echo is ignored). When that NOTIFY fails (or the id is too
   * long for a payload), it is logged and readers elsewhere wait for their bound instead; the save itself is done.
   */
  saved (taskId: string): void {
    this.#saveListeners.saved(taskId)
    if (this.#closed) return
    const sending = this.#notifySaved(taskId)
    this.#sendingSaves.add(sending)
    sending.finally(() => { this.#sendingSaves.delete(sending) })
  }

  /**
   * Push notifications were recorded by a save on this instance (its own outbox is woken by the store): every other
   * hub's `onPushRecorded` listeners wake, so their outboxes claim at once rather than at their next poll. Sent in
   * the background; a failure is logged (the others still poll). Only saves that recorded notifications send it.
   */
  pushRecorded (): void {
    if (this.#closed) return
    const sending = this.#pool.query('select pg_notify($1, $2)', [this.channel, JSON.stringify({ o: this.#origin, p: 1 })]).then(() => {}, (error: unknown) => {
      this.#logger.warn({ err: error, channel: this.channel }, 'task event hub: could not tell the other instances of recorded push notifications')
    })
    this.#sendingSaves.add(sending)
    sending.finally(() => { this.#sendingSaves.delete(sending) })
  }

  /** Called when another instance recorded push notifications (see pushRecorded). Returns the unsubscribe. */
  onPushRecorded (listener: () => void): () => void {
    this.#pushListeners.add(listener)
    return () => { this.#pushListeners.delete(listener) }
  }

  async #notifySaved (taskId: string): Promise<void> {
    const payload = JSON.stringify({ o: this.#origin, s: taskId })
    try {
      if (Buffer.byteLength(payload) > MAX_NOTIFY_PAYLOAD_BYTES) throw new Error('the task id is too long for a notification')
      await this.#pool.query('select pg_notify($1, $2)', [this.channel, payload])
    } catch (error) {
      this.#logger.warn({ err: error, taskId: taskId.slice(0, 100), channel: this.channel }, 'task event hub: could not signal a task save to the other instances')
    }
  }

  async #publish (channel: Channel, key: string, event: TaskStreamEvent): Promise<void> {
    if (this.#closed) return
    const eventJson = JSON.stringify(event)
    const payload = `{"o":${JSON.stringify(this.#origin)},"${channel}":${JSON.stringify(key)},"e":${eventJson}}`
    try {
      if (Buffer.byteLength(payload) <= MAX_NOTIFY_PAYLOAD_BYTES) {
        await this.#pool.query('select pg_notify($1, $2)', [this.channel, payload])
      } else {
        await this.#pool.query(SPILL, [key, eventJson, this.channel, this.#origin, this.#spillRetentionMs, channel])
      }
    } catch (error) {
      throw toStoreError(error)
    }
    this.#deliver(channel, key, event)
  }

  /** Ends the LISTEN connection and the timers, drops the subscribers. Idempotent. The pool stays open. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    clearTimeout(this.#healthTimer)
    this.#listeners.clear()
    this.#pushListeners.clear()
    this.#agentListeners.clear()
    this.#listening = false
    this.#backendPid = undefined
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error('the task event hub is closed'))
    const client = this.#client
    this.#client = undefined
    if (client !== undefined) await endClient(client)
    await Promise.all(this.#sendingSaves)
    await this.#delivery
  }

  async #connect (): Promise<void> {
    this.#reconnectTimer = undefined
    const client = new pgDriver.Client(this.#clientConfig)
    this.#client = client
    client.on('notification', (message) => { this.#onNotification(message) })
    // Stays attached for the client's whole life: an 'error' without a listener would crash the process.
    client.on('error', (error) => { this.#lost(client, error) })
    client.on('end', () => { this.#lost(client, new Error('the LISTEN connection ended')) })
    let pid: number
    try {
      await client.connect()
      await client.query(`listen ${pgDriver.escapeIdentifier(this.channel)}`)
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
    const delayMs = Math.min(this.#reconnectMaxDelayMs, this.#reconnectInitialDelayMs * 2 ** this.#failedAttempts)
    this.#failedAttempts++
    this.#logger.warn({ err: error, channel: this.channel, delayMs }, 'task event hub: the LISTEN connection is down; reconnecting')
    this.#reconnectTimer = setTimeout(() => { this.#connect() }, delayMs)
  }

  /** The next check of the connection, unless checks are off or the connection is no longer the hub's. */
  #scheduleHealthCheck (client: pg.Client): void {
    if (this.#healthCheckIntervalMs === 0 || this.#client !== client) return
    this.#healthTimer = setTimeout(() => { this.#checkHealth(client) }, this.#healthCheckIntervalMs)
  }

  async #checkHealth (client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(reject, this.#healthCheckTimeoutMs, new Error(`the LISTEN connection did not answer within ${this.#healthCheckTimeoutMs} ms`))
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

  #onNotification (message: pg.Notification): void {
    const envelope = parseEnvelope(message.payload)
    if (envelope === undefined) {
      this.#logger.warn({ channel: message.channel }, 'task event hub: ignored a notification that is not a task event')
      return
    }
    if (envelope.p !== undefined) {
      if (envelope.o !== this.#origin) for (const listener of this.#pushListeners) listener()
      return
    }
    if (envelope.s !== undefined) {
      if (envelope.o !== this.#origin) this.#saveListeners.saved(envelope.s)
      return
    }
    const channel: Channel = envelope.t !== undefined ? 't' : 'a'
    const key = (envelope.t ?? envelope.a) as string
    // Our own publish delivered it already; nobody here follows the task (agent): nothing to do (not even a read).
    if (envelope.o === this.#origin || !this.#listenersOf(channel).has(key)) return
    this.#delivery = this.#delivery.then(async () => {
      const event = envelope.e ?? await this.#readSpilled(envelope.r as number)
      if (event !== undefined) this.#deliver(channel, key, event)
    })
  }

  #listenersOf (channel: Channel): TaskListeners {
    return channel === 't' ? this.#listeners : this.#agentListeners
  }

  async #readSpilled (id: number): Promise<TaskStreamEvent | undefined> {
    try {
      const { rows } = await this.#pool.query<{ event: string }>(READ_SPILLED, [id])
      if (rows.length === 0) throw new Error(`spilled event ${id} is gone (older than the retention?)`)
      return JSON.parse(rows[0].event) as TaskStreamEvent
    } catch (error) {
      this.#logger.warn({ err: error, channel: this.channel }, 'task event hub: could not read a spilled task event')
      return undefined
    }
  }

  /** Calls the task's (agent's) listeners in subscription order; a throwing listener is logged and does not stop the others. */
  #deliver (channel: Channel, key: string, event: TaskStreamEvent): void {
    this.#listenersOf(channel).deliver(key, event, (error) => {
      this.#logger.warn({ err: error, [channel === 't' ? 'taskId' : 'agentId']: key }, 'task event hub: a listener threw')
    })
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
