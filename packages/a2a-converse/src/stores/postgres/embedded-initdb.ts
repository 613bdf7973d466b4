/**
 * The embedded database's first start, in a process of its own: `node embedded-initdb.js <folder> <start params>`
 * creates the cluster (PGlite's initdb) in an empty folder, closes it and exits 0; `node embedded-initdb.js ''
 * <start params> <file>` creates it in memory and writes it to the file as a gzipped tar instead (a cluster template:
 * cluster-template.ts). On failure it writes the error's message to stderr and exits 1. PGlite's initdb holds three
 * WebAssembly instances at once and never gives their memory back (≈ 800 MB resident for the rest of the process's
 * life, measured): run here, that peak ends with this process and the gateway opens a ready folder
 * (embedded-database.ts).
 */
import { writeFile } from 'node:fs/promises'

const [folder, params, template] = process.argv.slice(2)
try {
  const { PGlite: Session } = await import('@electric-sql/pglite')
  const settings = JSON.parse(params) as string[]
  const session = new Session({ dataDir: template === undefined ? folder : undefined, startParams: [...Session.defaultStartParams, ...settings], initDbStartParams: settings })
  await session.waitReady
  if (template !== undefined) await writeFile(template, Buffer.from(await (await session.dumpDataDir('gzip')).arrayBuffer()), { mode: 0o644 })
  await session.close()
} catch (error) {
  process.stderr.write((error as Error).message)
  process.exitCode = 1
}
