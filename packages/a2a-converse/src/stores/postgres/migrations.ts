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
 */
import type { Kysely, Migration } from 'kysely'
import { Migrator, sql, TASK_TABLE } from '../../peers/postgres.js'
import { assertSchemaName } from './postgres-database.js'
import { taskStoreFunctions } from './task-store-functions.js'

/** The SDK CLI's ledger of its task store (`a2a_${tableName}_migrations`) and its lock table. */
export const TASK_MIGRATION_TABLE = `a2a_${TASK_TABLE}_migrations`
export const TASK_MIGRATION_LOCK_TABLE = 'a2a_migrations_lock'
export const CONVERSE_MIGRATION_TABLE = 'converse_migrations'
export const CONVERSE_MIGRATION_LOCK_TABLE = 'converse_migrations_lock'

export const CONVERSATIONS_TABLE = 'converse_conversations'
export const CONVERSATION_TASKS_TABLE = 'converse_conversation_tasks'
export const TASK_EVENTS_TABLE = 'converse_task_events'
export const TASK_TURN_LOCKS_TABLE = 'converse_task_turn_locks'
export const UPSTREAM_TASKS_TABLE = 'converse_upstream_tasks'
export const UPSTREAM_CONTEXTS_TABLE = 'converse_upstream_contexts'
export const TASK_RESERVATIONS_TABLE = 'converse_task_reservations'
export const CONVERSATION_OWNERS_TABLE = 'converse_conversation_owners'
export const PUSH_CONFIGS_TABLE = 'converse_push_configs'
export const PUSH_OUTBOX_TABLE = 'converse_push_outbox'
export const ANSWERS_TABLE = 'converse_answers'
export const AGENTS_TABLE = 'converse_agents'
export const AGENT_VERSIONS_TABLE = 'converse_agent_versions'

export interface MigrateOptions {
  /** The schema to create (if missing) and migrate. Default: the connection's `current_schema()`. */
  schema?: string
}

export interface MigrationReport {
  schema: string
  /** What this call applied, as `history/name` (empty when the schema was up to date). */
  applied: string[]
}

/** Unqualified DDL, like the SDK's: the migration's transaction looks names up in the target schema only. */
async function useSchema (db: Kysely<any>, schema: string): Promise<void> {
  await sql`select set_config('search_path', quote_ident(${schema}), true)`.execute(db)
}

/** The SDK's `0001_create_tasks` for PostgreSQL, builder call for builder call (dist/cli/run.js, `createTasks`). */
function createTasks (schema: string): Migration {
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

const CONVERSE_TABLES = [
  `create sequence ${CONVERSATIONS_TABLE}_write_seq`,
  // state is NULL only inside the transaction that creates the conversation (the row exists to be locked).
  `create table ${CONVERSATIONS_TABLE} (
    agent_id text collate "C" not null,
    context_id text collate "C" not null,
    state jsonb,
    version integer not null default 0,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    write_seq bigint not null default nextval('${CONVERSATIONS_TABLE}_write_seq'),
    constraint ${CONVERSATIONS_TABLE}_pkey primary key (agent_id, context_id)
  )`,
  `alter sequence ${CONVERSATIONS_TABLE}_write_seq owned by ${CONVERSATIONS_TABLE}.write_seq`,
  `create index ${CONVERSATIONS_TABLE}_agent_recent_idx on ${CONVERSATIONS_TABLE} (agent_id, write_seq desc)`,
  `create table ${CONVERSATION_TASKS_TABLE} (
    agent_id text collate "C" not null,
    task_id text collate "C" not null,
    context_id text collate "C" not null,
    constraint ${CONVERSATION_TASKS_TABLE}_pkey primary key (agent_id, task_id),
    constraint ${CONVERSATION_TASKS_TABLE}_conversation_fkey foreign key (agent_id, context_id)
      references ${CONVERSATIONS_TABLE} (agent_id, context_id) on delete cascade
  )`,
  `create index ${CONVERSATION_TASKS_TABLE}_context_idx on ${CONVERSATION_TASKS_TABLE} (agent_id, context_id)`,
  `create table ${TASK_EVENTS_TABLE} (
    id bigserial primary key,
    task_id text not null,
    event text not null,
    created_at timestamptz not null default now()
  )`,
  `create index ${TASK_EVENTS_TABLE}_created_idx on ${TASK_EVENTS_TABLE} (created_at)`
]

function createConverseTables (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of CONVERSE_TABLES) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * The SDK's task table keeps ids and contextIds in varchar(36) (a UUID): a client's `session-<uuid>` (44) would
 * be refused there while memory takes it. Both become text (a metadata-only change, no table rewrite); the
 * request check bounds every id at MAX_ID_LENGTH (128), the same for every store. In our history (the SDK's
 * ledger must only hold the SDK's migrations), after the task table exists.
 */
function widenTaskIds (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      await sql.raw(`alter table ${TASK_TABLE}
        alter column id type text collate "C",
        alter column context_id type text collate "C"`).execute(db)
    }
  }
}

