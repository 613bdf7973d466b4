/**
 * The PostgreSQL stores on the embedded database (PGlite in this process): the same store code, the same migrations
 * and the same contract suite as on a server — on every machine, with no server installed.
 */
import t from 'tap'
import { TaskState, type Task } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresConversationStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js'
import { newConversationState, type ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { PostgresTaskStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { PostgresTaskTurnLock } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.js'
import { finishedStaysFinished } from '../../fixtures/finished-stays-finished.js'
import { taskReservationCases } from '../../fixtures/task-reservations.js'
import { CALLER_KEY_STATE } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import { CompiledQuery } from 'kysely'
import { CONVERSATION_CAP_REACHED, CONVERSATION_CAP_SETTING } from '../../../packages/a2a-converse/src/stores/postgres/conversation-migrations.js'
import { conversationStoreContract } from './conversation-store-contract.js'

const database = await openEmbeddedDatabase({ schema: 'converse_test', logger: { warn () {} } })
t.teardown(async () => await database.close())
const report = await migrate(database.db, { schema: 'converse_test' })

// pg 8 warns (once per process) when a query is issued while another runs on a connection that is not pipelined.
const queued: string[] = []
const onWarning = (warning: Error): void => { if (warning.message.includes('already executing a query')) queued.push(warning.stack ?? warning.message) }
process.on('warning', onWarning)
t.teardown(() => { process.off('warning', onWarning) })

t.test('the server\'s migrations apply as they are', async (t) => {
  t.same(report.applied, ['tasks/0001_create_tasks', 'converse/0001_converse_tables', 'converse/0002_wide_task_ids', 'converse/0003_task_turn_locks', 'converse/0004_upstream_ownership', 'converse/0005_task_callers', 'converse/0006_caller_bounds', 'converse/0007_conversation_owner_counts', 'converse/0008_push_notifications', 'converse/0009_answer_log', 'converse/0010_push_outbox_trace', 'converse/0011_agents', 'converse/0012_task_store_functions', 'converse/0013_conversation_cap_in_count', 'converse/0014_task_save_steps', 'converse/0015_take_task_turn'])
  t.same((await migrate(database.db, { schema: 'converse_test' })).applied, [], 'and again: nothing to do')
})

t.test('the conversation store contract', async (t) => {
  conversationStoreContract(t, { create: (options) => new PostgresConversationStore(database, options), oneSession: true })
})

/** An update adding a question and the agent's assessed answer to it (one record of the answer log). */
function answerTurn (agentId: string, question: string, coverage: 'answered' | 'unanswered') {
  return (state: ConversationState | undefined): ConversationState => {
    const next = state ?? newConversationState(agentId, 'ignored')
    next.turns.push({ id: `${question}-u`, at: 'x', role: 'user', text: question })
    const reason = coverage === 'answered' ? 'sufficient_evidence' : 'insufficient_evidence'
    next.turns.push({
      id: `${question}-a`,
      at: 'x',
      role: 'agent',
      text: coverage === 'answered' ? 'an answer' : 'no idea',
      envelope: { author: 'agent', answerCoverage: { availability: 'assessed', coverage, reason }, ownership: { state: 'ai_owned', suppressed: false } }
    })
    return next
  }
}

t.test('a turn\'s statement is planned once, however long the answer log: the prune is in it only when it is due', async (t) => {
  // A database of its own: a session whose statements were first planned on a long log (a restart on a used folder).
  const database = await openEmbeddedDatabase({ schema: 'converse_plans', logger: { warn () {} } })
  t.teardown(async () => await database.close())
  await migrate(database.db, { schema: 'converse_plans' })
  const store = new PostgresConversationStore(database, { maxAnswersPerAgent: 1_000_000 })
  const agentId = 'planned'
  // A long log: the planner reckons a prune's scan of it expensive. A statement holding the prune, its parameters NULL
  // when it is not due, was then planned again on every call (a custom plan cheaper than the generic one).
  await database.db.executeQuery(CompiledQuery.raw(`insert into converse_plans.converse_answers (agent_id, context_id, at, availability, question, question_key)
    select '${agentId}', 'old', g, 'assessed', '', '' from generate_series(1, 20000) as g`))
  const answered = (question: string) => answerTurn(agentId, question, 'answered')
  let read = await store.update(agentId, 'existing', answered('first'))
  for (let turn = 0; turn < 12; turn++) {
    await store.update(agentId, `new-${turn}`, answered(`new ${turn}`))
    read = await store.update(agentId, 'existing', answered(`again ${turn}`), { read })
  }
  const { rows } = await database.db.executeQuery<{ name: string, generic_plans: string, custom_plans: string }>(CompiledQuery.raw(
    `select name, generic_plans::text, custom_plans::text from pg_prepared_statements
      where name in ('converse_insert_new', 'converse_write_if_unchanged') order by name`))
  t.same(rows.map((row) => row.name), ['converse_insert_new', 'converse_write_if_unchanged'])
  for (const row of rows) {
    t.ok(Number(row.generic_plans) >= 6, `${row.name}: a generic plan from the sixth call on (${row.generic_plans} generic, ${row.custom_plans} custom)`)
  }
})

t.test('the answer log\'s rows past the cap and the retention are deleted by the writes, at most once a minute per agent', async (t) => {
  let now = Date.UTC(2026, 0, 10, 12)
  const store = new PostgresConversationStore(database, { now: () => new Date(now), maxAnswersPerAgent: 2, answerRetentionMs: 60 * 60 * 1000 })
  const agentId = `pruned-${process.pid}`
  const rows = async (): Promise<string[]> => (await database.db.executeQuery<{ question: string }>(CompiledQuery.raw(
    `select question from converse_test.converse_answers where agent_id = '${agentId}' order by seq`))).rows.map((row) => row.question)
  const answer = (question: string) => answerTurn(agentId, question, 'unanswered')
  // The agent's first answer comes on the locked path (the conversation exists): that write prunes.
  await store.update(agentId, 'c1', (state) => state ?? newConversationState(agentId, 'c1'))
  await store.update(agentId, 'c1', answer('one'))
  await store.update(agentId, 'c2', answer('two'))
  await store.update(agentId, 'c3', answer('three'))
  t.same(await rows(), ['one', 'two', 'three'], 'within the minute nothing is deleted (the reads count the newest 2 only)')
  now += 61_000
  await store.update(agentId, 'c1', answer('four'))
  t.same(await rows(), ['two', 'three', 'four'], 'a minute later, a locked write keeps the newest 2 it found, and its own')
  now += 2 * 60 * 60 * 1000
  await store.update(agentId, 'c5', answer('five'))
  t.same(await rows(), ['five'], 'past the retention, a new conversation\'s statement deletes the old rows')
})

t.test('a conversation created on the locked path (fn gave up on the optimistic one) is its owner\'s too', async (t) => {
  const store = new PostgresConversationStore(database, { maxConversationsPerCaller: 1 })
  const agentId = `locked-owner-${process.pid}`
  let calls = 0
  const once = (state: ConversationState | undefined): ConversationState => {
    if (++calls === 1) throw new Error('not on the optimistic path')
    return state ?? newConversationState(agentId, 'ignored')
  }
  await store.update(agentId, 'first', once, { owner: 'caller:alice' })
  t.equal(calls, 2)
  calls = 0
  await t.rejects(store.update(agentId, 'second', once, { owner: 'caller:alice' }), { name: 'CallerCapError', cap: 'MAX_CONVERSATIONS_PER_CALLER' },
    'counted: the locked path refuses the next one')
  t.equal(calls, 2)
  t.equal(await store.exists(agentId, 'second'), false)
})

t.test('each owner\'s counter (migration 0007) follows its conversations: created, evicted, deleted, placeholders not counted', async (t) => {
  const store = new PostgresConversationStore(database, { maxConversationsPerCaller: 3 })
  const agentId = `counted-${process.pid}`
  const create = async (contextId: string, owner: string): Promise<void> => {
    await store.update(agentId, contextId, (state) => state ?? newConversationState(agentId, contextId), { owner })
  }
  const counters = async (): Promise<{ counted: unknown, held: unknown }> => {
    const held = await database.db.executeQuery(CompiledQuery.raw(`select owner, held from converse_test.converse_conversation_owners
      where agent_id = '${agentId}' and held > 0 order by owner`))
    const counted = await database.db.executeQuery(CompiledQuery.raw(`select owner, count(*)::int as held from converse_test.converse_conversations
      where agent_id = '${agentId}' and owner is not null and state is not null group by owner order by owner`))
    return { counted: counted.rows, held: held.rows }
  }
  for (let n = 0; n < 3; n++) await create(`alice-${n}`, 'caller:alice')
  await t.rejects(create('alice-3', 'caller:alice'), { name: 'CallerCapError' }, 'the cap reads the counter')
  await create('bob-0', 'caller:bob')
  await create('bob-1', 'caller:bob')
  await database.db.executeQuery(CompiledQuery.raw(`insert into converse_test.converse_conversations (agent_id, context_id) values ('${agentId}', 'placeholder')`))
  let { counted, held } = await counters()
  t.same(held, [{ owner: 'caller:alice', held: 3 }, { owner: 'caller:bob', held: 2 }], 'alice at her cap, bob at 2')
  t.same(held, counted, 'the counters are the count')
  await store.delete(agentId, 'alice-2')
  ;({ counted, held } = await counters())
  t.same(held, [{ owner: 'caller:alice', held: 2 }, { owner: 'caller:bob', held: 2 }], 'a delete counts down')
  t.same(held, counted)
})

t.test('the owners\' count refuses past a cap its transaction set (migration 0013) here too; one session: two creations never overlap', async (t) => {
  // The race 0013 closes on a server cannot happen here (each statement runs alone); the refusal is the same SQL.
  const agentId = `capped-${process.pid}`
  const client = await database.pool.connect()
  t.teardown(() => { client.release() })
  const insert = 'insert into converse_test.converse_conversations (agent_id, context_id, state, owner) values ($1, $2, jsonb_build_object(), \'caller:alice\')'
  await client.query('begin')
  await client.query(`select set_config('${CONVERSATION_CAP_SETTING}', '1', true)`)
  await client.query(insert, [agentId, 'a-1'])
  await t.rejects(client.query(insert, [agentId, 'a-2']), { code: CONVERSATION_CAP_REACHED })
  await client.query('rollback')
  await client.query(insert, [agentId, 'a-1'])
  await client.query(insert, [agentId, 'a-2'])
  t.same((await client.query('select held from converse_test.converse_conversation_owners where agent_id = $1', [agentId])).rows, [{ held: 2 }],
    'no cap set: counted as before')
})

t.test('task reservations (MAX_OPEN_TASKS_PER_CALLER before a turn is recorded)', async (t) => {
  await taskReservationCases(t, new PostgresTaskStore(database.db, { maxOpenTasksPerCaller: 2 }), 'embedded')
  const store = new PostgresTaskStore(database.db, { maxOpenTasksPerCaller: 1 })
  const walkIn = new ServerCallContext({ state: new Map([[CALLER_KEY_STATE, 'address:expiring']]) })
  await store.reserve('expiring-1', walkIn)
  await t.rejects(store.reserve('expiring-2', walkIn), { name: 'CallerCapError' })
  await database.db.executeQuery(CompiledQuery.raw("update converse_test.converse_task_reservations set expires_at = now() - interval '1 second' where caller_key = 'address:expiring'"))
  await store.reserve('expiring-2', walkIn)
  t.pass('an expired reservation no longer counts (dropped on the way)')
  await database.db.executeQuery(CompiledQuery.raw("update converse_test.converse_task_reservations set expires_at = now() - interval '1 second' where caller_key = 'address:expiring'"))
  await store.save({ id: 'expiring-2', contextId: 'c', status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: '2026-12-01T10:00:00.000Z' }, artifacts: [], history: [], metadata: {} }, walkIn)
  t.pass('a save whose reservation expired is counted again, and fits')
})

t.test('a finished task stays finished', async (t) => {
  await finishedStaysFinished(t, new PostgresTaskStore(database.db), 'embedded')
})

t.test('rows are the SDK\'s: what our store writes, the SDK\'s reads and lists alike', async (t) => {
  const context = new ServerCallContext()
  const ours = new PostgresTaskStore(database.db, { ownerResolver: () => 'agent:x' })
  const sdk = new DatabaseTaskStore(database.db, { ownerResolver: () => 'agent:x' })
  const task = (id: string, second: number): Task => ({
    id,
    contextId: 'ctx-embedded',
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: `2026-12-01T10:00:0${second}.000Z` },
    artifacts: [],
    history: [],
    metadata: { n: second }
  })
  for (let n = 0; n < 3; n++) await ours.save(task(`embedded-${n}`, n), context)
  t.strictSame(await sdk.load('embedded-1', context), await ours.load('embedded-1', context))
  const request = { tenant: '', contextId: 'ctx-embedded', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, pageSize: 2 } as never
  const page = await ours.list(request, context)
  t.strictSame(page, await sdk.list(request, context))
  t.equal(page.totalSize, 3, 'a count read as pg reads it')
  t.same(page.tasks.map((listed) => listed.id), ['embedded-2', 'embedded-1'])
})

