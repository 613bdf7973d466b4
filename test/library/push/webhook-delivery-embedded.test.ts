/** Push delivery to a real receiver (test/library/push/delivery-cases.ts) on STATE=embedded: the outbox on PGlite. */
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deliveryCases } from './delivery-cases.js'

// Three gateways, each opening (and migrating) a fresh embedded database.
t.setTimeout(300_000)

deliveryCases(t, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'push-'))
  t.teardown(async () => await rm(dataDir, { recursive: true, force: true }))
  return { STATE: 'embedded', DATA_DIR: dataDir }
})
