/**
 * ConversationStore on PostgreSQL: one row per conversation (state as JSONB), shared by every instance on the
 * database. `update` is a transaction holding the conversation's row lock (`SELECT … FOR UPDATE`), so updates of
 * one conversation serialise across processes and none is lost; in front of it, a per-conversation promise chain
 * in each process (as in the memory store) keeps one process's updates in call order and keeps them from tying up
 * several pool connections waiting on the same row. A conversation this process has not seen lately is first tried
 * as new: `fn(undefined)` written by one autocommit `INSERT … ON CONFLICT DO NOTHING` (one round trip); when the row
 * exists (another instance made it), the locked path runs `fn` again on the real state. Tables: see migrations.ts
 * and docs/postgres.md. The answers a write adds (answer-log.ts) go into the answer log in the statement that writes
 * the conversation: postgres-answer-log.ts.
 */
import type pg from 'pg'
import { InvalidOptionError } from '../../core/errors.js'
import { CallerCapError } from '../caller-key.js'
import {
  DEFAULT_CONVERSATION_LIMITS, ConversationStoreClosedError, SUMMARY_TEXT_LENGTH, applyConversationLimits, assertListOptions,
  conversationTaskIds, type ConversationGetOptions, type ConversationLimits, type ConversationListOptions, type ConversationState,
  type ConversationStore, type ConversationSummary, type ConversationTurn, type ConversationUpdate, type ConversationUpdateOptions
} from '../conversation-store.js'
import { DEFAULT_MAX_CONVERSATIONS_PER_CALLER } from '../memory-conversation-store.js'
import { KeyedLock } from '../keyed-lock.js'
import { isConnectionFailure, toStoreError } from './connection-errors.js'
import { CONVERSATION_OWNERS_TABLE, CONVERSATIONS_TABLE, CONVERSATION_TASKS_TABLE } from './migrations.js'
import {
  DEFAULT_ANSWER_RETENTION_MS, DEFAULT_MAX_ANSWERS_PER_AGENT, newAnswers, type AnswerLogLimits
} from '../answer-log.js'
import { PostgresAnswerLog, answersJson, insertAnswers, pruneAnswers } from './postgres-answer-log.js'
import type { PostgresDatabase } from './postgres-database.js'

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
   * true: this store is the only writer of its conversations (the embedded database: one process holds its folder),
   * so what it wrote is what is stored, and a turn may skip reads (issue 43): `get(…, { recent: true })` answers with
   * the state it last wrote (recentStates). Default
   * false: with other writers (instances on a server) a kept state may be behind, and a retry with other content that
   * another instance answered would be decided under the row lock (answered with a Message) instead of refused
   * (-32602) before the turn (docs/state.md, "Round trips per turn").
   */
  soleWriter?: boolean
  /** With soleWriter: how many conversations' states are kept (the most recently written). Default 2,000; 0: none. */
  recentStates?: number
}

/** What a write adds to the answer log: the records' JSON (none: undefined) and the prune's parameters (not due: null). */
interface AnswerWrite {
  json: string | undefined
  cap: number | null
  oldest: number | null
}

interface LockedRow {
  state: ConversationState | null
  version: number
}

const SELECT_STATE = `select state from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 and state is not null`
const SELECT_EXISTS = `select 1 from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 and state is not null`
/**
 * A page of an agent's conversations, newest write first, with the listing's filters (a NULL parameter: no filter);
 * only the summary's members leave the database. The filters read the stored state (`needsPerson` is written with
 * it), so both stores filter on the same data.
 */
const SELECT_LIST = `select context_id, state->>'ownership' as ownership, version, state->>'updatedAt' as updated_at,
    write_seq, coalesce(state->'needsPerson', '[]'::jsonb) as needs_person, state->'caller' as caller,
    (state->'turns'->-1) - 'text' - 'envelope' as last_turn, left(state->'turns'->-1->>'text', ${SUMMARY_TEXT_LENGTH}) as last_text
  from ${CONVERSATIONS_TABLE}
  where agent_id = $1 and state is not null
    and ($3::bigint is null or write_seq < $3)
    and ($4::text is null or state->>'ownership' = $4)
    and ($5::boolean is null or (jsonb_array_length(coalesce(state->'needsPerson', '[]'::jsonb)) > 0) = $5)
  order by write_seq desc limit $2`

