/** The PushConfigStore contract on a PostgreSQL server (a schema of its own). */
import t from 'tap'
import { migratedDatabase } from '../../fixtures/migrated-database.js'
import { pushConfigStoreContract } from './push-config-store-contract.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL push config store', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const { PostgresPushConfigStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js')
  const { database } = await migratedDatabase(t, url, { warn () {} })
  let agents = 0
  pushConfigStoreContract(t, { create: (options) => new PostgresPushConfigStore(database.db, { agentId: `agent-${++agents}`, ...options }) })
}
