/**
 * ConversationStore on PostgreSQL: one row per conversation (state as JSONB), shared by every instance on the
 * database. `update` is a transaction holding the conversation's row lock (`SELECT … FOR UPDATE`), so updates of
 * one conversation serialise across processes and none is lost; in front of it, a per-conversation promise chain
 * in each process (as in the memory store) keeps one process's updates in call order and keeps them from tying up
 * several pool connections waiting on the same row. A conversation this process has not seen lately is first tried
 * as new: `fn(undefined)` written by one autocommit `INSERT … ON CONFLICT DO NOTHING` (one round trip); when the row
 * exists (another instance made it), the locked path runs `fn` again on the real state. Tables: see migrations.ts
 * and docs/postgres.md. The answers a write adds (answer-log.ts) go into the answer log in the statement that writes
 * the conversation: postgres-answer-log.ts. The writes' paths are conversation-writes.ts, their SQL
 * conversation-statements.ts, the connections' handling conversation-connections.ts, and what the store remembers
 * of the conversations it used lately remembered-conversations.ts.
 */
import type pg from 'pg'
import {
  DEFAULT_CONVERSATION_LIMITS, ConversationStoreClosedError, assertListOptions, type ConversationGetOptions, type ConversationLimits,
  type ConversationListOptions, type ConversationState, type ConversationStore, type ConversationSummary, type ConversationUpdate,
  type ConversationUpdateOptions
} from '../conversation-store.js'
import { DEFAULT_MAX_CONVERSATIONS_PER_CALLER } from '../memory-conversation-store.js'
import { KeyedLock } from '../keyed-lock.js'
import { DEFAULT_ANSWER_RETENTION_MS, DEFAULT_MAX_ANSWERS_PER_AGENT, type AnswerLogLimits } from '../answer-log.js'
import { query } from './conversation-connections.js'
import { DELETE, SELECT_EXISTS, SELECT_LIST, SELECT_STATE, SELECT_TASK, listSummary, prepared, type ListRow } from './conversation-statements.js'
import { NewConversationInserts } from './new-conversation-inserts.js'
import {
  STALE, insertNew, insertNewJoined, lockedWrite, planNew, planOnRead, writeIfUnchanged, writeIfUnchangedJoined, type PlannedWrite,
  type WriteContext
} from './conversation-writes.js'
import { JoinedConversationWrites, type JoinedRun } from './joined-conversation-writes.js'
import { reservePending, takePendingReservation } from '../deferred-task-saves.js'
import { PostgresAnswerLog } from './postgres-answer-log.js'
import type { PostgresDatabase } from './postgres-database.js'
import { RememberedConversations, keyOf } from './remembered-conversations.js'
import { integerOption } from '../../core/integer-option.js'

export interface PostgresConversationStoreOptions extends Partial<ConversationLimits>, Partial<AnswerLogLimits> {
  /** Clock for createdAt / updatedAt. Default: `() => new Date()`. */
  now?: () => Date
  /**
   * How many conversations the store remembers as existing (the most recently written or read): their updates go
   * straight to the locked path; any other is first tried as a new conversation. Default 10 000.
   */
  rememberedConversations?: number
  /**
   * Conversations one caller (the `owner` of the update that created them) keeps per agent, as in memory
   * (MAX_CONVERSATIONS_PER_CALLER). Default 1000. An update that would create one more rejects with CallerCapError
   * (nothing written): the insert counts in its own statement, so the store has no `admit` (no read before a turn).
   */
  maxConversationsPerCaller?: number
  /**
   * This process alone writes the database (the embedded one: its folder lock keeps other processes out). With
   * `joinsTaskSaves`, a turn's write joins the request's task saves whenever it cannot find its row moved: a step on a
   * state this store kept (`get(…, { recent: true })` handed back as `read`, unchanged since), and a conversation found
   * absent moments ago (`foundNone`), besides a new id's. Default false (a server: another instance may move the row
   * meanwhile, and its turn is then planned again on the locked path, which a joined write could no longer do). The
   * store keeps the states it wrote either way (a kept state another instance moved costs the locked path).
   */
  soleWriter?: boolean
  /**
   * How many conversations' states are kept (the most recently written) for `get(…, { recent: true })`, so a turn
   * on a conversation this instance wrote last reads nothing first (issue 43). Default 2,000; 0: none.
   */
  recentStates?: number
  /**
   * The requests' task stores are PostgresTaskStores on this database: the insert of a conversation whose id was made
   * for its request (`newContextId`: nobody else can know it) goes in the statement of the request's deferred task
   * saves (deferred-task-saves.ts), so that a typed routine call is one round trip (issue 43); with `soleWriter`, a
   * routine step's write and a start's insert too. The conversation stays locked in this process until that statement
   * has run. Default false.
   */
  joinsTaskSaves?: boolean
}

