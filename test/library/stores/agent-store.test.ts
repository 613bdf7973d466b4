/** The AgentStore contract in memory and on the embedded database (the PostgreSQL store's SQL on PGlite). */
import t from 'tap'
import { MemoryAgentStore } from '../../../packages/a2a-converse/src/stores/agent-store.js'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresAgentStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-agent-store.js'
import { agentStoreContract } from './agent-store-contract.js'

t.test('memory', async (t) => {
  agentStoreContract(t, { create: async (options) => new MemoryAgentStore(options) })

  t.test('an option that is not a positive integer is refused, naming it', async (t) => {
    t.throws(() => new MemoryAgentStore({ maxAgents: 0 }), /option "maxAgents" must be a positive integer/)
  })

  t.test('the audits of unpublished ids are kept for as many ids as maxAgents', async (t) => {
    const store = new MemoryAgentStore({ maxAgents: 2 })
    for (const id of ['a', 'b', 'c']) {
      await store.create(id, { id }, { by: 'operator', change: 'publish' })
      await store.delete(id, undefined, { by: 'operator', change: 'unpublish' })
    }
    t.same(await store.versions('a'), [], 'the oldest unpublished id forgotten')
    t.equal((await store.versions('c')).length, 2)
    t.match(await store.create('b', { id: 'b' }, { by: 'operator', change: 'publish' }), { version: 3 })
  })
})

t.test('embedded', async (t) => {
  const database = await openEmbeddedDatabase({ schema: 'agents_test', logger: { warn () {} } })
  t.teardown(async () => await database.close())
  await migrate(database.db, { schema: 'agents_test' })
  // Each store on a table of its own content: the previous one's rows are removed first.
  agentStoreContract(t, {
    create: async (options) => {
      await database.pool.query('delete from converse_agents')
      await database.pool.query('delete from converse_agent_versions')
      return new PostgresAgentStore(database.db, options)
    }
  })
})
