/**
 * How the PostgreSQL conversation store writes (postgres-conversation-store.ts): `fn`'s result as stored —
 * validated, cloned, the store's fields set, the limits applied — with the answers it adds to the log, by one of
 * three paths: a new conversation's autocommit insert (which refuses one past MAX_CONVERSATIONS_PER_CALLER), the
 * conditional write on the state the caller read (alone, or with the request's deferred task saves), and the locked
 * path (the row locked, `fn` on what is stored).
 */
import type pg from 'pg'
import {
  applyConversationLimits, conversationTaskIds, type ConversationLimits, type ConversationState, type ConversationUpdate
} from '../conversation-store.js'
import { cloneData } from '../../core/clone-data.js'
import { toStoreError } from './connection-errors.js'
import { discard, lockRow, once, rollback, together, withConnection } from './conversation-connections.js'
import {
  EVICT_OVERFLOW, HELD, WRITE, WRITE_ANSWERED, WRITE_ANSWERED_PRUNING, WRITE_IF_UNCHANGED,
  WRITE_IF_UNCHANGED_PRUNING, prepared
} from './conversation-statements.js'
import { preparedJoined, writeIfUnchangedWith } from './joined-statements.js'
import type { DeferredReservation, JoinedOutcome } from '../deferred-task-saves.js'
import type { JoinedRun } from './joined-conversation-writes.js'
import { newAnswers } from '../answer-log.js'
import { answersJson, type PostgresAnswerLog } from './postgres-answer-log.js'
import { capped, type NewConversation, type NewConversationInserts } from './new-conversation-inserts.js'

/** What a write adds to the answer log: the records' JSON (none: undefined) and the prune's parameters (not due: null). */
export interface AnswerWrite {
  json: string | undefined
  cap: number | null
  oldest: number | null
}

/** A state as written: the caller's copy and its JSON (kept for `get(…, { recent: true })`). */
export interface Written {
  state: ConversationState
  json: string
}

/** `next` (nextState's own clone: nothing else holds it) is the caller's copy; no need to parse `json` again. */
export function written (next: ConversationState, json: string): Written {
  return { state: next, json }
}

/**
 * jsonb refuses U+0000 in strings; it becomes U+FFFD (the state is otherwise stored as given), in `state` too, so
 * that the caller's copy is what is stored.
 */
export function toJson (state: ConversationState): string {
  const json = JSON.stringify(state)
  if (!json.includes('\\u0000')) return json
  const stored = JSON.stringify(state, (_key, value: unknown) => typeof value === 'string' ? value.replaceAll('\0', '\uFFFD') : value)
  Object.assign(state, JSON.parse(stored))
  return stored
}

/** The store's pool, clock, limits, answer log's prune schedule and per-caller bound. */
export interface WriteContext {
  pool: pg.Pool
  maxConversationsPerCaller: number
  now: () => Date
  limits: ConversationLimits
  answers: Pick<PostgresAnswerLog, 'pruneParameters'>
  /** New conversations' inserts (an owner's that arrive together share a statement). */
  newConversations: NewConversationInserts
}

/** `fn`'s result as stored: validated, cloned, the store's fields set, the limits applied; its JSON and answers. */
export function nextState (
  context: WriteContext, draft: ConversationState, agentId: string, contextId: string, version: number, current: ConversationState | undefined
): { next: ConversationState, json: string, answers: AnswerWrite } {
  if (draft === null || typeof draft !== 'object') {
    throw new TypeError('a conversation update must return the conversation state')
  }
  const at = context.now().toISOString()
  // The clone refuses what the memory store refuses (functions, symbols…) before JSON would silently drop it;
  // cloneData, as the memory store: structuredClone's result, a few times faster on a state's plain data.
  const next = applyConversationLimits({
    ...cloneData(draft),
    agentId,
    contextId,
    version,
    createdAt: current?.createdAt ?? at,
    updatedAt: at
  }, context.limits)
  const records = newAnswers(current, next, Date.parse(at))
  const [cap, oldest] = records.length === 0 ? [null, null] : context.answers.pruneParameters(agentId, Date.parse(at))
  return { next, json: toJson(next), answers: { json: records.length === 0 ? undefined : answersJson(records), cap, oldest } }
}

