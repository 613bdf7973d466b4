/** The AgentStore contract on a PostgreSQL server (a schema of its own per store). */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { agentStoreContract } from './agent-store-contract.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL agent store', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresAgentStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-agent-store.js')
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')
  const schemas: string[] = []
  const databases: Array<{ close: () => Promise<void> }> = []
  t.teardown(async () => {
    for (const database of databases) await database.close()
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  agentStoreContract(t, {
    create: async (options) => {
      const schema = `a2a_agents_${process.pid}_${randomBytes(4).toString('hex')}`
      schemas.push(schema)
      const database = createPostgresDatabase({ connectionString: url, schema, logger: { warn () {} } })
      databases.push(database)
      await migrate(database.db, { schema })
      return new PostgresAgentStore(database.db, options)
    }
  })

  t.test('an unreachable server: StoreUnavailableError', async (t) => {
    const database = createPostgresDatabase({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500, logger: { warn () {} } })
    t.teardown(async () => await database.close())
    await t.rejects(new PostgresAgentStore(database.db).list(), StoreUnavailableError)
  })
}