/**
 * The per-task turn lock shared by instances (packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.ts): one lease row per
 * task with a turn running; its holder deletes it when the turn ends. Unlogged: a lease is worth nothing after a
 * server crash (the turns it guarded lost their connections too), and without WAL taking and releasing one waits
 * for no disk flush (1.4 ms instead of 6.5 ms per turn here).
 */
function createTaskTurnLocks (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      await sql.raw(`create unlogged table ${TASK_TURN_LOCKS_TABLE} (
        lock_key text collate "C" not null,
        holder text not null,
        expires_at timestamptz not null,
        constraint ${TASK_TURN_LOCKS_TABLE}_pkey primary key (lock_key)
      )`).execute(db)
    }
  }
}

/**
 * Who owns each task and context of an upstream agent (proxy mode; packages/a2a-converse/src/stores/upstream-ownership-store.ts): the
 * upstream does not know the gateway's callers, so every instance reads these records to keep callers apart. `seq`
 * orders a caller's tasks for ListTasks (newest recorded first) and is its page position.
 */
function createUpstreamOwnership (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `create table ${UPSTREAM_TASKS_TABLE} (
          agent_id text collate "C" not null,
          task_id text collate "C" not null,
          owner text collate "C" not null,
          context_id text collate "C",
          seq bigserial not null,
          recorded_at timestamptz not null default now(),
          constraint ${UPSTREAM_TASKS_TABLE}_pkey primary key (agent_id, task_id)
        )`,
        `create index ${UPSTREAM_TASKS_TABLE}_owner_idx on ${UPSTREAM_TASKS_TABLE} (agent_id, owner, seq desc)`,
        `create index ${UPSTREAM_TASKS_TABLE}_owner_context_idx on ${UPSTREAM_TASKS_TABLE} (agent_id, owner, context_id, seq desc)`,
        `create table ${UPSTREAM_CONTEXTS_TABLE} (
          agent_id text collate "C" not null,
          context_id text collate "C" not null,
          owner text collate "C" not null,
          recorded_at timestamptz not null default now(),
          constraint ${UPSTREAM_CONTEXTS_TABLE}_pkey primary key (agent_id, context_id)
        )`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * Per-caller open-task caps on PostgreSQL as in memory (MAX_OPEN_TASKS_PER_CALLER): each task row records whose
 * open work it is (`caller_key`: the agent and the caller key of the request that first saved it), and a partial
 * index holds the open ones, so the count a new task costs reads at most the cap's entries of one caller.
 */
function addTaskCallers (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      await sql.raw(`alter table ${TASK_TABLE} add column caller_key text collate "C"`).execute(db)
      await sql.raw(`create index ${TASK_TABLE}_open_by_caller_idx on ${TASK_TABLE} (caller_key)
        where status_state is null or status_state not in (${OPEN_EXCLUDED})`).execute(db)
    }
  }
}

/**
 * Per-caller bounds decided before a turn writes anything (docs/guarantees.md):
 * - each conversation records the caller key of the request that created it (`owner`, MAX_CONVERSATIONS_PER_CALLER),
 *   indexed per agent and owner in write order (the count, and the owner's least recently updated one to evict);
 * - a new task's slot under MAX_OPEN_TASKS_PER_CALLER is reserved before its turn is recorded and taken by the task's
 *   first save. Unlogged, as the turn locks: a reservation outlives its turn by seconds at most (expires_at).
 */
