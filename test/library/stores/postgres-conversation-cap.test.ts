/**
 * MAX_CONVERSATIONS_PER_CALLER on a PostgreSQL server when two new conversations of one owner are created at the same
 * instant (issue 43: per-caller caps race-free): the one-statement insert's snapshot misses the other, uncommitted
 * one, and the owner's count (migration 0013) refuses it once that one commits. Made deterministic by holding the
 * other creation's transaction open on a client of its own until the store's insert is seen waiting on its lock.
 * On the embedded database (one session) statements run one at a time: this race cannot happen there.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL conversation cap', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate, CONVERSATION_OWNERS_TABLE, CONVERSATIONS_TABLE, CONVERSATION_TASKS_TABLE } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { CONVERSATION_CAP_REACHED, CONVERSATION_CAP_SETTING } = await import('../../../packages/a2a-converse/src/stores/postgres/conversation-migrations.js')
  const { PostgresConversationStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js')
  const { CallerCapError } = await import('../../../packages/a2a-converse/src/stores/caller-key.js')
  const { newConversationState } = await import('../../../packages/a2a-converse/src/stores/conversation-store.js')

  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const database: PostgresDatabase = createPostgresDatabase({ connectionString: url, schema, logger: { warn () {} }, applicationName: `${schema}_store` })
  await migrate(database.db, { schema })
  /** Another session on the schema: the other instance's transaction. */
  const other = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
  await other.connect()
  t.teardown(async () => {
    await other.end()
    await database.close()
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  const alice = 'caller:alice'
  const refusal = { name: 'CallerCapError', cap: 'MAX_CONVERSATIONS_PER_CALLER', limit: 2 }
  const withTask = (agentId: string, contextId: string) => (state: ConversationState | undefined): ConversationState => {
    const next = state ?? newConversationState(agentId, contextId)
    next.turns.push({ id: 't1', at: '2026-01-01T00:00:00.000Z', role: 'user', text: 'hello', taskId: `${contextId}-task` })
    return next
  }
  /** Creates a conversation of `owner` in `other`'s open transaction, as the insert of another instance would. */
  const createElsewhere = async (agentId: string, contextId: string, owner: string): Promise<void> => {
    await other.query(`insert into ${CONVERSATIONS_TABLE} (agent_id, context_id, state, version, owner) values ($1, $2, $3::jsonb, 1, $4)`,
      [agentId, contextId, JSON.stringify(withTask(agentId, contextId)(undefined)), owner])
  }
  const held = async (agentId: string, owner: string): Promise<{ counted: number, rows: number }> => (await other.query(
    `select (select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $2) as counted,
      (select count(*)::int from ${CONVERSATIONS_TABLE} where agent_id = $1 and owner = $2) as rows`, [agentId, owner])).rows[0]
  /** Polls (at most 5 s) until a statement of the store waits for a lock `other` holds: a state observed, not a delay. */
  const waitingOnOther = async (): Promise<void> => {
    const { rows: [{ pid }] } = await other.query<{ pid: number }>('select pg_backend_pid() as pid')
    const probe = new pg.Client({ connectionString: url })
    await probe.connect()
    try {
      for (let i = 0; i < 500; i++) {
        const { rows } = await probe.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'
          and $2 = any (pg_blocking_pids(pid))`, [`${schema}_store`, pid])
        if (rows.length > 0) return
        await sleep(10)
      }
      throw new Error('waitingOnOther: the store\'s statement never waited for the other transaction')
    } finally {
      await probe.end()
    }
  }

  t.test('two new conversations of one owner at once: the later insert waits for the other\'s count and is refused, the owner holds exactly the cap', async (t) => {
    const store = new PostgresConversationStore(database, { maxConversationsPerCaller: 2 })
    await store.update('race', 'a-1', withTask('race', 'a-1'), { owner: alice })
    // Another instance creates alice's second one and has not committed: the counter row (2) is locked.
    await other.query('begin')
    await createElsewhere('race', 'a-2', alice)
    // The store's insert counts 1 in its snapshot, inserts, and its count waits for that lock.
    const outcome = store.update('race', 'a-3', withTask('race', 'a-3'), { owner: alice }).then(() => 'stored', (error: unknown) => error)
    await waitingOnOther()
    const connections = database.pool.totalCount
    await other.query('commit')
    const error = await outcome
    t.match(error, refusal, 'the same refusal as at the cap: MAX_CONVERSATIONS_PER_CALLER')
    t.same([database.pool.totalCount, database.pool.idleCount], [connections, connections], 'the refusal is an answer, not an outage: its connection goes back to the pool')
    t.ok(error instanceof CallerCapError, 'a CallerCapError (the executor hands it to the task store: nothing stored, -32000)')
    t.same(await held('race', alice), { counted: 2, rows: 2 }, 'alice holds exactly the cap, counted and stored')
    t.equal(await store.exists('race', 'a-3'), false, 'nothing of the refused conversation stays')
    t.same((await other.query(`select task_id from ${CONVERSATION_TASKS_TABLE} where agent_id = 'race' and context_id = 'a-3'`)).rows, [], 'nor its task index')

    await t.rejects(store.update('race', 'a-3', withTask('race', 'a-3'), { owner: alice }), refusal, 'then refused by the snapshot\'s count, as at the cap')
    t.ok(await store.delete('race', 'a-1'))
    t.equal((await store.update('race', 'a-3', withTask('race', 'a-3'), { owner: alice })).version, 1, 'room again after a delete')
    t.same(await held('race', alice), { counted: 2, rows: 2 })
  })

  t.test('the later creation still passes when the earlier one rolls back, and another owner is never refused', async (t) => {
    const store = new PostgresConversationStore(database, { maxConversationsPerCaller: 2 })
    await store.update('rollback', 'a-1', withTask('rollback', 'a-1'), { owner: alice })
    await other.query('begin')
    await createElsewhere('rollback', 'a-2', alice)
    await createElsewhere('rollback', 'b-1', 'caller:bob')
    await createElsewhere('rollback', 'b-2', 'caller:bob')
    const outcome = store.update('rollback', 'a-3', withTask('rollback', 'a-3'), { owner: alice })
    await waitingOnOther()
    await other.query('rollback')
    t.equal((await outcome).version, 1, 'counted on what committed: alice\'s second')
    t.equal((await store.update('rollback', 'b-3', withTask('rollback', 'b-3'), { owner: 'caller:bob' })).version, 1, 'bob\'s first')
    t.same(await held('rollback', alice), { counted: 2, rows: 2 })
  })

  t.test('a statement that does not set the cap is counted as before (as the locked path\'s write is), also in a later transaction of a session that set it', async (t) => {
    // The cap set by an earlier transaction of the session is gone: '' (no refusal) rather than NULL.
    await other.query('begin')
    await other.query('select set_config($1, $2, true)', [CONVERSATION_CAP_SETTING, '1'])
    await createElsewhere('unset', 'a-1', alice)
    const past = await other.query(`insert into ${CONVERSATIONS_TABLE} (agent_id, context_id, state, version, owner) values ('unset', 'a-2', '{}'::jsonb, 1, $1)`, [alice])
      .catch((error: unknown) => error)
    t.match(past, { code: CONVERSATION_CAP_REACHED, message: /owner caller:alice of agent unset holds its cap of 1 conversations/ }, 'past the cap set: refused')
    await other.query('rollback')
    await createElsewhere('unset', 'a-1', alice)
    await createElsewhere('unset', 'a-2', alice)
    t.same(await held('unset', alice), { counted: 2, rows: 2 }, 'no cap set in this transaction: counted, never refused')
  })
}
