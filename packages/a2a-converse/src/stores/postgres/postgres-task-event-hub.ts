/**
 * TaskEventHub across instances, on PostgreSQL LISTEN/NOTIFY (no extra service). Every hub LISTENs on one channel
 * (per schema, so deployments or test runs sharing a database do not cross-talk) over its own dedicated
 * connection; `publish` NOTIFYs through the pool (notify-queue.ts: one statement at a time, the NOTIFYs asked for
 * meanwhile together in the next), and every hub on the database hands the event to its subscribers of that task. The publishing hub delivers to its own subscribers directly (in publish order) and
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
 * The listening connection is kept up by listen-connection.ts.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { InvalidOptionError } from '../../core/errors.js'
import type { TaskEventHub, TaskEventListener, TaskStreamEvent } from '../../events/task-event-hub.js'
import { TaskListeners } from '../../events/task-listeners.js'
import { SaveListeners } from '../task-save-signals.js'
import { toStoreError } from './connection-errors.js'
import { ListenConnection, listenTimings, type ListenTimings } from './listen-connection.js'
import { MAX_CHANNEL_LENGTH, MAX_NOTIFY_PAYLOAD_BYTES, parseEnvelope, READ_SPILLED, SPILL, taskEventChannel, type Channel } from './task-event-notifications.js'
import type { PostgresDatabase } from './postgres-database.js'
import type { PostgresSaveSignals } from './postgres-task-store.js'
import { integerOption } from '../../core/integer-option.js'
import { NotifyQueue } from './notify-queue.js'

export { MAX_NOTIFY_PAYLOAD_BYTES, TASK_EVENT_CHANNEL, taskEventChannel } from './task-event-notifications.js'

export interface PostgresTaskEventHubOptions extends ListenTimings {
  /** The NOTIFY channel. Default: `taskEventChannel(database.schema)`. Every instance of a service must use the same. */
  channel?: string
  /** How long a spilled (large) event is kept for the receivers to read. Default 60000 ms. */
  spillRetentionMs?: number
}

export class PostgresTaskEventHub implements TaskEventHub, PostgresSaveSignals {
  readonly channel: string
  readonly #pool: pg.Pool
  readonly #logger: PostgresDatabase['logger']
  readonly #spillRetentionMs: number
  readonly #connection: ListenConnection
  /** Tells this hub's notifications apart from the others'. */
  readonly #origin = randomUUID()
  readonly #listeners = new TaskListeners()
  readonly #agentListeners = new TaskListeners()
  readonly #saveListeners = new SaveListeners()
  readonly #pushListeners = new Set<() => void>()
  /** Other hubs' events, delivered in notification order (a spilled one is read before the next is delivered). */
  #delivery: Promise<void> = Promise.resolve()
  /** The NOTIFYs, one statement at a time (close waits for them: the pool may end right after). */
  readonly #notices: NotifyQueue
  #closed = false

  /** Starts listening at once (see `ready()`); shares the database's pool for publishing. */
  constructor (database: Pick<PostgresDatabase, 'pool' | 'clientConfig' | 'schema' | 'logger'>, options: PostgresTaskEventHubOptions = {}) {
    this.channel = options.channel ?? taskEventChannel(database.schema)
    if (this.channel === '' || Buffer.byteLength(this.channel) > MAX_CHANNEL_LENGTH) {
      throw new InvalidOptionError('channel', `must be 1 to ${MAX_CHANNEL_LENGTH} bytes long`)
    }
    const timings = listenTimings(options)
    this.#spillRetentionMs = integerOption('spillRetentionMs', options.spillRetentionMs, 60_000, 1)
    this.#pool = database.pool
    this.#notices = new NotifyQueue(database.pool, this.channel)
    this.#logger = database.logger
    this.#connection = new ListenConnection({
      clientConfig: database.clientConfig,
      channel: this.channel,
      logger: database.logger,
      ...timings,
      onNotification: (message) => { this.#onNotification(message) }
    })
  }

  /** True while the LISTEN connection is up. */
  get listening (): boolean {
    return this.#connection.listening
  }

  /** The server process of the LISTEN connection while it is up (diagnostics: `pg_stat_activity.pid`). */
  get backendPid (): number | undefined {
    return this.#connection.backendPid
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
    await this.#connection.ready()
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
    this.#notifyInBackground({ o: this.#origin, s: taskId }, { taskId: taskId.slice(0, 100) }, 'task event hub: could not signal a task save to the other instances')
  }

  /**
   * Push notifications were recorded by a save on this instance (its own outbox is woken by the store): every other
   * hub's `onPushRecorded` listeners wake, so their outboxes claim at once rather than at their next poll. Sent in
   * the background; a failure is logged (the others still poll). Only saves that recorded notifications send it.
   */
  pushRecorded (): void {
    this.#notifyInBackground({ o: this.#origin, p: 1 }, {}, 'task event hub: could not tell the other instances of recorded push notifications')
  }

  /** Called when another instance recorded push notifications (see pushRecorded). Returns the unsubscribe. */
  onPushRecorded (listener: () => void): () => void {
    this.#pushListeners.add(listener)
    return () => { this.#pushListeners.delete(listener) }
  }

  /** NOTIFYs `envelope` without waiting for it (close does); a failure is logged with `fields`. */
  #notifyInBackground (envelope: object, fields: object, failure: string): void {
    if (this.#closed) return
    const payload = JSON.stringify(envelope)
    const warn = (error: unknown): void => { this.#logger.warn({ err: error, ...fields, channel: this.channel }, failure) }
    if (Buffer.byteLength(payload) > MAX_NOTIFY_PAYLOAD_BYTES) warn(new Error('the task id is too long for a notification'))
    else this.#notices.notify(payload, true).catch(warn)
  }

  async #publish (channel: Channel, key: string, event: TaskStreamEvent): Promise<void> {
    if (this.#closed) return
    const eventJson = JSON.stringify(event)
    const payload = `{"o":${JSON.stringify(this.#origin)},"${channel}":${JSON.stringify(key)},"e":${eventJson}}`
    try {
      if (Buffer.byteLength(payload) <= MAX_NOTIFY_PAYLOAD_BYTES) {
        await this.#notices.notify(payload)
      } else {
        await this.#notices.spill({ text: SPILL, values: [key, eventJson, this.channel, this.#origin, this.#spillRetentionMs, channel] })
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
    this.#listeners.clear()
    this.#pushListeners.clear()
    this.#agentListeners.clear()
    await this.#connection.close()
    await this.#notices.idle()
    await this.#delivery
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