interface ListRow {
  context_id: string
  ownership: ConversationSummary['ownership']
  version: number
  updated_at: string
  write_seq: string
  needs_person: ConversationSummary['needsPerson']
  last_turn: ConversationTurn | null
  caller: ConversationSummary['caller'] | null
  last_text: string | null
}

const SELECT_TASK = `select context_id from ${CONVERSATION_TASKS_TABLE} where agent_id = $1 and task_id = $2`
const DELETE = `delete from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 returning 1`
const LOCK = `select state, version from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 for update`
/** A row to lock for a new conversation; returns nothing when another transaction created it first. */
const INSERT_PLACEHOLDER = `insert into ${CONVERSATIONS_TABLE} (agent_id, context_id) values ($1, $2)
  on conflict do nothing returning state, version`
/** How many conversations the owner ($2) holds of the agent ($1): its counter row (migration 0007). */
const HELD = `select coalesce((select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $2), 0) as held`
/**
 * The owner's ($7) conversations past the cap ($8) when one more ($2) was created: its least recently written ones
 * that no transaction holds (the memory store's "idle"), never the new one and never another owner's. `$held` is
 * what the owner holds besides the new one.
 */
const overflow = (held: string): string => `select agent_id, context_id from ${CONVERSATIONS_TABLE}
  where agent_id = $1 and owner = $7 and context_id <> $2 and state is not null
  order by write_seq
  limit greatest(0, ${held} + 1 - $8::int)
  for update skip locked`
const HELD_BY_OWNER = `coalesce((select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $7), 0)`
/**
 * The overflow removed after a new conversation's locked write (its task index follows: cascade). The write's trigger
 * has counted the new one by then.
 */
const EVICT_OVERFLOW = `delete from ${CONVERSATIONS_TABLE} where (agent_id, context_id) in (
  select agent_id, context_id from (${overflow(`(${HELD_BY_OWNER} - 1)`).replaceAll('$7', '$3').replaceAll('$8', '$4')}) as overflow)
  returning context_id`
/**
 * A new conversation in one autocommit statement: the row at version 1, its owner ($7, or NULL) and its task index
 * rows, or nothing at all when the row exists (committed by another transaction; one still in progress is waited
 * for), or when the owner already holds its cap ($8) of the agent's conversations and this one is not stored
 * (`capped`: the refusal MAX_CONVERSATIONS_PER_CALLER, decided in the statement, so a turn reads no count first).
 * The count is the statement's snapshot: two created at once may both pass it, as two requests passed a count read
 * before them. The task index takes over ids as WRITE does. The conversation's answers ($9, a JSON array) are logged
 * with it, and the agent's log pruned when due ($10, $11). Always one row: the version (NULL: nothing written) and
 * `capped`.
 */
const INSERT_NEW = `with capped as (
    select $7::text is not null and ${HELD_BY_OWNER} >= $8::int
      and not exists (select 1 from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2) as capped
  ), conversation as (
    insert into ${CONVERSATIONS_TABLE} (agent_id, context_id, state, version, created_at, updated_at, owner)
    select $1, $2, $3::jsonb, 1, $4, $5, $7 from capped where not capped
    on conflict do nothing
    returning version
  ), indexed as (
    insert into ${CONVERSATION_TASKS_TABLE} (agent_id, task_id, context_id)
    select $1, task_id, $2 from conversation, unnest($6::text[]) as task_id
    on conflict (agent_id, task_id) do update set context_id = excluded.context_id
    where ${CONVERSATION_TASKS_TABLE}.context_id <> excluded.context_id
  ), answered as (
    ${insertAnswers('$1', '$2', '$9', 'conversation, ')}
  ), pruned as (
    ${pruneAnswers('$1', '$10', '$11')}
  )
  select (select version from conversation) as version, (select capped from capped) as capped`
/**
 * The write, in one round trip: the state; the task index loses this conversation's ids it no longer names and
 * gains (or takes over: the last writer wins) the ones it names; rows already right are left alone (no new row
 * version per update). Ids are sorted so that two transactions upserting the same ids lock them in the same order.
 * `answers`: more common table expressions (WRITE_ANSWERED).
 */