export class PostgresConversationStore implements ConversationStore {
  readonly limits: Readonly<ConversationLimits>
  /** Each call is a transaction (its row lock may wait): a span of its own in a turn's trace. */
  readonly traced = true
  readonly #pool: pg.Pool
  readonly #now: () => Date
  /** The tail of each conversation's chain of updates in this process; absent when idle. */
  readonly #locks = new KeyedLock()
  /** The conversations it used lately: which exist, and (recentStates) the states it last wrote. */
  readonly #remembered: RememberedConversations
  readonly maxConversationsPerCaller: number
  /** The answers `update` wrote (answer-log.ts), in this database: every instance reads the same log. */
  readonly answers: PostgresAnswerLog
  /** What a write's next state is made with: the clock, the limits, the answer log's prune schedule. */
  readonly #writes: WriteContext
  /** With `joinsTaskSaves`: the writes it leaves to requests' task saves. */
  readonly #joined: JoinedConversationWrites | undefined
  /** The option: a turn's write may go with its request's task saves, and a new task's reservation with it. */
  readonly joinsTaskSaves: boolean
  /** The option: this process alone writes, so a kept state handed back unchanged, or found absent, cannot have moved. */
  readonly #soleWriter: boolean
  #closed = false

  /** Shares the database's pool; `close()` does not end it (the database's own `close()` does). */
  constructor (database: Pick<PostgresDatabase, 'pool'>, options: PostgresConversationStoreOptions = {}) {
    this.limits = Object.freeze({
      maxTurns: integerOption('maxTurns', options.maxTurns, DEFAULT_CONVERSATION_LIMITS.maxTurns),
      maxInbox: integerOption('maxInbox', options.maxInbox, DEFAULT_CONVERSATION_LIMITS.maxInbox),
      maxTextLength: integerOption('maxTextLength', options.maxTextLength, DEFAULT_CONVERSATION_LIMITS.maxTextLength)
    })
    this.#remembered = new RememberedConversations(integerOption('rememberedConversations', options.rememberedConversations, 10_000),
      options.recentStates === 0 ? 0 : integerOption('recentStates', options.recentStates, 2000))
    this.maxConversationsPerCaller = integerOption('maxConversationsPerCaller', options.maxConversationsPerCaller, DEFAULT_MAX_CONVERSATIONS_PER_CALLER)
    this.#pool = database.pool
    this.joinsTaskSaves = options.joinsTaskSaves === true
    this.#soleWriter = options.soleWriter === true
    this.#joined = this.joinsTaskSaves ? new JoinedConversationWrites(this.#remembered) : undefined
    this.#now = options.now ?? (() => new Date())
    this.answers = new PostgresAnswerLog(async (text, values) => {
      this.#assertOpen()
      return await query(this.#pool, text, values)
    }, {
      answerRetentionMs: integerOption('answerRetentionMs', options.answerRetentionMs, DEFAULT_ANSWER_RETENTION_MS),
      maxAnswersPerAgent: integerOption('maxAnswersPerAgent', options.maxAnswersPerAgent, DEFAULT_MAX_ANSWERS_PER_AGENT)
    }, this.#now)
    this.#writes = {
      pool: this.#pool,
      now: this.#now,
      limits: this.limits,
      answers: this.answers,
      maxConversationsPerCaller: this.maxConversationsPerCaller,
      newConversations: new NewConversationInserts(this.#pool, this.maxConversationsPerCaller)
    }
  }

  async get (agentId: string, contextId: string, options: ConversationGetOptions = {}): Promise<ConversationState | undefined> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    const recent = options.recent === true ? this.#remembered.recent(key) : undefined
    if (recent !== undefined) {
      const state = JSON.parse(recent) as ConversationState
      this.#joined?.handedOut(state, recent)
      return state
    }
    const { rows } = await query<{ state: ConversationState }>(this.#pool, prepared('converse_select_state', SELECT_STATE), [agentId, contextId])
    if (rows.length > 0) this.#remembered.remember(key)
    return rows[0]?.state
  }

  async exists (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    const { rows } = await query(this.#pool, prepared('converse_select_exists', SELECT_EXISTS), [agentId, contextId])
    if (rows.length > 0) this.#remembered.remember(keyOf(agentId, contextId))
    return rows.length > 0
  }

  async list (agentId: string, options: ConversationListOptions = {}): Promise<ConversationSummary[]> {
    this.#assertOpen()
    assertListOptions(options)
    const limit = options.limit === undefined || options.limit === Number.POSITIVE_INFINITY
      ? null
      : Math.max(0, Math.ceil(options.limit))
    const { rows } = await query<ListRow>(this.#pool, SELECT_LIST, [
      agentId, limit, options.before ?? null, options.ownership ?? null, options.needsPerson ?? null
    ])
    return rows.map((row) => listSummary(agentId, row))
  }

  async findContextByTaskId (agentId: string, taskId: string): Promise<string | undefined> {
    this.#assertOpen()
    const { rows } = await query<{ context_id: string }>(this.#pool, prepared('converse_select_task', SELECT_TASK), [agentId, taskId])
    if (rows.length > 0) this.#remembered.remember(keyOf(agentId, rows[0].context_id))
    return rows[0]?.context_id
  }

  async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>, options: ConversationUpdateOptions = {}): Promise<R | ConversationState> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    const owner = options.owner ?? null
    const context = options.context
    this.#joined?.assertNotWaiting(key, contextId, context)
    const release = await this.#locks.acquire(key)
    let held = false
    try {
      const read = options.read
      // Kept and handed back unchanged: nobody wrote it since (this process alone writes it, under this lock).
      const readUnchanged = this.#soleWriter && read !== undefined && this.#joined?.unchanged(key, read) === true
      // Kept again once written: a failed or stale write leaves none to plan a turn on.
      this.#remembered.forgetRecent(key)
      const join = (planned: PlannedWrite, run: JoinedRun, takesReservation = false): boolean => {
        held = context !== undefined && this.#joined?.join(context, key, planned.json, release, run, takesReservation) === true
        return held
      }
      // Not joined: the new task's reservation left to the request's saves is made first (deferred-task-saves.ts).
      const alone = async (): Promise<void> => { await reservePending(context) }
      if (read !== undefined) {
        const planned = await planOnRead(this.#writes, agentId, contextId, fn, read)
        if (planned === undefined) return planned as R
        if (readUnchanged && join(planned, writeIfUnchangedJoined(this.#writes, agentId, contextId, planned))) return planned.next
        await alone()
        const written = await writeIfUnchanged(this.#writes, agentId, contextId, planned)
        if (written !== STALE) {
          this.#remembered.remember(key, written.json)
          return written.state
        }
      }
      const planned = this.#remembered.known(key) ? undefined : await planNew(this.#writes, agentId, contextId, fn)
      if (planned !== undefined) {
        // Its insert cannot find it: an id made for this request, or found absent moments ago and written by nobody
        // since (this process alone writes, and every write of its makes the conversation known).
        const cannotExist = options.newContextId === true || (this.#soleWriter && options.foundNone === true)
        if (cannotExist && join(planned, insertNewJoined(this.#writes, agentId, contextId, planned, owner), true)) return planned.next
        // Not joined: the pending reservation goes ahead of the insert, in its statement.
        const created = await insertNew(this.#writes, agentId, contextId, planned, owner, takePendingReservation(context))
        if (created !== undefined) {
          this.#remembered.remember(key, created.json)
          return created.state
        }
      }
      await alone()
      const written = await lockedWrite(this.#writes, agentId, contextId, fn, owner)
      if (written === undefined) return written as R
      this.#remembered.forget(agentId, written.evicted)
      this.#remembered.remember(key, written.json)
      return written.state
    } finally {
      if (!held) release()
    }
  }

  async delete (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    return await this.#locks.run(keyOf(agentId, contextId), async () => {
      // The DELETE waits for the row lock of an update running on another instance; the task index follows (cascade).
      // Run again after a lost connection it is harmless: the row is gone either way (only the answer may say false).
      this.#remembered.forget(agentId, [contextId])
      const { rows } = await query(this.#pool, DELETE, [agentId, contextId])
      return rows.length !== 0
    })
  }

  /** Waits for this process's running and queued updates; afterwards every call rejects. The pool stays open. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#locks.idle()
  }

  #assertOpen (): void {
    if (this.#closed) throw new ConversationStoreClosedError()
  }
}