/** The prune's parameters, when it is due (the statements' `_PRUNING` variants take them; the others none). */
function pruneValues (answers: AnswerWrite): Array<number | null> {
  return answers.cap === null ? [] : [answers.cap, answers.oldest]
}

/** The locked path's write: with the answers it adds, and the prune when due. */
function lockedStatement (answers: AnswerWrite): pg.QueryConfig {
  if (answers.json === undefined) return prepared('converse_write', WRITE)
  if (answers.cap === null) return prepared('converse_write_answered', WRITE_ANSWERED)
  return prepared('converse_write_answered_pruning', WRITE_ANSWERED_PRUNING)
}

/** writeIfUnchanged found the row at another version than the caller read. */
export const STALE = Symbol('stale')

/** A write planned by `fn` (on the state the caller read, or as a new conversation): its result as stored. */
export type PlannedWrite = ReturnType<typeof nextState>

/**
 * `fn(undefined)` as a new conversation's state; undefined when `fn` threw, returned undefined or returned something
 * unusable for a conversation it took as new (the locked path calls it again, on the real state if there is one,
 * and its error is the one that propagates).
 */
export async function planNew (context: WriteContext, agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>): Promise<PlannedWrite | undefined> {
  try {
    const draft = await fn(undefined)
    // Nothing to write for a new conversation: the locked path asks again, on the real state if there is one.
    if (draft === undefined) return undefined
    return nextState(context, draft, agentId, contextId, 1, undefined)
  } catch {
    return undefined
  }
}

/** A planned new conversation as the insert writes it. */
function newConversation (contextId: string, { next, json, answers }: PlannedWrite): NewConversation {
  return { contextId, json, createdAt: next.createdAt, updatedAt: next.updatedAt, taskIds: conversationTaskIds(next).sort(), answers: answers.json ?? '[]' }
}

/**
 * The optimistic path: `planned` (planNew) inserted as a new conversation in one autocommit statement (shared with
 * the owner's others that arrive meanwhile: new-conversation-inserts.ts; alone after a new task's `reservation`, made
 * first in it). Undefined when the conversation exists (nothing written: the locked path follows). The statement is
 * not retried on a new connection: a lost connection leaves unknown whether it committed.
 */
export async function insertNew (context: WriteContext, agentId: string, contextId: string, planned: PlannedWrite, owner: string | null, reservation?: DeferredReservation): Promise<Written | undefined> {
  const inserted = await context.newConversations.insert(agentId, owner, newConversation(contextId, planned), pruneValues(planned.answers), reservation)
  return inserted ? written(planned.next, planned.json) : undefined
}

/**
 * insertNew as a joined write's statement (joined-conversation-writes.ts): with the request's deferred task saves in
 * the same statement, after its new task's reservation when one is pending (insertNewWith: inserted with the saves'
 * row, or nothing written at all — the conversation exists, or the reservation was refused; a CallerCapError past the
 * owner's cap), or alone when it saved nothing.
 */
export function insertNewJoined (context: WriteContext, agentId: string, contextId: string, planned: PlannedWrite, owner: string | null): JoinedRun {
  return async (saves, reservation) => saves === undefined
    ? { written: await insertNew(context, agentId, contextId, planned, owner) !== undefined, row: undefined } as JoinedOutcome
    : await context.newConversations.insertWithSaves(agentId, owner, newConversation(contextId, planned), pruneValues(planned.answers), saves, reservation)
}

/** `fn` on a copy of the state the caller read, as nextState makes it; undefined: `fn` has nothing to write. */
export async function planOnRead (context: WriteContext, agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>, read: ConversationState): Promise<PlannedWrite | undefined> {
  const draft = await fn(cloneData(read))
  if (draft === undefined) return undefined
  return nextState(context, draft, agentId, contextId, read.version + 1, read)
}

/** WRITE_IF_UNCHANGED's parameters for `planned` (with the prune's when it is due). */
function unchangedValues (agentId: string, contextId: string, { next, json, answers }: PlannedWrite): unknown[] {
  return [
    agentId, contextId, json, next.version, next.createdAt, next.updatedAt, conversationTaskIds(next).sort(),
    answers.json ?? null, ...pruneValues(answers)
  ]
}