const write = (answers: string): string => `with conversation as (
    update ${CONVERSATIONS_TABLE}
       set state = $3::jsonb, version = $4, created_at = $5, updated_at = $6, owner = coalesce($8::text, owner),
           write_seq = nextval('${CONVERSATIONS_TABLE}_write_seq')
     where agent_id = $1 and context_id = $2
  ), forgotten as (
    delete from ${CONVERSATION_TASKS_TABLE}
     where agent_id = $1 and context_id = $2 and not (task_id = any ($7::text[]))
  )${answers}
  insert into ${CONVERSATION_TASKS_TABLE} (agent_id, task_id, context_id)
  select $1, task_id, $2 from unnest($7::text[]) as task_id
  on conflict (agent_id, task_id) do update set context_id = excluded.context_id
  where ${CONVERSATION_TASKS_TABLE}.context_id <> excluded.context_id`
const WRITE = write('')
/**
 * The write without a lock (ConversationUpdateOptions.read), in one autocommit statement: the state only when the row
 * is still at the version the caller read ($4 - 1) and was created when it was ($5: not deleted and made again since,
 * which restarts its versions); every other change only when that one was made. Returns a row
 * when it wrote. Answers ($8 or NULL, $9 cap or NULL, $10 oldest) go with it as in WRITE_ANSWERED.
 */
const WRITE_IF_UNCHANGED = `with conversation as (
    update ${CONVERSATIONS_TABLE}
       set state = $3::jsonb, version = $4, created_at = $5, updated_at = $6,
           write_seq = nextval('${CONVERSATIONS_TABLE}_write_seq')
     where agent_id = $1 and context_id = $2 and version = $4 - 1 and created_at = $5
     returning version
  ), forgotten as (
    delete from ${CONVERSATION_TASKS_TABLE}
     where exists (select 1 from conversation) and agent_id = $1 and context_id = $2 and not (task_id = any ($7::text[]))
  ), indexed as (
    insert into ${CONVERSATION_TASKS_TABLE} (agent_id, task_id, context_id)
    select $1, task_id, $2 from conversation, unnest($7::text[]) as task_id
    on conflict (agent_id, task_id) do update set context_id = excluded.context_id
    where ${CONVERSATION_TASKS_TABLE}.context_id <> excluded.context_id
  ), answered as (
    ${insertAnswers('$1', '$2', "coalesce($8::text, '[]')", 'conversation, ')}
  ), pruned as (
    ${pruneAnswers('$1', '$9', '$10')}
  )
  select version from conversation`
/**
 * A write that adds answers: the same statement, which also logs them ($9) and, when due, prunes the agent's log ($10
 * cap or NULL, $11 oldest). One statement, so a locked write stays two queries (itself and COMMIT) in flight.
 */
const WRITE_ANSWERED = write(`, answered as (
    ${insertAnswers('$1', '$2', '$9')}
  ), pruned as (
    ${pruneAnswers('$1', '$10', '$11')}
  )`)

/**
 * A turn's statements, prepared once per connection (`pg` sends the text only the first time on each) and from then
 * on only bound and executed: no parse and plan per call. On the embedded database, one session, that is about a
 * third of each statement's cost (docs/state.md, "Speed").
 */
function prepared (name: string, text: string): pg.QueryConfig {
  return { name, text }
}

function positiveInteger (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer')
  return value
}

function keyOf (agentId: string, contextId: string): string {
  return JSON.stringify([agentId, contextId])
}

/** jsonb refuses U+0000 in strings; it becomes U+FFFD (the state is otherwise stored as given). */
function toJson (state: ConversationState): string {
  const json = JSON.stringify(state)
  if (!json.includes('\\u0000')) return json
  return JSON.stringify(state, (_key, value: unknown) => typeof value === 'string' ? value.replaceAll('\0', '\uFFFD') : value)
}

/** A state as written: the caller's copy and its JSON (kept by #remember). */
interface Written {
  state: ConversationState
  json: string
}

function written (json: string): Written {
  return { state: JSON.parse(json) as ConversationState, json }
}

/** Closes a connection instead of giving it back: it failed, or its transaction is in an unknown state. */
function discard (client: pg.PoolClient): void {
  client.release(true)
}

