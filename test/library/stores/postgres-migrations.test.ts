import t from 'tap'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL migrations', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const migrations = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { migrate } = migrations
  const { DatabaseTaskStore, TASK_TABLE } = await import('@a2a-js/sdk/server/database')
  const { ServerCallContext } = await import('@a2a-js/sdk/server')
  const { TaskState } = await import('@a2a-js/sdk')

  const run = `a2a_test_${process.pid}_${randomBytes(3).toString('hex')}`
  const schemas: string[] = []
  /** A schema name of this run (dropped at the end). */
  const newSchema = (): string => {
    schemas.push(`${run}_${schemas.length}`)
    return schemas[schemas.length - 1]
  }
  const opened: PostgresDatabase[] = []
  const open = (schema?: string): PostgresDatabase => {
    const database = createPostgresDatabase({ connectionString: url, schema, logger: { warn () {} } })
    opened.push(database)
    return database
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(async () => {
    for (const database of opened) await database.close()
    for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  const tablesOf = async (schema: string): Promise<string[]> => (await admin.query(
    'select table_name from information_schema.tables where table_schema = $1 order by table_name', [schema])).rows.map((row) => row.table_name)

  /** Columns, indexes and constraints of a table, with its schema's name taken out. */
  const shapeOf = async (schema: string, table: string): Promise<unknown> => ({
    columns: (await admin.query(`select column_name, data_type, character_maximum_length, collation_name, is_nullable, column_default
      from information_schema.columns where table_schema = $1 and table_name = $2 order by ordinal_position`, [schema, table])).rows,
    indexes: (await admin.query(`select indexname, replace(indexdef, $1 || '.', '') as def
      from pg_indexes where schemaname = $1 and tablename = $2 order by indexname`, [schema, table])).rows,
    constraints: (await admin.query(`select conname, pg_get_constraintdef(c.oid) as def from pg_constraint c
      join pg_class r on r.oid = c.conrelid join pg_namespace n on n.oid = r.relnamespace
      where n.nspname = $1 and r.relname = $2 order by conname`, [schema, table])).rows
  })

  t.test('a fresh schema, two instances migrating at once, then again: idempotent', async (t) => {
    const schema = newSchema()
    const a = open(schema)
    const b = open(schema)
    const [first, second] = await Promise.all([migrate(a.db, { schema }), migrate(b.db, { schema })])
    t.equal(first.schema, schema)
    t.same([...first.applied, ...second.applied].sort(), ['converse/0001_converse_tables', 'converse/0002_wide_task_ids', 'converse/0003_task_turn_locks', 'converse/0004_upstream_ownership', 'converse/0005_task_callers', 'converse/0006_caller_bounds', 'converse/0007_conversation_owner_counts', 'converse/0008_push_notifications', 'converse/0009_answer_log', 'converse/0010_push_outbox_trace', 'converse/0011_agents', 'converse/0012_task_store_functions', 'converse/0013_conversation_cap_in_count', 'converse/0014_task_save_steps', 'converse/0015_take_task_turn', 'tasks/0001_create_tasks'], 'each migration ran exactly once')
    t.same(await tablesOf(schema), [
      'a2a_migrations_lock', 'a2a_tasks_migrations', 'converse_agent_versions', 'converse_agents', 'converse_answers', 'converse_conversation_owners', 'converse_conversation_tasks', 'converse_conversations',
      'converse_migrations', 'converse_migrations_lock', 'converse_push_configs', 'converse_push_outbox', 'converse_task_events', 'converse_task_reservations', 'converse_task_turn_locks',
      'converse_upstream_contexts', 'converse_upstream_tasks', 'tasks'
    ])
    t.same(await migrate(a.db, { schema }), { schema, applied: [] }, 'nothing left to do')
    t.same((await admin.query(`select name from ${schema}.a2a_tasks_migrations`)).rows, [{ name: '0001_create_tasks' }], 'recorded in the SDK CLI\'s ledger')
    t.same((await admin.query(`select name from ${schema}.converse_migrations order by name`)).rows, [{ name: '0001_converse_tables' }, { name: '0002_wide_task_ids' }, { name: '0003_task_turn_locks' }, { name: '0004_upstream_ownership' }, { name: '0005_task_callers' }, { name: '0006_caller_bounds' }, { name: '0007_conversation_owner_counts' }, { name: '0008_push_notifications' }, { name: '0009_answer_log' }, { name: '0010_push_outbox_trace' }, { name: '0011_agents' }, { name: '0012_task_store_functions' }, { name: '0013_conversation_cap_in_count' }, { name: '0014_task_save_steps' }, { name: '0015_take_task_turn' }])

    const conversations = await shapeOf(schema, migrations.CONVERSATIONS_TABLE) as { columns: Array<{ column_name: string }>, indexes: unknown[], constraints: unknown[] }
    t.same(conversations.columns.map((column) => column.column_name), ['agent_id', 'context_id', 'state', 'version', 'created_at', 'updated_at', 'write_seq', 'owner'])
    t.match(conversations.constraints, [{ conname: 'converse_conversations_pkey', def: 'PRIMARY KEY (agent_id, context_id)' }])
    const tasks = await shapeOf(schema, migrations.CONVERSATION_TASKS_TABLE)
    t.match(tasks, {
      constraints: [
        { conname: 'converse_conversation_tasks_conversation_fkey', def: /^FOREIGN KEY \(agent_id, context_id\) REFERENCES \S*converse_conversations\(agent_id, context_id\) ON DELETE CASCADE$/ },
        { conname: 'converse_conversation_tasks_pkey', def: 'PRIMARY KEY (agent_id, task_id)' }
      ]
    })
    const owned = await shapeOf(schema, migrations.UPSTREAM_TASKS_TABLE) as { columns: Array<{ column_name: string }>, constraints: unknown[] }
    t.same(owned.columns.map((column) => column.column_name), ['agent_id', 'task_id', 'owner', 'context_id', 'seq', 'recorded_at'])
    t.match(owned.constraints, [{ conname: 'converse_upstream_tasks_pkey', def: 'PRIMARY KEY (agent_id, task_id)' }])
    const contexts = await shapeOf(schema, migrations.UPSTREAM_CONTEXTS_TABLE) as { constraints: unknown[] }
    t.match(contexts.constraints, [{ conname: 'converse_upstream_contexts_pkey', def: 'PRIMARY KEY (agent_id, context_id)' }])
  })

  t.test('the task table is the one the SDK\'s own migration creates, and DatabaseTaskStore works on it', async (t) => {
    // The SDK's migration, rendered by its CLI and run into a reference schema.
    const cli = fileURLToPath(new URL('../../../node_modules/@a2a-js/sdk/dist/cli/a2a_db.js', import.meta.url))
    const { stdout: sdkSql } = await promisify(execFile)(process.execPath, [cli, 'upgrade', '--sql', '--dialect', 'postgres', '--store', 'tasks', '--from', 'base'])
    t.match(sdkSql, /create table "tasks"/)
    const reference = newSchema()
    await admin.query(`create schema ${reference}`)
    const sdkClient = new pg.Client({ connectionString: url, options: `-c search_path=${reference}` })
    await sdkClient.connect()
    await sdkClient.query(sdkSql)
    await sdkClient.end()

    const ours = newSchema()
    const database = open(ours)
    await migrate(database.db, { schema: ours })
    t.same(await shapeOf(ours, migrations.TASK_MIGRATION_TABLE), await shapeOf(reference, migrations.TASK_MIGRATION_TABLE), 'same ledger')
    const sdkShape = await shapeOf(reference, TASK_TABLE)

    const onSdkSchema = await migrate(open(reference).db, { schema: reference })
    t.same(onSdkSchema.applied, ['converse/0001_converse_tables', 'converse/0002_wide_task_ids', 'converse/0003_task_turn_locks', 'converse/0004_upstream_ownership', 'converse/0005_task_callers', 'converse/0006_caller_bounds', 'converse/0007_conversation_owner_counts', 'converse/0008_push_notifications', 'converse/0009_answer_log', 'converse/0010_push_outbox_trace', 'converse/0011_agents', 'converse/0012_task_store_functions', 'converse/0013_conversation_cap_in_count', 'converse/0014_task_save_steps', 'converse/0015_take_task_turn'],
      'a schema the SDK CLI migrated: our tables are added, its id columns widened, a caller_key column added')
    t.same(await shapeOf(ours, TASK_TABLE), await shapeOf(reference, TASK_TABLE), 'then the same columns, types, collations, primary key and indexes')
    const { columns, indexes, ...keys } = sdkShape as { columns: Array<{ column_name: string, data_type: string, character_maximum_length: number | null }>, indexes: unknown[] }
    const { columns: ourColumns, indexes: ourIndexes, ...ourKeys } = await shapeOf(ours, TASK_TABLE) as typeof sdkShape & { columns: typeof columns, indexes: unknown[] }
    t.same(ourKeys, keys, 'the SDK\'s primary key')
    t.same(ourIndexes.filter((index) => !JSON.stringify(index).includes('open_by_caller')), indexes, 'the SDK\'s indexes, and one of ours (open tasks by caller)')
    t.same(ourColumns.filter((column) => column.column_name !== 'caller_key'), columns.map((column) => ['id', 'context_id'].includes(column.column_name)
      ? { ...column, data_type: 'text', character_maximum_length: null }
      : column), 'the SDK\'s columns, with id and context_id as text (collate "C") instead of varchar(36)')
    t.ok(ourColumns.some((column) => column.column_name === 'caller_key'), 'and caller_key (whose open work a task is)')

    const store = new DatabaseTaskStore(database.db)
    const context = new ServerCallContext()
    const task = {
      id: 'task-1',
      contextId: 'ctx-1',
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: '2026-01-01T00:00:00.000Z' },
      artifacts: [],
      history: [],
      metadata: { a: 1 }
    }
    await store.save(task, context)
    t.match(await store.load('task-1', context), { id: 'task-1', contextId: 'ctx-1', metadata: { a: 1 } })
    const longIds = { ...task, id: `task-${'t'.repeat(123)}`, contextId: `session-${'c'.repeat(120)}` }
    await store.save(longIds, context)
    t.match(await store.load(longIds.id, context), { id: longIds.id, contextId: longIds.contextId }, 'ids of 128 characters fit')
    await store.save({ ...longIds, id: 'task-2' }, new ServerCallContext({ tenant: 'x'.repeat(128) }))
    const listed = await store.list({ tenant: '', contextId: 'ctx-1', status: 0 as never, pageToken: '', statusTimestampAfter: undefined }, context)
    t.same(listed.tasks.map((entry) => entry.id), ['task-1'])
    t.equal((await admin.query(`select count(*)::int as n from ${ours}.tasks`)).rows[0].n, 3, 'in our schema')
  })

  t.test('the schema: default, validation, failures', async (t) => {
    const schema = newSchema()
    const database = open(schema) // search_path names a schema that does not exist yet
    await t.rejects(migrate(database.db), { message: /no current schema .* pass the schema option/ })
    await t.rejects(migrate(database.db, { schema: 'Not Valid' }), { code: 'A2A_CONVERSE_INVALID_OPTION' })
    await admin.query(`create schema ${schema}`)
    t.same((await migrate(database.db)).schema, schema, 'the connection\'s current schema by default')

    const clash = newSchema()
    await admin.query(`create schema ${clash}; create table ${clash}.tasks (id int)`)
    const failed = await migrate(open(clash).db, { schema: clash }).catch((error: unknown) => error)
    t.match((failed as Error).message, /^migrate: the tasks schema failed in "0001_create_tasks": error: relation "tasks" already exists/)
    t.match((failed as Error).cause, { code: '42P07' }, 'the cause is the database\'s error')
    t.notOk((await tablesOf(clash)).includes('converse_conversations'), 'stopped at the failure')
    t.same((await admin.query(`select count(*)::int as n from ${clash}.a2a_tasks_migrations`)).rows[0].n, 0, 'nothing recorded')

    const brokenLedger = newSchema()
    await admin.query(`create schema ${brokenLedger}; create table ${brokenLedger}.a2a_tasks_migrations (unrelated int)`)
    await t.rejects(migrate(open(brokenLedger).db, { schema: brokenLedger }), { message: /^migrate: the tasks schema failed: error: column "name" does not exist/ },
      'a failure outside any migration')
  })

  t.test('0013 on a schema an earlier version migrated: the owners\' count is replaced, its counts kept, and refuses past a cap set', async (t) => {
    const { Migrator } = await import('../../../packages/a2a-converse/src/peers/postgres.js')
    const conversations = await import('../../../packages/a2a-converse/src/stores/postgres/conversation-migrations.js')
    const tables = await import('../../../packages/a2a-converse/src/stores/postgres/task-table-migrations.js')
    const push = await import('../../../packages/a2a-converse/src/stores/postgres/push-migrations.js')
    const records = await import('../../../packages/a2a-converse/src/stores/postgres/record-migrations.js')
    const schema = newSchema()
    const database = open(schema)
    await admin.query(`create schema ${schema}`)
    // The histories as the version before 0013 had them.
    const earlier: Array<[string, string, Record<string, import('kysely').Migration>]> = [
      [migrations.TASK_MIGRATION_TABLE, migrations.TASK_MIGRATION_LOCK_TABLE, { '0001_create_tasks': tables.createTasks(schema) }],
      [migrations.CONVERSE_MIGRATION_TABLE, migrations.CONVERSE_MIGRATION_LOCK_TABLE, {
        '0001_converse_tables': conversations.createConverseTables(schema),
        '0002_wide_task_ids': tables.widenTaskIds(schema),
        '0003_task_turn_locks': tables.createTaskTurnLocks(schema),
        '0004_upstream_ownership': records.createUpstreamOwnership(schema),
        '0005_task_callers': tables.addTaskCallers(schema),
        '0006_caller_bounds': conversations.addCallerBounds(schema),
        '0007_conversation_owner_counts': conversations.countOwnedConversations(schema),
        '0008_push_notifications': push.createPushTables(schema),
        '0009_answer_log': records.createAnswerLog(schema),
        '0010_push_outbox_trace': push.addOutboxTraceContext(schema),
        '0011_agents': records.createAgentTables(schema),
        '0012_task_store_functions': tables.createTaskStoreFunctions(schema)
      }]
    ]
    for (const [ledger, lock, history] of earlier) {
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => history }, migrationTableName: ledger, migrationLockTableName: lock, migrationTableSchema: schema })
      t.equal((await migrator.migrateToLatest()).error, undefined)
    }
    // A session of the stores' own: the count names its table unqualified (the session's search_path).
    const session = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
    await session.connect()
    t.teardown(async () => await session.end())
    const insert = (context: string): string => `insert into ${migrations.CONVERSATIONS_TABLE} (agent_id, context_id, state, owner) values ('a', '${context}', '{}', 'alice')`
    const capped = (statement: string): string => `begin; select set_config('${conversations.CONVERSATION_CAP_SETTING}', '2', true); ${statement}; commit`
    const held = async (): Promise<unknown> => (await session.query(`select held from ${migrations.CONVERSATION_OWNERS_TABLE}`)).rows
    for (const context of ['c1', 'c2', 'c3']) await session.query(capped(insert(context)))
    t.same(await held(), [{ held: 3 }], 'before 0013 a cap set is not seen')

    t.same((await migrate(database.db, { schema })).applied, ['converse/0013_conversation_cap_in_count', 'converse/0014_task_save_steps', 'converse/0015_take_task_turn'], 'only the newer ones run')
    t.same(await held(), [{ held: 3 }], 'the counts kept')
    await t.rejects(session.query(capped(insert('c4'))), { code: conversations.CONVERSATION_CAP_REACHED }, 'past a cap set: refused')
    await session.query('rollback')
    await session.query(insert('c4'))
    await session.query(`delete from ${migrations.CONVERSATIONS_TABLE} where context_id in ('c1', 'c2', 'c3')`)
    t.same(await held(), [{ held: 1 }], 'without one: counted as before')
  })

  t.test('the Migrator sees only the schema migrated: never the database-wide listing a schema dropped elsewhere fails', async (t) => {
    const { Kysely, PostgresDialect } = await import('../../../packages/a2a-converse/src/peers/postgres.js')
    const scoped = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const database = createPostgresDatabase({ connectionString: url, schema: scoped, logger: { warn () {} } })
    let listed = 0
    // Kysely's own introspector lists every table of the database: this one fails as a concurrent drop makes it fail.
    class ListingFails extends PostgresDialect {
      override createIntrospector (): never {
        listed++
        throw Object.assign(new Error('schema "someone_else" does not exist'), { code: '3F000' })
      }
    }
    const db = new Kysely<any>({ dialect: new ListingFails({ pool: database.pool }) })
    t.teardown(async () => {
      await db.destroy().catch(() => {})
      await database.close()
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      await admin.query(`drop schema if exists ${scoped} cascade`)
      await admin.end()
    })
    const report = await migrate(db, { schema: scoped })
    t.equal(report.applied.length, migrations.migrationNames().length, 'the schema created and every migration applied')
    t.same((await migrate(db, { schema: scoped })).applied, [], 'then up to date: the ledgers found')
    t.equal(listed, 0, 'Kysely\'s introspector never asked (fails when the Migrator reaches the database-wide listing another way)')
  })
}
