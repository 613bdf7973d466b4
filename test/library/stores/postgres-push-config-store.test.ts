/** The PushConfigStore contract on a PostgreSQL server (a schema of its own). */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { pushConfigStoreContract } from './push-config-store-contract.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL push config store', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresPushConfigStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js')
  const schema = `a2a_push_${process.pid}_${randomBytes(4).toString('hex')}`
  const database = createPostgresDatabase({ connectionString: url, schema, logger: { warn () {} } })
  await migrate(database.db, { schema })
  t.teardown(async () => {
    await database.close()
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  let agents = 0
  pushConfigStoreContract(t, { create: (options) => new PostgresPushConfigStore(database.db, { agentId: `agent-${++agents}`, ...options }) })
}