/** Rolls back and gives the connection back; a connection whose rollback fails is discarded. */
/**
 * The kept states' JSON together, in characters (about bytes): 16 Mi, so that however long the conversations, the
 * states kept for recentStates stay a small part of a gateway's memory (docs/state.md, "Memory").
 */
const RECENT_STATES_CHARS = 16 * 1024 * 1024

/** #writeIfUnchanged found the row at another version than the caller read. */
const STALE = Symbol('stale')

async function rollback (client: pg.PoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK')
    client.release()
  } catch {
    discard(client)
  }
}

export class PostgresConversationStore implements ConversationStore {
  readonly limits: Readonly<ConversationLimits>
  /** Each call is a transaction (its row lock may wait): a span of its own in a turn's trace. */
  readonly traced = true
  readonly #pool: pg.Pool
  readonly #now: () => Date
  /** The tail of each conversation's chain of updates in this process; absent when idle. */
  readonly #locks = new KeyedLock()
  /** Keys of conversations known to exist, least recently used first (a Map keeps insertion order). */
  readonly #known = new Map<string, true>()
  readonly #maxKnown: number
  readonly #soleWriter: boolean
  /** The JSON of the states this store last wrote, least recently used first; at most #maxRecent. */
  readonly #recent = new Map<string, string>()
  readonly #maxRecent: number
  /** The length of the kept states' JSON, together: at most RECENT_STATES_CHARS. */
  #recentChars = 0
  readonly maxConversationsPerCaller: number
  /** The answers `update` wrote (answer-log.ts), in this database: every instance reads the same log. */
  readonly answers: PostgresAnswerLog
  #closed = false

  /** Shares the database's pool; `close()` does not end it (the database's own `close()` does). */
  constructor (database: Pick<PostgresDatabase, 'pool'>, options: PostgresConversationStoreOptions = {}) {
    this.limits = Object.freeze({
      maxTurns: positiveInteger('maxTurns', options.maxTurns, DEFAULT_CONVERSATION_LIMITS.maxTurns),
      maxInbox: positiveInteger('maxInbox', options.maxInbox, DEFAULT_CONVERSATION_LIMITS.maxInbox),
      maxTextLength: positiveInteger('maxTextLength', options.maxTextLength, DEFAULT_CONVERSATION_LIMITS.maxTextLength)
    })
    this.#maxKnown = positiveInteger('rememberedConversations', options.rememberedConversations, 10_000)
    this.#soleWriter = options.soleWriter === true
    this.#maxRecent = !this.#soleWriter || options.recentStates === 0 ? 0 : positiveInteger('recentStates', options.recentStates, 2000)
    this.maxConversationsPerCaller = positiveInteger('maxConversationsPerCaller', options.maxConversationsPerCaller, DEFAULT_MAX_CONVERSATIONS_PER_CALLER)
    this.#pool = database.pool
    this.#now = options.now ?? (() => new Date())
    this.answers = new PostgresAnswerLog(async (text, values) => {
      this.#assertOpen()
      return await this.#query(text, values)
    }, {
      answerRetentionMs: positiveInteger('answerRetentionMs', options.answerRetentionMs, DEFAULT_ANSWER_RETENTION_MS),
      maxAnswersPerAgent: positiveInteger('maxAnswersPerAgent', options.maxAnswersPerAgent, DEFAULT_MAX_ANSWERS_PER_AGENT)
    }, this.#now)
  }

  async get (agentId: string, contextId: string, options: ConversationGetOptions = {}): Promise<ConversationState | undefined> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    const recent = options.recent === true ? this.#recent.get(key) : undefined
    if (recent !== undefined) return JSON.parse(recent) as ConversationState
    const { rows } = await this.#query<{ state: ConversationState }>(prepared('converse_select_state', SELECT_STATE), [agentId, contextId])
    if (rows.length > 0) this.#remember(key)
    return rows[0]?.state
  }

  async exists (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    const { rows } = await this.#query(prepared('converse_select_exists', SELECT_EXISTS), [agentId, contextId])
    if (rows.length > 0) this.#remember(keyOf(agentId, contextId))
    return rows.length > 0
  }

