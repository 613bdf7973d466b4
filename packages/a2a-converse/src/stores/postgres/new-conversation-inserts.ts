/**
 * A new conversation's insert (conversation-writes.ts `insertNew`), and new conversations of one owner sharing a
 * statement (issue 43, group commit; docs/state.md "New conversations of one owner share a commit"). Each insert
 * counts its conversation in the owner's counter row (migration 0013), whose lock the transaction holds until its
 * commit is flushed: an owner's new conversations commit one after the other, each flushing the WAL alone. So one
 * insert per agent and owner is in flight at a time, and those that arrive meanwhile go out together when it is
 * answered — one statement, one lock, one flush — with nothing waited for when none is in flight. A statement refused
 * whole (the owner's cap reached by one of its rows, or any other error the server answered) is run again one
 * conversation at a time, so that each gets its own answer; one whose connection failed is not (it may have
 * committed): each of its conversations gets that error, as an insert of its own would.
 */
import type pg from 'pg'
import { CallerCapError } from '../caller-key.js'
import { isStatementError } from './connection-errors.js'
import { once } from './conversation-connections.js'
import { CONVERSATION_CAP_REACHED } from './conversation-migrations.js'
import { INSERT_NEW, INSERT_NEW_MANY, INSERT_NEW_PRUNING, prepared } from './conversation-statements.js'
import { insertNewReserving, insertNewWith, preparedJoined } from './joined-statements.js'
import type { DeferredReservation, DeferredSavesCall, JoinedOutcome } from '../deferred-task-saves.js'

/** A new conversation as the insert writes it. */
export interface NewConversation {
  contextId: string
  json: string
  createdAt: string
  updatedAt: string
  /** Its task ids, sorted. */
  taskIds: string[]
  /** Its answers' JSON array. */
  answers: string
}

/** Conversations one statement inserts at most (the rest wait for the next): bounds its parameters. */
export const MAX_BATCH = 64

/** MAX_CONVERSATIONS_PER_CALLER: the refusal of a new conversation of an owner at the cap (nothing written). */
export function capped (max: number): CallerCapError {
  return new CallerCapError('MAX_CONVERSATIONS_PER_CALLER', max,
    `this caller has ${max} conversations (MAX_CONVERSATIONS_PER_CALLER): continue one of them`)
}

interface Waiting {
  conversation: NewConversation
  resolve: (inserted: boolean) => void
  reject: (error: unknown) => void
}

export class NewConversationInserts {
  /** Per agent and owner with an insert in flight: the conversations waiting for it to be answered. */
  readonly #waiting = new Map<string, Waiting[]>()
  readonly #pool: pg.Pool
  readonly #cap: number

  /** `cap`: MAX_CONVERSATIONS_PER_CALLER, which the owner's count enforces. */
  constructor (pool: pg.Pool, cap: number) {
    this.#pool = pool
    this.#cap = cap
  }

  /**
   * Whether `conversation` was inserted (false: it exists); rejects with a CallerCapError past the owner's cap. `prune`:
   * the answer log's prune parameters when it is due (that insert goes alone, as does one without an owner).
   * `reservation`: a new task's, made first in the same statement (alone too; rejects as it refuses, nothing inserted).
   */
  async insert (agentId: string, owner: string | null, conversation: NewConversation, prune: Array<number | null> = [], reservation?: DeferredReservation): Promise<boolean> {
    if (reservation !== undefined) return await this.#reserving(agentId, owner, conversation, prune, reservation)
    if (owner === null || prune.length > 0) return await this.#alone(agentId, owner, conversation, prune)
    const key = `${agentId}\u0000${owner}`
    const waiting = this.#waiting.get(key)
    if (waiting !== undefined) return await new Promise((resolve, reject) => waiting.push({ conversation, resolve, reject }))
    this.#waiting.set(key, [])
    try {
      return await this.#alone(agentId, owner, conversation, prune)
    } finally {
      // Not awaited (this caller has its answer) and never rejecting: each waiting one's outcome goes to its caller.
      this.#drain(agentId, owner, key)
    }
  }