t.test('the per-task turn lock runs on the embedded database too (one process: the gateway uses the memory lock)', async (t) => {
  const lock = new PostgresTaskTurnLock(database, { scope: 'embedded', waitTimeoutMs: 2000, retryInitialDelayMs: 1, retryMaxDelayMs: 5 })
  const key = { tenant: '', owner: 'alice', taskId: 'task-1' }
  const order: string[] = []
  const first = await lock.acquire(key)
  const second = lock.acquire(key).then((release) => { order.push('second'); return release })
  order.push('first')
  await first()
  await (await second)()
  t.same(order, ['first', 'second'])
})

t.test('no store queues a query behind another on a connection that is not pipelined (deprecated by pg 8, gone in pg 9)', async (t) => {
  await new Promise((resolve) => setImmediate(resolve))
  t.same(queued, [])
})

t.test('what migrate hands Kysely\'s Migrator sees only the schema migrated, and is the same database otherwise', async (t) => {
  const { withSchemaIntrospection } = await import('../../../packages/a2a-converse/src/stores/postgres/schema-introspection.js')
  await database.pool.query('create schema if not exists someone_else; create table if not exists someone_else.theirs (id int)')
  t.teardown(async () => { await database.pool.query('drop schema someone_else cascade') })
  const scoped = withSchemaIntrospection(database.db, 'converse_test')
  t.same(await scoped.introspection.getSchemas(), [{ name: 'converse_test' }])
  const tables = await scoped.introspection.getTables()
  t.ok(tables.some((table) => table.name === 'converse_conversations' && !table.isView), 'our tables')
  t.ok(tables.every((table) => table.schema === 'converse_test'), 'no other schema\'s')
  t.same((await scoped.introspection.getMetadata()).tables, tables)
  t.same(await withSchemaIntrospection(database.db, 'missing').introspection.getSchemas(), [], 'a schema not there yet: none')
  const { rows } = await scoped.executeQuery<{ one: number }>(CompiledQuery.raw('select 1 as one'))
  t.same(rows, [{ one: 1 }], 'its other methods run on the database itself')
})