  async list (agentId: string, options: ConversationListOptions = {}): Promise<ConversationSummary[]> {
    this.#assertOpen()
    assertListOptions(options)
    const limit = options.limit === undefined || options.limit === Number.POSITIVE_INFINITY
      ? null
      : Math.max(0, Math.ceil(options.limit))
    const { rows } = await this.#query<ListRow>(SELECT_LIST, [
      agentId, limit, options.before ?? null, options.ownership ?? null, options.needsPerson ?? null
    ])
    return rows.map((row) => {
      const summary: ConversationSummary = {
        agentId,
        contextId: row.context_id,
        ownership: row.ownership,
        version: row.version,
        updatedAt: row.updated_at,
        position: Number(row.write_seq),
        needsPerson: row.needs_person
      }
      if (row.caller !== null) summary.caller = row.caller
      if (row.last_turn !== null) summary.lastTurn = { role: row.last_turn.role, at: row.last_turn.at, text: row.last_text as string }
      return summary
    })
  }

  async findContextByTaskId (agentId: string, taskId: string): Promise<string | undefined> {
    this.#assertOpen()
    const { rows } = await this.#query<{ context_id: string }>(prepared('converse_select_task', SELECT_TASK), [agentId, taskId])
    if (rows.length > 0) this.#remember(keyOf(agentId, rows[0].context_id))
    return rows[0]?.context_id
  }

  async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>, options: ConversationUpdateOptions = {}): Promise<R | ConversationState> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    const owner = options.owner ?? null
    return await this.#locks.run(key, async () => {
      // Kept again once written: a failed or stale write leaves none to plan a turn on.
      this.#forgetRecent(key)
      if (options.read !== undefined) {
        const written = await this.#writeIfUnchanged(agentId, contextId, fn, options.read)
        if (written !== STALE) {
          if (written !== undefined) this.#remember(key, written.json)
          return written?.state as R | ConversationState
        }
      }
      if (!this.#known.has(key)) {
        const created = await this.#insertNew(agentId, contextId, fn, owner)
        if (created !== undefined) {
          this.#remember(key, created.json)
          return created.state
        }
      }
      const written = await this.#update(agentId, contextId, fn, owner)
      if (written === undefined) return written as R
      this.#remember(key, written.json)
      return written.state
    })
  }

  async delete (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    return await this.#locks.run(keyOf(agentId, contextId), async () => {
      // The DELETE waits for the row lock of an update running on another instance; the task index follows (cascade).
      // Run again after a lost connection it is harmless: the row is gone either way (only the answer may say false).
      this.#forget(agentId, [contextId])
      const { rows } = await this.#query(DELETE, [agentId, contextId])
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

  /**
   * Marks the key most recently used; the least recently used one is forgotten beyond the bound. `json`: the state
   * just written, kept for `get(…, { recent: true })` when the store keeps states.
   */
  #remember (key: string, json?: string): void {
    this.#known.delete(key)
    this.#known.set(key, true)
    if (this.#known.size > this.#maxKnown) this.#known.delete(this.#known.keys().next().value as string)
    if (json === undefined || this.#maxRecent === 0) return
    this.#recent.set(key, json)
    this.#recentChars += json.length
    while (this.#recent.size > this.#maxRecent || this.#recentChars > RECENT_STATES_CHARS) {
      this.#forgetRecent(this.#recent.keys().next().value as string)
    }
  }

  /** Conversations gone (deleted, evicted): neither known nor kept. */
  #forget (agentId: string, contextIds: string[]): void {
    for (const contextId of contextIds) {
      this.#known.delete(keyOf(agentId, contextId))
      this.#forgetRecent(keyOf(agentId, contextId))
    }
  }

  #forgetRecent (key: string): void {
    this.#recentChars -= this.#recent.get(key)?.length ?? 0
    this.#recent.delete(key)
  }

  /** `fn`'s result as stored: validated, cloned, the store's fields set, the limits applied; and its JSON. */
  #next (draft: ConversationState, agentId: string, contextId: string, version: number, current: ConversationState | undefined): { next: ConversationState, json: string, answers: AnswerWrite } {
    if (draft === null || typeof draft !== 'object') {
      throw new TypeError('a conversation update must return the conversation state')
    }
    const at = this.#now().toISOString()
    // The clone refuses what the memory store refuses (functions, symbols…) before JSON would silently drop it.
    const next = applyConversationLimits({
      ...structuredClone(draft),
      agentId,
      contextId,
      version,
      createdAt: current?.createdAt ?? at,
      updatedAt: at
    }, this.limits)
    const records = newAnswers(current, next, Date.parse(at))
    const [cap, oldest] = records.length === 0 ? [null, null] : this.answers.pruneParameters(agentId, Date.parse(at))
    return { next, json: toJson(next), answers: { json: records.length === 0 ? undefined : answersJson(records), cap, oldest } }
  }

  /**
   * The optimistic path: `fn(undefined)` inserted as a new conversation in one autocommit statement. Undefined when
   * the conversation exists (nothing written: the locked path follows), or when `fn` threw, returned undefined or
   * returned something unusable for a conversation it took as new (the locked path calls it again, on the real state if there is one,
   * and its error is the one that propagates). The statement is not retried on a new connection: a lost connection
   * leaves unknown whether it committed.
   */
  async #insertNew (agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>, owner: string | null): Promise<Written | undefined> {
    let next: ConversationState
    let json: string
    let answers: AnswerWrite
    try {
      const draft = await fn(undefined)
      // Nothing to write for a new conversation: the locked path asks again, on the real state if there is one.
      if (draft === undefined) return undefined
      ;({ next, json, answers } = this.#next(draft, agentId, contextId, 1, undefined))
    } catch {
      return undefined
    }
    // Named: prepared once per connection, so the server does not parse and plan it again on every new turn.
    const [row] = await this.#once<{ version: number | null, capped: boolean }>(prepared('converse_insert_new', INSERT_NEW), [
      agentId, contextId, json, next.createdAt, next.updatedAt, conversationTaskIds(next).sort(), owner, this.maxConversationsPerCaller,
      answers.json ?? '[]', answers.cap, answers.oldest
    ])
    if (row.capped) throw this.#capped()
    return row.version === null ? undefined : written(json)
  }

  /**
   * The path without a lock (ConversationUpdateOptions.read): `fn` on the state the caller read, written in one
   * autocommit statement if the row is still at that version; STALE when it is not (nothing written: the locked path
   * follows and calls `fn` again). Not retried on a new connection: a lost connection leaves unknown whether it
   * committed.
   */
  async #writeIfUnchanged (agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>, read: ConversationState): Promise<Written | undefined | typeof STALE> {
    const draft = await fn(structuredClone(read))
    if (draft === undefined) return undefined
    const { next, json, answers } = this.#next(draft, agentId, contextId, read.version + 1, read)
    const rows = await this.#once<{ version: number }>(prepared('converse_write_if_unchanged', WRITE_IF_UNCHANGED), [
      agentId, contextId, json, next.version, next.createdAt, next.updatedAt, conversationTaskIds(next).sort(),
      answers.json ?? null, answers.cap, answers.oldest
    ])
    return rows.length === 0 ? STALE : written(json)
  }

  /** One statement on a pool connection, not retried: a write whose connection failed may have committed. */
  async #once<R extends pg.QueryResultRow> (query: pg.QueryConfig, values: unknown[]): Promise<R[]> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error)
    }
    let rows: R[]
    try {
      rows = (await client.query<R>(query, values)).rows
    } catch (error) {
      discard(client)
      throw toStoreError(error)
    }
    client.release()
    return rows
  }

  async #query<R extends pg.QueryResultRow> (text: string | pg.QueryConfig, values: unknown[]): Promise<pg.QueryResult<R>> {
    const { client, result } = await this.#withConnection(async (connection) => await connection.query<R>(text, values))
    client.release()
    return result
  }

  /**
   * Runs `work` on a pool connection and hands the connection on (the caller releases it). A connection found dead
   * (a server restart leaves idle ones behind) is replaced once: `work` must not have changed anything when its
   * connection fails. An unreachable database rejects with StoreUnavailableError.
   */
  async #withConnection<T> (work: (client: pg.PoolClient) => Promise<T>, attempt = 1): Promise<{ client: pg.PoolClient, result: T }> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error)
    }
    try {
      return { client, result: await work(client) }
    } catch (error) {
      discard(client)
      if (attempt === 2 || !isConnectionFailure(error)) throw toStoreError(error)
    }
    return await this.#withConnection(work, 2)
  }

  /** MAX_CONVERSATIONS_PER_CALLER: the refusal of a new conversation of an owner at the cap (nothing written). */
  #capped (): CallerCapError {
    return new CallerCapError('MAX_CONVERSATIONS_PER_CALLER', this.maxConversationsPerCaller,
      `this caller has ${this.maxConversationsPerCaller} conversations (MAX_CONVERSATIONS_PER_CALLER): continue one of them`)
  }

  /** Refuses (CallerCapError) when `owner` holds maxConversationsPerCaller of the agent's conversations. */
  async #assertRoom (client: pg.PoolClient, agentId: string, owner: string): Promise<void> {
    const { rows } = await client.query<{ held: number }>(prepared('converse_held', HELD), [agentId, owner])
    if (rows[0].held >= this.maxConversationsPerCaller) throw this.#capped()
  }

  async #update (agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>, owner: string | null): Promise<Written | undefined> {
    // Nothing has been done before the row is locked: that part may be retried; `fn` runs once here.
    const { client, result: row } = await this.#withConnection(async (connection) => await lockRow(connection, agentId, contextId))
    let next: ConversationState
    let json: string
    let answers: AnswerWrite
    try {
      const current = row.state ?? undefined
      // `fn` may change the state it is given: the turns before it ran are what the answer log compares with.
      const before = current === undefined ? undefined : { ...current, turns: [...current.turns] }
      const draft = await fn(current)
      if (draft === undefined) {
        // Nothing to write (a new conversation's placeholder row goes with the transaction).
        await rollback(client)
        return undefined
      }
      ;({ next, json, answers } = this.#next(draft, agentId, contextId, row.version + 1, before))
      // A conversation this transaction creates (its placeholder row) is the owner's: refused at the owner's cap, as
      // the insert refuses it; two created at once past it evict the owner's overflow.
      if (row.state === null && owner !== null) await this.#assertRoom(client, agentId, owner)
    } catch (error) {
      await rollback(client)
      // `fn`'s errors as thrown; a lost connection (the count's read) as the store's.
      throw toStoreError(error)
    }
    const created = row.state === null && owner !== null
    let evicted: pg.QueryResult<{ context_id: string }> | undefined
    try {
      // Sent together too: a failed write makes the COMMIT a ROLLBACK, and the write's error is the one thrown.
      ;[, evicted] = await Promise.all([
        client.query(answers.json === undefined ? prepared('converse_write', WRITE) : prepared('converse_write_answered', WRITE_ANSWERED), [
          agentId, contextId, json, next.version, next.createdAt, next.updatedAt, conversationTaskIds(next).sort(), created ? owner : null,
          ...(answers.json === undefined ? [] : [answers.json, answers.cap, answers.oldest])
        ]),
        created ? client.query<{ context_id: string }>(prepared('converse_evict_overflow', EVICT_OVERFLOW), [agentId, contextId, owner, this.maxConversationsPerCaller]) : undefined,
        client.query('COMMIT')
      ])
    } catch (error) {
      // A failed write leaves the transaction aborted; a failed COMMIT leaves the connection in doubt.
      discard(client)
      throw toStoreError(error)
    }
    client.release()
    if (evicted !== undefined) this.#forget(agentId, evicted.rows.map((row) => row.context_id))
    return written(json)
  }
}

/**
 * BEGIN and lock the conversation's row. A new conversation gets a placeholder row (state NULL) that our insert
 * holds locked until we commit. When another transaction inserts it first, our insert waits for that one to finish
 * and does nothing: the row is then committed and ours to lock on the next turn of the loop.
 */
async function lockRow (client: pg.PoolClient, agentId: string, contextId: string): Promise<LockedRow> {
  const keys = [agentId, contextId]
  // Sent together: one round trip with pipelined connections (PostgresDatabaseOptions.pipeline), else back to back.
  const [, locked] = await Promise.all([client.query('BEGIN'), client.query<LockedRow>(prepared('converse_lock', LOCK), keys)])
  let row = locked.rows[0]
  while (row === undefined) {
    row = (await client.query<LockedRow>(prepared('converse_insert_placeholder', INSERT_PLACEHOLDER), keys)).rows[0] ?? (await client.query<LockedRow>(prepared('converse_lock', LOCK), keys)).rows[0]
  }
  return row
}