  /** One conversation in a statement of its own (INSERT_NEW). Not retried: a lost connection may have committed it. */
  async #alone (agentId: string, owner: string | null, conversation: NewConversation, prune: Array<number | null>): Promise<boolean> {
    const statement = prune.length === 0 ? prepared('converse_insert_new', INSERT_NEW) : prepared('converse_insert_new_pruning', INSERT_NEW_PRUNING)
    const [row] = await this.#insert<{ version: number | null }>(statement, this.#values(agentId, owner, conversation, prune))
    return row.version !== null
  }

  /**
   * A new task's reservation, then `conversation` only when it is not refused, in one statement (insertNewReserving):
   * the slot before the conversation, one round trip. The reservation stands when the conversation exists (the locked
   * path follows, as after a reservation alone).
   */
  async #reserving (agentId: string, owner: string | null, conversation: NewConversation, prune: Array<number | null>, reservation: DeferredReservation): Promise<boolean> {
    const statement = preparedJoined(insertNewReserving(prune.length > 0, { fn: reservation.call.fn, arity: reservation.call.values.length }))
    const [row] = await this.#insert<{ version: number | null, reservation: string }>(statement, [...this.#values(agentId, owner, conversation, prune), ...reservation.call.values])
    reservation.made(row.reservation)
    return row.version !== null
  }

  /**
   * `conversation` and the request's deferred task saves (deferred-task-saves.ts) in one statement (insertNewWith),
   * after the new task's pending `reservation` if any: inserted with the saves' row, or nothing written at all (it
   * exists, or the reservation was refused: its outcome answered). Not shared with the owner's others: the saves are
   * one request's. Rejects with a CallerCapError past the owner's cap (nothing written, the saves neither).
   */
  async insertWithSaves (agentId: string, owner: string | null, conversation: NewConversation, prune: Array<number | null>, saves: DeferredSavesCall, reservation?: DeferredSavesCall): Promise<JoinedOutcome> {
    const pruning = prune.length > 0
    const reserve = reservation === undefined ? undefined : { fn: reservation.fn, arity: reservation.values.length }
    const [{ version, reservation: reserved, ...row }] = await this.#insert<{ version: number | null, reservation: string | null }>(preparedJoined(insertNewWith(pruning, saves.fn, saves.values.length, reserve)),
      [...this.#values(agentId, owner, conversation, prune), ...saves.values, ...reservation?.values ?? []])
    if (version !== null) return { written: true, row }
    return reserved === null ? { written: false } : { written: false, reservation: reserved }
  }

  /** INSERT_NEW's parameters. */
  #values (agentId: string, owner: string | null, conversation: NewConversation, prune: Array<number | null>): unknown[] {
    return [
      agentId, conversation.contextId, conversation.json, conversation.createdAt, conversation.updatedAt, conversation.taskIds, owner,
      this.#cap, conversation.answers, ...prune
    ]
  }

  async #insert<R extends pg.QueryResultRow> (statement: pg.QueryConfig, values: unknown[]): Promise<R[]> {
    return await once<R>(this.#pool, statement, values).catch((error: unknown) => {
      // The owner's count refused past the cap (the new conversation is not stored).
      throw (error as { code?: unknown }).code === CONVERSATION_CAP_REACHED ? capped(this.#cap) : error
    })
  }

  /** Sends what waits for the key, as long as something does; then the key has nothing in flight. */
  async #drain (agentId: string, owner: string, key: string): Promise<void> {
    const waiting = this.#waiting.get(key) as Waiting[]
    while (waiting.length > 0) await this.#send(agentId, owner, waiting.splice(0, MAX_BATCH))
    this.#waiting.delete(key)
  }

  /** Settles each of `batch` (never rejects). */
  async #send (agentId: string, owner: string, batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      await this.#alone(agentId, owner, batch[0].conversation, []).then(batch[0].resolve, batch[0].reject)
      return
    }
    let rows: Array<{ inserted: boolean }>
    try {
      const given = batch.map(({ conversation }) => conversation)
      rows = await once<{ inserted: boolean }>(this.#pool, prepared('converse_insert_new_many', INSERT_NEW_MANY), [
        agentId, owner, this.#cap, given.map((one) => one.contextId), given.map((one) => one.json), given.map((one) => one.createdAt),
        given.map((one) => one.updatedAt), given.map((one) => JSON.stringify(one.taskIds)), given.map((one) => one.answers)
      ])
    } catch (error) {
      if (!isStatementError(error)) {
        for (const { reject } of batch) reject(error)
        return
      }
      // Refused whole, nothing of it written: one at a time, each its own answer (a refusal at the cap among them).
      for (const { conversation, resolve, reject } of batch) await this.#alone(agentId, owner, conversation, []).then(resolve, reject)
      return
    }
    batch.forEach(({ resolve }, index) => { resolve(rows[index].inserted) })
  }
}