function addCallerBounds (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `alter table ${CONVERSATIONS_TABLE} add column owner text collate "C"`,
        `create index ${CONVERSATIONS_TABLE}_owner_idx on ${CONVERSATIONS_TABLE} (agent_id, owner, write_seq) where owner is not null`,
        `create unlogged table ${TASK_RESERVATIONS_TABLE} (
          caller_key text collate "C" not null,
          task_id text collate "C" not null,
          expires_at timestamptz not null,
          constraint ${TASK_RESERVATIONS_TABLE}_pkey primary key (caller_key, task_id)
        )`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * How many conversations each owner holds per agent, kept by a trigger on every row change, so that the cap's check
 * and the overflow's size read one row instead of counting the owner's conversations (a count of up to
 * MAX_CONVERSATIONS_PER_CALLER rows on every new conversation: 1.4 ms and 4.8 ms on the embedded database at 550).
 * A row counts when it has an owner and a state (a placeholder row, state NULL, does not). The counter row is
 * locked by the change until it commits, so two new conversations of one owner count one after the other.
 */
function countOwnedConversations (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `create table ${CONVERSATION_OWNERS_TABLE} (
          agent_id text collate "C" not null,
          owner text collate "C" not null,
          held integer not null,
          constraint ${CONVERSATION_OWNERS_TABLE}_pkey primary key (agent_id, owner)
        )`,
        `insert into ${CONVERSATION_OWNERS_TABLE} (agent_id, owner, held)
          select agent_id, owner, count(*) from ${CONVERSATIONS_TABLE} where owner is not null and state is not null
          group by agent_id, owner`,
        `create function ${CONVERSATION_OWNERS_TABLE}_count () returns trigger language plpgsql as $$
        declare
          was boolean := tg_op <> 'INSERT' and old.owner is not null and old.state is not null;
          is_now boolean := tg_op <> 'DELETE' and new.owner is not null and new.state is not null;
          moved boolean := was and is_now and (old.agent_id, old.owner) is distinct from (new.agent_id, new.owner);
        begin
          if was and (moved or not is_now) then
            update ${CONVERSATION_OWNERS_TABLE} set held = held - 1 where agent_id = old.agent_id and owner = old.owner;
          end if;
          if is_now and (moved or not was) then
            insert into ${CONVERSATION_OWNERS_TABLE} as counted (agent_id, owner, held) values (new.agent_id, new.owner, 1)
              on conflict (agent_id, owner) do update set held = counted.held + 1;
          end if;
          return null;
        end $$`,
        `create trigger ${CONVERSATION_OWNERS_TABLE}_count after insert or delete or update of owner, state, agent_id
          on ${CONVERSATIONS_TABLE} for each row execute function ${CONVERSATION_OWNERS_TABLE}_count()`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * Push notifications (docs/push.md):
 * - configs, in the scope of their task (tenant, the agent-prefixed owner, task id), with the caller key that created
 *   each (MAX_PUSH_CONFIGS_PER_CALLER counts by agent and caller key);
 * - the outbox: one row per notification, written in the transaction of the task save it reports, deleted once
 *   delivered or given up. `seq` orders a task's notifications per config; an instance claims a row only when no
 *   earlier row of its task and config is left (the queue index), for a lease (`claimed_until`).
 */
function createPushTables (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `create table ${PUSH_CONFIGS_TABLE} (
          tenant text collate "C" not null,
          owner text collate "C" not null,
          task_id text collate "C" not null,
          id text collate "C" not null,
          agent_id text collate "C" not null,
          caller_key text collate "C" not null,
          config text not null,
          converse boolean not null,
          constraint ${PUSH_CONFIGS_TABLE}_pkey primary key (tenant, owner, task_id, id)
        )`,
        `create index ${PUSH_CONFIGS_TABLE}_caller_idx on ${PUSH_CONFIGS_TABLE} (agent_id, caller_key)`,
        `create table ${PUSH_OUTBOX_TABLE} (
          seq bigserial primary key,
          agent_id text collate "C" not null,
          tenant text collate "C" not null,
          owner text collate "C" not null,
          task_id text collate "C" not null,
          config_id text collate "C" not null,
          target text not null,
          converse boolean not null,
          event text not null,
          notification_id uuid not null,
          recorded_at timestamptz not null default now(),
          attempts integer not null default 0,
          next_attempt_at timestamptz not null default now(),
          claimed_until timestamptz
        )`,
        `create index ${PUSH_OUTBOX_TABLE}_queue_idx on ${PUSH_OUTBOX_TABLE} (tenant, owner, task_id, config_id, seq)`,
        `create index ${PUSH_OUTBOX_TABLE}_due_idx on ${PUSH_OUTBOX_TABLE} (next_attempt_at)`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * The outbox keeps the W3C trace context of the turn that recorded each notification (`traceparent`, `tracestate`;
 * null when the turn had none), so a delivery from any instance, after any restart, continues that trace.
 */
function addOutboxTraceContext (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      await sql.raw(`alter table ${PUSH_OUTBOX_TABLE} add column traceparent text, add column tracestate text`).execute(db)
    }
  }
}

/**
 * The answer log (packages/a2a-converse/src/stores/answer-log.ts, docs/knowledge-gaps.md): one row per agent answer a conversation write
 * added, in write order (`seq`), at the store's clock (`at`, epoch ms: the chart's buckets are integer arithmetic,
 * the same in memory). `question_key` is the grouping key computed on write, in the "C" collation so that the list's
 * order is code point order in both stores. Indexed per agent in write order (the cap, the prune) and by time (the
 * windows).
 */
function createAnswerLog (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `create table ${ANSWERS_TABLE} (
          seq bigserial primary key,
          agent_id text collate "C" not null,
          context_id text collate "C" not null,
          at bigint not null,
          availability text not null,
          coverage text,
          reason text,
          question text not null,
          question_key text collate "C" not null
        )`,
        `create index ${ANSWERS_TABLE}_agent_seq_idx on ${ANSWERS_TABLE} (agent_id, seq)`,
        `create index ${ANSWERS_TABLE}_agent_at_idx on ${ANSWERS_TABLE} (agent_id, at)`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * Agents published through the operator API (packages/a2a-converse/src/stores/postgres/postgres-agent-store.ts): one row per agent, its
 * definition as JSON text and its version; and the audit, one row per change (an unpublish's too), kept after the
 * agent's row goes so that a later publish of the id continues its numbering.
 */
function createAgentTables (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of [
        `create table ${AGENTS_TABLE} (
          id text collate "C" primary key,
          version integer not null,
          definition text not null,
          updated_at bigint not null,
          updated_by text not null
        )`,
        `create table ${AGENT_VERSIONS_TABLE} (
          agent_id text collate "C" not null,
          version integer not null,
          at bigint not null,
          by text not null,
          change text not null,
          detail text,
          primary key (agent_id, version)
        )`
      ]) await sql.raw(statement).execute(db)
    }
  }
}

