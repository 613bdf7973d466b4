/**
 * The task store's save statements (task-store-functions.ts): one save (`converse_save_task`) or a request's deferred
 * saves in order (`converse_save_task_steps`, deferred-task-saves.ts; with the turn lock's lease row deleted, the
 * turn's last write on a server), each one statement, so one round trip. A push
 * config of the task to re-seal first (CONFIG_TO_RESEAL: nothing was written) is re-sealed, and the statement run
 * again.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { Kysely } from 'kysely'
import { sql } from '../../peers/postgres.js'
import { currentPrefix, type SecretBox } from '../secret-box.js'
import { traceContextIn, traceHeadersFor } from '../../telemetry/tracing.js'
import { resealTaskPushConfigs } from './postgres-push-config-store.js'
import { CONFIG_TO_RESEAL, SAVE_TASK_FUNCTION, SAVE_TASK_STEPS_FUNCTION } from './task-store-functions.js'
import type { SavedRow } from './task-rows.js'
import type { DeferredSavesCall, JoinedOutcome, JoinedWrite } from '../deferred-task-saves.js'
import { ConversationMovedError } from '../errors.js'
import type { TurnLease } from '../task-turn-lock.js'
import { TASK_TURN_LOCKS_TABLE } from './table-names.js'

/** The SDK's payload format (the `protocol_version` column its rows carry). */
const PAYLOAD_FORMAT = '1.0'

/** What a save statement answers: `saved` (and whether the task has push configs), or why nothing was written. */
export interface SaveOutcome {
  outcome: 'saved' | 'finished' | 'capped' | 'refused'
  /** The stored task's state (status_state) when `finished`. */
  stored_state: string
  pushed: boolean
}

export interface TaskSaveScope {
  db: Kysely<any>
  ownerResolver: (context: ServerCallContext) => string
  callerResolver: (context: ServerCallContext) => string
  maxOpenTasksPerCaller: number
  push: { agentId: string, secrets?: SecretBox } | undefined
}

/** One save of the task; `mayInsert` false: a refused turn's task, not stored unless it is already. */
export async function saveTask (scope: TaskSaveScope, context: ServerCallContext, taskId: string, saved: SavedRow, mayInsert: boolean): Promise<SaveOutcome> {
  const row = saved.columns
  const values = [
    ...keyValues(scope, context, taskId),
    row.contextId, saved.statusLastUpdated, saved.state, row.status, row.artifacts, row.history, row.metadata,
    PAYLOAD_FORMAT, mayInsert, scope.maxOpenTasksPerCaller, ...pushValues(scope, context)
  ]
  return await resealed(scope, context, taskId, SAVE_TASK_FUNCTION, values)
}

/** What goes with a request's deferred saves in their statement (deferred-task-saves.ts). */
export interface WithSaves {
  /** Another store's write, which runs the statement with its own; found moved, nothing was written (ConversationMovedError). */
  joined?: JoinedWrite
  /** The new task's pending reservation, made ahead of `joined`'s insert. */
  reservation?: DeferredSavesCall
  /** The task's turn lock's lease row (held-task-turn.ts), deleted with the saves when `joined` is not given. */
  lease?: TurnLease
}

/** The saves of the task in order, in one statement: the outcome of the first not written, else `saved`. */
export async function saveTaskSteps (scope: TaskSaveScope, context: ServerCallContext, taskId: string, saves: readonly SavedRow[], withSaves: WithSaves = {}): Promise<SaveOutcome> {
  const column = <T>(of: (save: SavedRow) => T): T[] => saves.map(of)
  const values = [
    ...keyValues(scope, context, taskId),
    column((save) => save.columns.contextId), column((save) => save.statusLastUpdated), column((save) => save.state),
    column((save) => save.columns.status), column((save) => save.columns.artifacts), column((save) => save.columns.history),
    column((save) => save.columns.metadata), PAYLOAD_FORMAT, scope.maxOpenTasksPerCaller, ...pushValues(scope, context)
  ]
  return await resealed(scope, context, taskId, SAVE_TASK_STEPS_FUNCTION, values, withSaves)
}

/** The key columns of a save: tenant, owner, id and whose open work a new task is. */
function keyValues (scope: TaskSaveScope, context: ServerCallContext, taskId: string): unknown[] {
  return [context.tenant ?? '', scope.ownerResolver(context), taskId, scope.callerResolver(context)]
}

/** A save's push values: the agent, the current seal's prefix, the request's trace context. */
function pushValues ({ push }: TaskSaveScope, context: ServerCallContext): unknown[] {
  const trace = push === undefined ? undefined : traceHeadersFor(traceContextIn(context.state))
  return [push?.agentId ?? null, push?.secrets === undefined ? null : currentPrefix(push.secrets), trace?.traceparent ?? null, trace?.tracestate ?? null]
}

/** A joined write (deferred-task-saves.ts) alone, the request having saved nothing; found moved, it rejects. */
export async function writeJoined (joined: JoinedWrite | undefined): Promise<void> {
  if (joined !== undefined) joinedRow(await joined.write(undefined))
}

/**
 * A joined write's row; its new task's reservation refused, `capped` (nothing written); found moved, nothing of the
 * turn was written: ConversationMovedError.
 */
function joinedRow (outcome: JoinedOutcome): Record<string, unknown> | undefined {
  if (outcome.written) return outcome.row
  if (outcome.reservation === 'capped') return CAPPED
  throw new ConversationMovedError()
}

const CAPPED = { outcome: 'capped', stored_state: '', pushed: false }

/**
 * `fn`'s call with `lease` deleted in the same statement (a data-modifying CTE runs whether or not it is read), and
 * whether it deleted it: the release then sends nothing (TurnLease).
 */
async function callReleasing (scope: TaskSaveScope, fn: string, values: unknown[], lease: TurnLease): Promise<SaveOutcome> {
  const { rows: [row] } = await sql<SaveOutcome & { released: boolean }>`with released as (
      delete from ${sql.raw(TASK_TURN_LOCKS_TABLE)} where lock_key = ${lease.key} and holder = ${lease.holder} returning 1
    )
    select outcome, stored_state, pushed, exists (select 1 from released) as released from ${sql.raw(fn)}(${sql.join(values)})`.execute(scope.db)
  if (row.released) lease.deleted()
  return { outcome: row.outcome, stored_state: row.stored_state, pushed: row.pushed }
}

async function resealed (scope: TaskSaveScope, context: ServerCallContext, taskId: string, fn: string, values: unknown[], { joined, reservation, lease }: WithSaves = {}): Promise<SaveOutcome> {
  const statement = async (): Promise<SaveOutcome> => {
    if (joined !== undefined) return joinedRow(await joined.write({ fn, values }, reservation)) as unknown as SaveOutcome
    if (lease !== undefined) return await callReleasing(scope, fn, values, lease)
    const { rows } = await sql<SaveOutcome>`select outcome, stored_state, pushed from ${sql.raw(fn)}(${sql.join(values)})`.execute(scope.db)
    return rows[0]
  }
  try {
    return await statement()
  } catch (error) {
    if ((error as { code?: unknown }).code !== CONFIG_TO_RESEAL) throw error
    // A config of the task sealed with a previous key (or written in clear before a key was given): its outbox
    // rows are sealed with the current one, so it is re-sealed first (as resealPushSecrets would).
    await resealTaskPushConfigs(scope.db, context.tenant ?? '', scope.ownerResolver(context), taskId, scope.push?.secrets)
    return await statement()
  }
}
