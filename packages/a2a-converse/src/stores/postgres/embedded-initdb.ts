/**
 * The embedded database's first start, in a process of its own: `node embedded-initdb.js <folder> <start params>`
 * creates the cluster (PGlite's initdb) in an empty folder, closes it and exits 0; `node embedded-initdb.js ''
 * <start params> <file>` creates it in memory, applies the library's migrations to its `public` schema and writes it
 * to the file as a gzipped tar instead (a cluster template: cluster-template.ts). On failure it writes the error's
 * message to stderr and exits 1. PGlite's initdb holds three WebAssembly instances at once and never gives their
 * memory back (≈ 800 MB resident for the rest of the process's life, measured): run here, that peak ends with this
 * process and the gateway opens a ready folder (embedded-database.ts).
 */
import { writeFile } from 'node:fs/promises'
import { openEmbeddedSession } from './embedded-database.js'
import { migrate } from './migrations.js'

/**
 * A new cluster with the migrations applied, as a gzipped tar. Checkpointed first: the migrations' pages are in
 * their files, not only in the WAL a first start would replay.
 */
async function migratedCluster (params: string[]): Promise<Buffer> {
  // A warning goes to stderr, which the parent reports if this process fails.
  const { database, session } = await openEmbeddedSession({ logger: console }, params)
  try {
    await migrate(database.db, { schema: 'public' })
    await database.pool.query('checkpoint')
    return Buffer.from(await (await session.dumpDataDir('gzip')).arrayBuffer())
  } finally {
    await database.close()
  }
}

const [folder, params, template] = process.argv.slice(2)
try {
  const settings = JSON.parse(params) as string[]
  if (template !== undefined) {
    await writeFile(template, await migratedCluster(settings), { mode: 0o644 })
  } else {
    const { PGlite: Session } = await import('@electric-sql/pglite')
    const session = new Session({ dataDir: folder, startParams: [...Session.defaultStartParams, ...settings], initDbStartParams: settings })
    await session.waitReady
    await session.close()
  }
} catch (error) {
  process.stderr.write((error as Error).message)
  process.exitCode = 1
}
