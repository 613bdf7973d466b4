/**
 * The conversation store's writes joined to a request's deferred task saves (joined-conversation-writes.ts,
 * deferred-task-saves.ts): the conditional write and the new conversation's insert of conversation-statements.ts,
 * each with the saves' function called from the row it wrote, in one autocommit statement; and the insert after a new
 * task's reservation alone.
 */
import type pg from 'pg'
import { PRUNING_NEW, PRUNING_UNCHANGED, newInsert, prepared, unchangedWrite } from './conversation-statements.js'

/**
 * A conversation's write (`writes`: its common table expressions; `conversation` returns the version written) and the
 * request's deferred task saves (deferred-task-saves.ts: `fn`, our SQL function, with `arity` arguments from `$first`)
 * in one autocommit statement. The call runs only when the conversation was written (a function in the select list of
 * the written row: no row, no call): a write that finds its row moved or taken writes nothing at all. One row: the
 * version (NULL: nothing written), the call's `outcome`, `stored_state` and `pushed`, and `reservation` (the outcome
 * of `writes`' `reserved`, when it has one).
 */
function withSaves (writes: string, first: number, fn: string, arity: number, reserved = false): string {
  return `${writes}, saved as (
    select ${fn}(${args(first, arity)}) as steps from conversation
  )
  select (select version from conversation) as version, (saved.steps).outcome, (saved.steps).stored_state, (saved.steps).pushed,
    ${reserved ? '(select outcome from reserved)' : 'null::text'} as reservation
    from (select 1) as one left join saved on true`
}

/** `$first`, … for `arity` parameters. */
function args (first: number, arity: number): string {
  return Array.from({ length: arity }, (_, index) => `$${first + index}`).join(', ')
}

/** WRITE_IF_UNCHANGED (`pruning`: its _PRUNING variant) with the request's deferred task saves (withSaves). */
export function writeIfUnchangedWith (pruning: boolean, fn: string, arity: number): string {
  return withSaves(unchangedWrite(pruning ? PRUNING_UNCHANGED : ''), pruning ? 11 : 9, fn, arity)
}
/**
 * INSERT_NEW (`pruning`: its _PRUNING variant) with the request's deferred task saves (withSaves), after the new
 * task's `reservation` (its function and arity; parameters after the saves') when one is pending.
 */
export function insertNewWith (pruning: boolean, fn: string, arity: number, reservation?: { fn: string, arity: number }): string {
  const first = pruning ? 12 : 10
  const reserve = reservation === undefined ? '' : `${reservation.fn}(${args(first + arity, reservation.arity)})`
  return withSaves(newInsert(pruning ? PRUNING_NEW : '', reserve), first, fn, arity, reserve !== '')
}

/**
 * INSERT_NEW (`pruning`: its _PRUNING variant) after the new task's `reservation` (its function and arity; parameters
 * after INSERT_NEW's), without saves: one row, the version (NULL: nothing inserted — the conversation exists, or the
 * reservation was refused) and `reservation`, its outcome.
 */
export function insertNewReserving (pruning: boolean, reservation: { fn: string, arity: number }): string {
  const first = pruning ? 12 : 10
  return `${newInsert(pruning ? PRUNING_NEW : '', `${reservation.fn}(${args(first, reservation.arity)})`)}
  select (select version from conversation) as version, (select outcome from reserved) as reservation`
}

/** The names given to the texts above (a few: one per variant), in the order first used. */
const names = new Map<string, string>()

/**
 * `text` as a prepared statement (conversation-statements.ts `prepared`), named after the order its text was first
 * seen: a name of its parts would pass PostgreSQL's 63 characters, which cuts it and lets two variants share one.
 */
export function preparedJoined (text: string): pg.QueryConfig {
  let name = names.get(text)
  if (name === undefined) {
    name = `converse_joined_${names.size + 1}`
    names.set(text, name)
  }
  return prepared(name, text)
}
