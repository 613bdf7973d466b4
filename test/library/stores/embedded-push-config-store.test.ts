/** The PushConfigStore contract on the embedded database (the PostgreSQL store's SQL on PGlite). */
import t from 'tap'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresPushConfigStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js'
import { pushConfigStoreContract } from './push-config-store-contract.js'

const database = await openEmbeddedDatabase({ schema: 'push_configs_test', logger: { warn () {} } })
t.teardown(async () => await database.close())
await migrate(database.db, { schema: 'push_configs_test' })
let agents = 0
pushConfigStoreContract(t, { create: (options) => new PostgresPushConfigStore(database.db, { agentId: `push-${++agents}`, ...options }) })

t.test('the default owner is the SDK\'s user scope and the default cap 100', async (t) => {
  t.equal(new PostgresPushConfigStore(database.db, { agentId: 'x' }).maxConfigsPerCaller, 100)
})

t.test('sealed: a config written with a key is stored sealed and read back; sealedPushSecrets says so', async (t) => {
  const { randomBytes } = await import('node:crypto')
  const { sql } = await import('kysely')
  const { ServerCallContext } = await import('@a2a-js/sdk/server')
  const { SecretBox } = await import('../../../packages/a2a-converse/src/stores/secret-box.js')
  const { sealedPushSecrets } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js')
  const secrets = new SecretBox(randomBytes(32))
  const store = new PostgresPushConfigStore(database.db, { agentId: 'sealed', secrets })
  const context = new ServerCallContext({})
  t.equal(await sealedPushSecrets(database.db), false, 'nothing sealed yet')
  await store.save('t', context, { tenant: '', id: 'c', taskId: 't', url: 'https://hooks.example.com/a2a', token: 'tok-sealed', authentication: undefined })
  t.equal(await sealedPushSecrets(database.db), true)
  const { rows } = await sql<{ config: string }>`select config from converse_push_configs where agent_id = 'sealed'`.execute(database.db)
  t.match(rows[0].config, new RegExp(`^sb1\\.${secrets.keyId}\\.`))
  t.notOk(rows[0].config.includes('tok-sealed') || rows[0].config.includes('hooks.example.com'))
  t.match(await store.load('t', context), [{ token: 'tok-sealed', url: 'https://hooks.example.com/a2a' }])
  await store.delete('t', context, 'c')
})
