/**
 * A new data folder's cluster from a template instead of initdb (issue 43): PGlite's initdb holds three WebAssembly
 * instances at once (≈ 750 MB resident in the process that runs it), so a 512 MB container is killed on its first
 * start. A template is a new cluster as PGlite's `dumpDataDir('gzip')` writes it (a gzipped tar), made once where
 * memory is plenty (the gateway's build) by `makeClusterTemplate`; a first start only unpacks it (≈ 4.5 MB read,
 * 40 MB written). The template holds the library's migrations already applied to `public` (the schema the gateway's
 * embedded database uses): running them at a first start left ≈ 40 MB in PGlite's WebAssembly memory, which never
 * shrinks, so a first start now opens what a restart opens; a migration newer than the template's still runs at
 * start (`migrate`). The file is named after the PGlite that made it (a cluster is read only by the PostgreSQL that
 * wrote it) and after its migrations: a template another PGlite or another migration set made is passed over
 * (initdb runs, as without one).
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises'
import { dirname, extname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pipeline } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { migrationNames } from './migrations.js'

/** The child's module beside this one: .js once built, .ts when run from the sources (tests). */
const INITDB_MODULE = new URL(`./embedded-initdb${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/** The installed PGlite's version, read from its package.json (which its exports do not name). */
export async function pgliteVersion (): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'))
  const manifest = JSON.parse(await readFile(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }
  return manifest.version
}

/**
 * A template's file name: the PGlite that made it and a short hash of the migrations it holds (`history/name`:
 * a released migration is never edited, a new one gets a new name).
 */
export function templateName (pglite: string, migrations: readonly string[]): string {
  return `cluster-pglite-${pglite}-${createHash('sha256').update(migrations.join('\n')).digest('hex').slice(0, 12)}.tar.gz`
}

/** The template the installed PGlite reads with this library's migrations, in a folder of templates. */
export async function templateFile (folder: string): Promise<string> {
  return join(folder, templateName(await pgliteVersion(), migrationNames()))
}

/**
 * Runs embedded-initdb in a child process: `folder` gets a new cluster, or, with `template`, none is kept and the
 * cluster, migrated, is written there as a gzipped tar. Rejects with the child's stderr (or how it ended).
 */
export async function initdbInChild (folder: string, params: string[], template?: string): Promise<void> {
  const child = fork(INITDB_MODULE, [folder, JSON.stringify(params), ...(template === undefined ? [] : [template])], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-2000) })
  const [code, signal] = await once(child, 'exit') as [number | null, NodeJS.Signals | null]
  if (code !== 0) throw initdbFailure(stderr, code, signal)
}

/** The child's message, or how it ended without one (killed: a container's memory limit sends SIGKILL). */
export function initdbFailure (stderr: string, code: number | null, signal: NodeJS.Signals | null): Error {
  return new Error(stderr.trim() !== '' ? stderr.trim() : `the database's initialisation process ended with ${signal ?? `exit code ${String(code)}`}`)
}

/**
 * Makes the installed PGlite's template in `folder` (created when missing) with these start parameters written into
 * its postgresql.conf: a new cluster with the library's migrations applied to its `public` schema (`migrate`), made
 * and migrated in a child process (initdb's ≈ 750 MB end with it). A database later opened on it with another
 * `schema` gets its own tables there at its `migrate`; those in `public` stay empty. Written whole or not at all (a
 * temporary name, then renamed). Returns its path.
 */
export async function makeClusterTemplate (folder: string, params: string[] = []): Promise<string> {
  const file = await templateFile(folder)
  await mkdir(folder, { recursive: true })
  const making = `${file}.making`
  try {
    await initdbInChild('', params, making)
    await rename(making, file)
  } finally {
    await rm(making, { force: true })
  }
  return file
}

/** A tar header's field: NUL-terminated text. */
function field (header: Buffer, start: number, length: number): string {
  const text = header.toString('utf8', start, start + length)
  const end = text.indexOf('\0')
  return end === -1 ? text : text.slice(0, end)
}

/**
 * Unpacks a template into an empty folder: regular files (0600) and folders (0700) of a ustar archive, the only
 * kinds PGlite writes; an entry naming a path outside the folder refuses the template. Streamed (the archive read,
 * unzipped and written a chunk at a time): the unzipped cluster (≈ 40 MB) held whole raised the first start's
 * resident set by ≈ 90 MB, at the moment the embedded database then opens.
 */
export async function unpackTemplate (file: string, folder: string): Promise<void> {
  let header = Buffer.alloc(0)
  /** The file being written, its bytes still to come, then the padding to its block's end. */
  let out: FileHandle | undefined
  let left = 0
  let skip = 0
  try {
    for await (const chunk of pipeline(createReadStream(file), createGunzip(), () => {}) as AsyncIterable<Buffer>) {
      let data = chunk
      while (data.length > 0) {
        if (left > 0 || skip > 0) {
          const body = data.subarray(0, left)
          if (body.length > 0) await (out as FileHandle).write(body)
          left -= body.length
          const padding = Math.min(skip, data.length - body.length)
          skip -= padding
          data = data.subarray(body.length + padding)
          if (left === 0) await closeFile()
          continue
        }
        const wanted = 512 - header.length
        header = Buffer.concat([header, data.subarray(0, wanted)])
        data = data.subarray(wanted)
        if (header.length < 512) break
        const entry = header
        header = Buffer.alloc(0)
        const name = field(entry, 0, 100)
        if (name === '') return // the archive's end: blocks of zeros
        const size = parseInt(field(entry, 124, 12).trim() || '0', 8)
        await startEntry(entry, name, size)
      }
    }
  } finally {
    await closeFile()
  }

  async function startEntry (entry: Buffer, name: string, size: number): Promise<void> {
    const prefix = field(entry, 345, 155)
    const type = field(entry, 156, 1)
    const path = posix.normalize(`${prefix === '' ? '' : `${prefix}/`}${name}`).replace(/^\/+/, '').replace(/\/+$/, '')
    if (path === '..' || path.startsWith('../')) throw new Error(`the cluster template ${file} names a path outside its folder: ${name}`)
    const blocks = Math.ceil(size / 512) * 512
    if (type === '0' || type === '') {
      out = await open(join(folder, path), 'w', 0o600)
      left = size
      skip = blocks - size
      if (size === 0) await closeFile()
      return
    }
    if (type === '5') await mkdir(join(folder, path), { recursive: true, mode: 0o700 })
    skip = blocks
  }

  async function closeFile (): Promise<void> {
    const closing = out
    out = undefined
    await closing?.close()
  }
}
