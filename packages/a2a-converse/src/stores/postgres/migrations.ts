/**
 * The schema the PostgreSQL stores need, created at start by the app: idempotent, and safe when several
 * instances start at once (Kysely's Migrator holds a PostgreSQL advisory lock around each run and records what
 * ran in a ledger table; the ledger and lock tables are created race-tolerantly).
 *
 * Two histories:
 * - `tasks`: the table of @a2a-js/sdk's `DatabaseTaskStore`, created exactly as the SDK's own migration
 *   (`a2a-db upgrade`, migration `0001_create_tasks`) creates it, recorded in the SDK CLI's ledger
 *   (`a2a_tasks_migrations`), so `a2a-db status` sees it as migrated and either tool may create it first.
 * - `converse`: our tables (conversations, their task index, spilled task events, turn locks, upstream ownership
 *   records, push configs and outbox, the answer log), ledger `converse_migrations`.
 *
 * This module is the runner (the histories in order, the ledgers); the migrations' SQL is in
 * task-table-migrations.ts, conversation-migrations.ts, push-migrations.ts and record-migrations.ts.
 */
import type { Kysely, Migration } from 'kysely'
import { Migrator, sql } from '../../peers/postgres.js'
import { assertSchemaName } from './postgres-database.js'
import { withSchemaIntrospection } from './schema-introspection.js'
import { addCallerBounds, countOwnedConversations, createConverseTables, refuseOwnedPastCap } from './conversation-migrations.js'
import { addOutboxTraceContext, createPushTables } from './push-migrations.js'
import { createAgentTables, createAnswerLog, createUpstreamOwnership } from './record-migrations.js'
import { addTaskCallers, createTasks, createTakeTaskTurn, createTaskSaveSteps, createTaskStoreFunctions, createTaskTurnLocks, widenTaskIds } from './task-table-migrations.js'
import { CONVERSE_MIGRATION_LOCK_TABLE, CONVERSE_MIGRATION_TABLE, TASK_MIGRATION_LOCK_TABLE, TASK_MIGRATION_TABLE } from './table-names.js'

// The stores import the table names from here, where the schema is made (their one list: table-names.ts).
export * from './table-names.js'

export interface MigrateOptions {
  /** The schema to create (if missing) and migrate. Default: the connection's `current_schema()`. */
  schema?: string
}

export interface MigrationReport {
  schema: string
  /** What this call applied, as `history/name` (empty when the schema was up to date). */
  applied: string[]
}

interface History {
  name: string
  ledger: string
  lock: string
  migrations: Record<string, Migration>
}

function histories (schema: string): History[] {
  return [
    { name: 'tasks', ledger: TASK_MIGRATION_TABLE, lock: TASK_MIGRATION_LOCK_TABLE, migrations: { '0001_create_tasks': createTasks(schema) } },
    {
      name: 'converse',
      ledger: CONVERSE_MIGRATION_TABLE,
      lock: CONVERSE_MIGRATION_LOCK_TABLE,
      migrations: {
        '0001_converse_tables': createConverseTables(schema),
        '0002_wide_task_ids': widenTaskIds(schema),
        '0003_task_turn_locks': createTaskTurnLocks(schema),
        '0004_upstream_ownership': createUpstreamOwnership(schema),
        '0005_task_callers': addTaskCallers(schema),
        '0006_caller_bounds': addCallerBounds(schema),
        '0007_conversation_owner_counts': countOwnedConversations(schema),
        '0008_push_notifications': createPushTables(schema),
        '0009_answer_log': createAnswerLog(schema),
        '0010_push_outbox_trace': addOutboxTraceContext(schema),
        '0011_agents': createAgentTables(schema),
        '0012_task_store_functions': createTaskStoreFunctions(schema),
        '0013_conversation_cap_in_count': refuseOwnedPastCap(schema),
        '0014_task_save_steps': createTaskSaveSteps(schema),
        '0015_take_task_turn': createTakeTaskTurn(schema)
      }
    }
  ]
}

/** Every migration `migrate` applies, as `history/name`, in order (the cluster template is named after them). */
export function migrationNames (): string[] {
  return histories('public').flatMap((history) => Object.keys(history.migrations).map((name) => `${history.name}/${name}`))
}

/** Creates the schema if missing and applies what is pending. Throws when a migration fails (nothing of it stays). */
export async function migrate (db: Kysely<any>, options: MigrateOptions = {}): Promise<MigrationReport> {
  let schema = options.schema
  if (schema === undefined) {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
    if (rows[0].schema === null) throw new Error('migrate: the connection has no current schema (its search_path names no existing schema); pass the schema option')
    schema = rows[0].schema
  } else {
    assertSchemaName(schema)
  }
  const applied: string[] = []
  for (const history of histories(schema)) {
    const migrator = new Migrator({
      db: withSchemaIntrospection(db, schema),
      provider: { getMigrations: async () => history.migrations },
      migrationTableName: history.ledger,
      migrationLockTableName: history.lock,
      migrationTableSchema: schema
    })
    const { error, results = [] } = await migrator.migrateToLatest()
    if (error !== undefined) {
      const failed = results.find((result) => result.status === 'Error')
      const where = failed === undefined ? '' : ` in "${failed.migrationName}"`
      throw new Error(`migrate: the ${history.name} schema failed${where}: ${String(error)}`, { cause: error })
    }
    for (const result of results) if (result.status === 'Success') applied.push(`${history.name}/${result.migrationName}`)
  }
  return { schema, applied }
}
