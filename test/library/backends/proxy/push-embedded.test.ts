/** Push notifications for a proxied agent (test/library/backends/proxy/push-cases.ts) on STATE=embedded: the outbox on PGlite. */
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { proxyPushCases } from './push-cases.js'

// Five gateways, each opening (and migrating) a fresh embedded database.
t.setTimeout(300_000)

proxyPushCases(t, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'proxy-push-'))
  t.teardown(async () => await rm(dataDir, { recursive: true, force: true }))
  return { STATE: 'embedded', DATA_DIR: dataDir }
})