/**
 * The task store's reservation and save as SQL functions (task-store-functions.ts): one statement, one round trip
 * each, on the server and on the embedded database (issue 43).
 */
function createTaskStoreFunctions (schema: string): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      const tables = { tasks: TASK_TABLE, reservations: TASK_RESERVATIONS_TABLE, pushConfigs: PUSH_CONFIGS_TABLE, pushOutbox: PUSH_OUTBOX_TABLE }
      for (const statement of taskStoreFunctions(tables)) await sql.raw(statement).execute(db)
    }
  }
}

/** The terminal states as the task table writes them (status_state). */
const OPEN_EXCLUDED = "'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED'"

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
        '0012_task_store_functions': createTaskStoreFunctions(schema)
      }
    }
  ]
}

/** Every migration `migrate` applies, as `history/name`, in order (the cluster template is named after them). */
export function migrationNames (): string[] {
  return histories('public').flatMap((history) => Object.keys(history.migrations).map((name) => `${history.name}/${name}`))
}

const MIGRATE_RETRIES = 3

/**
 * Kysely's Migrator looks its ledger up by listing every table of the database; a schema another client drops at
 * that moment (3F000, invalid_schema_name, naming a schema that is not ours) fails that listing, not our
 * migration: run it again, a few times at most.
 */
export async function retryOnConcurrentSchemaDrop<T extends { error?: unknown }> (run: () => Promise<T>, schema: string): Promise<T> {
  let outcome = await run()
  for (let retry = 0; retry < MIGRATE_RETRIES && isConcurrentSchemaDrop(outcome.error, schema); retry++) outcome = await run()
  return outcome
}

function isConcurrentSchemaDrop (error: unknown, schema: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  return code === '3F000' && typeof message === 'string' && !message.includes(`"${schema}"`)
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
      db,
      provider: { getMigrations: async () => history.migrations },
      migrationTableName: history.ledger,
      migrationLockTableName: history.lock,
      migrationTableSchema: schema
    })
    const { error, results = [] } = await retryOnConcurrentSchemaDrop(() => migrator.migrateToLatest(), schema)
    if (error !== undefined) {
      const failed = results.find((result) => result.status === 'Error')
      const where = failed === undefined ? '' : ` in "${failed.migrationName}"`
      throw new Error(`migrate: the ${history.name} schema failed${where}: ${String(error)}`, { cause: error })
    }
    for (const result of results) if (result.status === 'Success') applied.push(`${history.name}/${result.migrationName}`)
  }
  return { schema, applied }
}
