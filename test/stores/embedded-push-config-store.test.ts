/** The PushConfigStore contract on the embedded database (the PostgreSQL store's SQL on PGlite). */
import t from 'tap'
import { openEmbeddedDatabase } from '../../src/stores/postgres/embedded-database.js'
import { migrate } from '../../src/stores/postgres/migrations.js'
import { PostgresPushConfigStore } from '../../src/stores/postgres/postgres-push-config-store.js'
import { pushConfigStoreContract } from './push-config-store-contract.js'

const database = await openEmbeddedDatabase({ schema: 'push_configs_test', logger: { warn () {} } })
t.teardown(async () => await database.close())
await migrate(database.db, { schema: 'push_configs_test' })
let agents = 0
pushConfigStoreContract(t, { create: (options) => new PostgresPushConfigStore(database.db, { agentId: `push-${++agents}`, ...options }) })

t.test('the default owner is the SDK\'s user scope and the default cap 100', async (t) => {
  t.equal(new PostgresPushConfigStore(database.db, { agentId: 'x' }).maxConfigsPerCaller, 100)
})
