/**
 * The upstream ownership records (proxy mode), one contract for memory and PostgreSQL (a server, and embedded): a record keeps its first
 * owner, a context is claimed once, a caller's tasks listed newest first in pages, agents apart. Memory is bounded
 * per agent, oldest record first.
 */
import t, { type Test } from 'tap'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'
import { MemoryUpstreamOwnershipStore } from '../../../packages/a2a-converse/src/stores/memory-upstream-ownership-store.js'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { migrate, UPSTREAM_CONTEXTS_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { createPostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { PostgresUpstreamOwnershipStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-upstream-ownership-store.js'
import { WALK_IN_OWNER, type UpstreamOwnershipStore } from '../../../packages/a2a-converse/src/stores/upstream-ownership-store.js'
import { testSchema } from '../../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

async function postgresStore (t: Test): Promise<UpstreamOwnershipStore> {
  const schema = testSchema(t, url as string)
  const database = createPostgresDatabase({ connectionString: url as string, schema })
  t.teardown(() => database.close())
  await migrate(database.db, { schema })
  return new PostgresUpstreamOwnershipStore(database)
}

/** The same PostgreSQL store on the embedded database (no server needed). */
async function embeddedStore (t: Test): Promise<UpstreamOwnershipStore> {
  const database = await openEmbeddedDatabase({ logger: { warn () {} } })
  t.teardown(() => database.close())
  await migrate(database.db, { schema: 'public' })
  return new PostgresUpstreamOwnershipStore(database)
}

const implementations: Array<[string, (t: Test) => Promise<UpstreamOwnershipStore>]> = [
  ['memory', async () => new MemoryUpstreamOwnershipStore()],
  ['embedded', embeddedStore],
  ['postgresql', postgresStore]
]

for (const [name, open] of implementations) {
  t.test(`${name}: the ownership contract`, { skip: name === 'postgresql' && url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
    const store = await open(t)
    t.teardown(() => store.close())
    t.equal(await store.taskOwner('shop', 't1'), undefined, 'nothing recorded: nobody\'s')
    await store.recordTask('shop', 'alice', 't1', 'c1')
    await store.recordTask('shop', 'bob', 't1', 'c1')
    t.equal(await store.taskOwner('shop', 't1'), 'alice', 'a task keeps its first owner')
    t.equal(await store.taskOwner('other', 't1'), undefined, 'agents apart')
    t.equal(await store.claimContext('shop', 'bob', 'c1'), 'alice', 'the context was recorded with the task')
    t.equal(await store.claimContext('shop', 'bob', 'c2'), 'bob', 'a new context is the claimer\'s')
    t.equal(await store.claimContext('shop', 'alice', 'c2'), 'bob', 'and stays his')
    const claims = await Promise.all(['carol', 'dave', 'erin'].map((owner) => store.claimContext('shop', owner, 'c3')))
    t.equal(new Set(claims).size, 1, 'claimed at once: one owner for all')
    await store.recordTask('shop', WALK_IN_OWNER, 'w1', undefined)
    t.equal(await store.taskOwner('shop', 'w1'), WALK_IN_OWNER, 'a task without a context')

    for (const id of ['t2', 't3', 't4']) await store.recordTask('shop', 'alice', id, id === 't4' ? 'c4' : 'c1')
    const first = await store.listTasks('shop', 'alice', { pageSize: 2 })
    t.same([first.taskIds, first.totalSize], [['t4', 't3'], 4], 'newest first, the owner\'s total')
    const second = await store.listTasks('shop', 'alice', { pageSize: 2, after: first.next })
    t.same([second.taskIds, second.totalSize, second.next], [['t2', 't1'], 4, undefined], 'the last page')
    const inContext = await store.listTasks('shop', 'alice', { pageSize: 10, contextId: 'c1' })
    t.same([inContext.taskIds, inContext.totalSize], [['t3', 't2', 't1'], 3], 'by context')
    t.same(await store.listTasks('shop', 'bob', { pageSize: 10 }), { taskIds: [], totalSize: 0 }, 'bob has none')
    t.same((await store.listTasks('shop', 'alice', { pageSize: 10, after: 1 })).taskIds, [], 'past the oldest: empty')
    await t.rejects(store.listTasks('shop', 'alice', { pageSize: 0 }), InvalidOptionError)
    await t.rejects(store.listTasks('shop', 'alice', { pageSize: 1, after: 0 }), InvalidOptionError)
  })
}

t.test('memory: bounded per agent, the oldest record first', async (t) => {
  t.throws(() => new MemoryUpstreamOwnershipStore({ maxTasks: 0 }), InvalidOptionError)
  t.throws(() => new MemoryUpstreamOwnershipStore({ maxContexts: 1.5 }), InvalidOptionError)
  const store = new MemoryUpstreamOwnershipStore({ maxTasks: 2, maxContexts: 2 })
  await store.recordTask('shop', 'alice', 't1', 'c1')
  await store.recordTask('shop', 'alice', 't2', 'c2')
  await store.recordTask('other', 'alice', 'o1', 'c1')
  await store.recordTask('shop', 'alice', 't3', 'c3')
  t.equal(await store.taskOwner('shop', 't1'), undefined, 'the oldest task record went')
  t.equal(await store.taskOwner('shop', 't3'), 'alice')
  t.equal(await store.taskOwner('other', 'o1'), 'alice', 'another agent\'s records count apart')
  t.equal(await store.claimContext('shop', 'bob', 'c1'), 'bob', 'the oldest context record went: free again')
  t.same((await store.listTasks('nobody', 'alice', { pageSize: 5 })).taskIds, [], 'an agent without records')
  await store.close()
  t.equal(await store.taskOwner('shop', 't3'), undefined, 'closed: forgotten')
})

t.test('postgresql: a claim that waited for another instance\'s uncommitted claim returns that claim\'s owner', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  const schema = testSchema(t, url as string)
  const database = createPostgresDatabase({ connectionString: url as string, schema })
  t.teardown(() => database.close())
  await migrate(database.db, { schema })
  const store = new PostgresUpstreamOwnershipStore(database)
  const other = new pg.Client({ connectionString: url })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('begin')
  await other.query(`insert into ${schema}.${UPSTREAM_CONTEXTS_TABLE} (agent_id, context_id, owner) values ('shop', 'c1', 'alice')`)
  const claim = store.claimContext('shop', 'bob', 'c1')
  // The claim's insert waits for the open transaction's row: wait until it does, then commit.
  for (;;) {
    // Not on `other`: inside its transaction the activity view is a snapshot.
    const { rows } = await database.pool.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%with inserted as%'")
    if (rows[0].n > 0) break
    await sleep(10)
  }
  await other.query('commit')
  t.equal(await claim, 'alice', 'the committed claim wins')
})

t.test('postgresql: an unreachable database is a StoreUnavailableError', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  const database = createPostgresDatabase({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500 })
  t.teardown(() => database.close())
  const store = new PostgresUpstreamOwnershipStore(database)
  await t.rejects(store.taskOwner('shop', 't1'), StoreUnavailableError)
})
