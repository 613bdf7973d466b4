/**
 * The migrations of the task table and what a task's turn needs beside it: the SDK's own `0001_create_tasks` (the
 * `tasks` history), then ours on it (wider ids, the callers' open work, the turn locks, the save as SQL functions).
 * Apart from the runner (migrations.ts), which only orders the histories.
 */
import type { Migration } from 'kysely'
import { sql, TASK_TABLE } from '../../peers/postgres.js'
import { sqlMigration, useSchema } from './sql-migration.js'
import { PUSH_CONFIGS_TABLE, PUSH_OUTBOX_TABLE, TASK_RESERVATIONS_TABLE, TASK_TURN_LOCKS_TABLE } from './table-names.js'
import { taskSaveStepsFunctions, taskStoreFunctions } from './task-store-functions.js'
import { takeTaskTurnFunction } from './take-task-turn-function.js'

/** The SDK's `0001_create_tasks` for PostgreSQL, builder call for builder call (dist/cli/run.js, `createTasks`). */
export function createTasks (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      const collatedVarchar255 = sql.raw('varchar(255) collate "C"')
      const collatedVarchar36 = sql.raw('varchar(36) collate "C"')
      const payload = sql.raw('text')
      await db.schema.createTable(TASK_TABLE)
        .addColumn('tenant', collatedVarchar255, (column) => column.notNull())
        .addColumn('owner', collatedVarchar255, (column) => column.notNull())
        .addColumn('id', collatedVarchar36, (column) => column.notNull())
        .addColumn('context_id', collatedVarchar36, (column) => column.notNull())
        .addColumn('status_last_updated', 'bigint', (column) => column.notNull())
        .addColumn('status_state', collatedVarchar255)
        .addColumn('status', payload)
        .addColumn('artifacts', payload)
        .addColumn('history', payload)
        .addColumn('metadata', payload)
        .addColumn('protocol_version', 'varchar(255)')
        .addPrimaryKeyConstraint(`${TASK_TABLE}_pkey`, ['tenant', 'owner', 'id'])
        .execute()
      await db.schema.createIndex(`${TASK_TABLE}_scope_updated_idx`).on(TASK_TABLE)
        .columns(['tenant', 'owner', 'status_last_updated', 'id']).execute()
      await db.schema.createIndex(`${TASK_TABLE}_scope_context_updated_idx`).on(TASK_TABLE)
        .columns(['tenant', 'owner', 'context_id', 'status_last_updated', 'id']).execute()
    }
  }
}

/**
 * The SDK's task table keeps ids and contextIds in varchar(36) (a UUID): a client's `session-<uuid>` (44) would
 * be refused there while memory takes it. Both become text (a metadata-only change, no table rewrite); the
 * request check bounds every id at MAX_ID_LENGTH (128), the same for every store. In our history (the SDK's
 * ledger must only hold the SDK's migrations), after the task table exists.
 */
export function widenTaskIds (schema: string): Migration {
  return sqlMigration(schema, [
    `alter table ${TASK_TABLE}
        alter column id type text collate "C",
        alter column context_id type text collate "C"`
  ])
}

/**
 * The per-task turn lock shared by instances (packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.ts): one lease row per
 * task with a turn running; its holder deletes it when the turn ends. Unlogged: a lease is worth nothing after a
 * server crash (the turns it guarded lost their connections too), and without WAL taking and releasing one waits
 * for no disk flush (1.4 ms instead of 6.5 ms per turn here).
 */
export function createTaskTurnLocks (schema: string): Migration {
  return sqlMigration(schema, [
    `create unlogged table ${TASK_TURN_LOCKS_TABLE} (
        lock_key text collate "C" not null,
        holder text not null,
        expires_at timestamptz not null,
        constraint ${TASK_TURN_LOCKS_TABLE}_pkey primary key (lock_key)
      )`
  ])
}

/** The terminal states as the task table writes them (status_state). */
const OPEN_EXCLUDED = "'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED'"

/**
 * Per-caller open-task caps on PostgreSQL as in memory (MAX_OPEN_TASKS_PER_CALLER): each task row records whose
 * open work it is (`caller_key`: the agent and the caller key of the request that first saved it), and a partial
 * index holds the open ones, so the count a new task costs reads at most the cap's entries of one caller.
 */
export function addTaskCallers (schema: string): Migration {
  return sqlMigration(schema, [
    `alter table ${TASK_TABLE} add column caller_key text collate "C"`,
    `create index ${TASK_TABLE}_open_by_caller_idx on ${TASK_TABLE} (caller_key)
        where status_state is null or status_state not in (${OPEN_EXCLUDED})`
  ])
}

/**
 * The task store's reservation and save as SQL functions (task-store-functions.ts): one statement, one round trip
 * each, on the server and on the embedded database (issue 43).
 */
export function createTaskStoreFunctions (schema: string): Migration {
  const tables = { tasks: TASK_TABLE, reservations: TASK_RESERVATIONS_TABLE, pushConfigs: PUSH_CONFIGS_TABLE, pushOutbox: PUSH_OUTBOX_TABLE }
  return sqlMigration(schema, taskStoreFunctions(tables))
}

/**
 * A blocking turn's deferred saves of its task as one statement (task-store-functions.ts, `converse_save_task_steps`;
 * issue 43).
 */
export function createTaskSaveSteps (schema: string): Migration {
  return sqlMigration(schema, taskSaveStepsFunctions())
}

/**
 * A task turn's lease taken and its task read in one statement (take-task-turn-function.ts,
 * `converse_take_task_turn`; issue 43).
 */
export function createTakeTaskTurn (schema: string): Migration {
  return sqlMigration(schema, takeTaskTurnFunction())
}