/**
 * The path without a lock (ConversationUpdateOptions.read): `planned` written in one autocommit statement if the row
 * is still at the version it was planned on; STALE when it is not (nothing written: the locked path follows and
 * calls `fn` again). Not retried on a new connection: a lost connection leaves unknown whether it committed.
 */
export async function writeIfUnchanged (context: WriteContext, agentId: string, contextId: string, planned: PlannedWrite): Promise<Written | typeof STALE> {
  const statement = planned.answers.cap === null
    ? prepared('converse_write_if_unchanged', WRITE_IF_UNCHANGED)
    : prepared('converse_write_if_unchanged_pruning', WRITE_IF_UNCHANGED_PRUNING)
  const rows = await once<{ version: number }>(context.pool, statement, unchangedValues(agentId, contextId, planned))
  return rows.length === 0 ? STALE : written(planned.next, planned.json)
}

/**
 * writeIfUnchanged as a joined write's statement (joined-conversation-writes.ts): with the request's deferred task
 * saves in the same statement (writeIfUnchangedWith: written with the saves' row, or nothing written at all when the
 * row has moved), or alone when it saved nothing.
 */
export function writeIfUnchangedJoined (context: WriteContext, agentId: string, contextId: string, planned: PlannedWrite): JoinedRun {
  return async (saves) => {
    if (saves === undefined) return { written: await writeIfUnchanged(context, agentId, contextId, planned) !== STALE, row: undefined } as JoinedOutcome
    const pruning = planned.answers.cap !== null
    const statement = preparedJoined(writeIfUnchangedWith(pruning, saves.fn, saves.values.length))
    const [{ version, ...row }] = await once<{ version: number | null }>(context.pool, statement, [...unchangedValues(agentId, contextId, planned), ...saves.values])
    return version === null ? { written: false } : { written: true, row }
  }
}

/** Refuses (CallerCapError) when `owner` holds maxConversationsPerCaller of the agent's conversations. */
async function assertRoom (context: WriteContext, client: pg.PoolClient, agentId: string, owner: string): Promise<void> {
  const { rows } = await client.query<{ held: number }>(prepared('converse_held', HELD), [agentId, owner])
  if (rows[0].held >= context.maxConversationsPerCaller) throw capped(context.maxConversationsPerCaller)
}

export async function lockedWrite (context: WriteContext, agentId: string, contextId: string, fn: ConversationUpdate<ConversationState | undefined>, owner: string | null): Promise<(Written & { evicted: string[] }) | undefined> {
  // Nothing has been done before the row is locked: that part may be retried; `fn` runs once here.
  const { client, result: row } = await withConnection(context.pool, async (connection) => await lockRow(connection, agentId, contextId))
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
    ;({ next, json, answers } = nextState(context, draft, agentId, contextId, row.version + 1, before))
    // A conversation this transaction creates (its placeholder row) is the owner's: refused at the owner's cap, as
    // the insert refuses it; two created at once past it evict the owner's overflow.
    if (row.state === null && owner !== null) await assertRoom(context, client, agentId, owner)
  } catch (error) {
    await rollback(client)
    // `fn`'s errors as thrown; a lost connection (the count's read) as the store's.
    throw toStoreError(error)
  }
  const created = row.state === null && owner !== null
  let evicted: pg.QueryResult<{ context_id: string }> | undefined
  try {
    // Together on a pipelined connection: a failed write makes the COMMIT a ROLLBACK, and the write's error is the
    // one thrown (one after the other, the COMMIT is not sent after a failed write: the discard rolls back).
    ;[, evicted] = await together(client,
      async () => await client.query(lockedStatement(answers), [
        agentId, contextId, json, next.version, next.createdAt, next.updatedAt, conversationTaskIds(next).sort(), created ? owner : null,
        ...(answers.json === undefined ? [] : [answers.json, ...pruneValues(answers)])
      ]),
      async () => created ? await client.query<{ context_id: string }>(prepared('converse_evict_overflow', EVICT_OVERFLOW), [agentId, contextId, owner, context.maxConversationsPerCaller]) : undefined,
      async () => await client.query('COMMIT'))
  } catch (error) {
    // A failed write leaves the transaction aborted; a failed COMMIT leaves the connection in doubt.
    discard(client)
    throw toStoreError(error)
  }
  client.release()
  return { ...written(next, json), evicted: evicted?.rows.map((row) => row.context_id) ?? [] }
}
