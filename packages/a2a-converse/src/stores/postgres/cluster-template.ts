/**
 * A new data folder's cluster from a template instead of initdb (issue 43): PGlite's initdb holds three WebAssembly
 * instances at once (≈ 750 MB resident in the process that runs it), so a 512 MB container is killed on its first
 * start. A template is a new cluster as PGlite's `dumpDataDir('gzip')` writes it (a gzipped tar), made once where
 * memory is plenty (the gateway's build) by `makeClusterTemplate`; a first start only unpacks it (≈ 4.5 MB read,
 * 40 MB written). The file is named after the PGlite that made it: a cluster is read only by the PostgreSQL that
 * wrote it, so a template another PGlite made is passed over (initdb runs, as without one).
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, extname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'

/** The child's module beside this one: .js once built, .ts when run from the sources (tests). */
const INITDB_MODULE = new URL(`./embedded-initdb${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/** The installed PGlite's version, read from its package.json (which its exports do not name). */
export async function pgliteVersion (): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'))
  const manifest = JSON.parse(await readFile(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }
  return manifest.version
}

/** The template the installed PGlite reads, in a folder of templates. */
export async function templateFile (folder: string): Promise<string> {
  return join(folder, `cluster-pglite-${await pgliteVersion()}.tar.gz`)
}

/**
 * Runs embedded-initdb in a child process: `folder` gets a new cluster, or, with `template`, none is kept and the
 * cluster is written there as a gzipped tar. Rejects with the child's stderr (or how it ended).
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
 * its postgresql.conf; written whole or not at all (a temporary name, then renamed). Returns its path.
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
 * kinds PGlite writes; an entry naming a path outside the folder refuses the template.
 */
export async function unpackTemplate (file: string, folder: string): Promise<void> {
  const archive = gunzipSync(await readFile(file))
  for (let offset = 0; offset + 512 <= archive.length;) {
    const header = archive.subarray(offset, offset + 512)
    const name = field(header, 0, 100)
    if (name === '') break // the archive's end: blocks of zeros
    const prefix = field(header, 345, 155)
    const size = parseInt(field(header, 124, 12).trim() || '0', 8)
    const type = field(header, 156, 1)
    const path = posix.normalize(`${prefix === '' ? '' : `${prefix}/`}${name}`).replace(/^\/+/, '').replace(/\/+$/, '')
    if (path === '..' || path.startsWith('../')) throw new Error(`the cluster template ${file} names a path outside its folder: ${name}`)
    const body = offset + 512
    if (type === '5') await mkdir(join(folder, path), { recursive: true, mode: 0o700 })
    else if (type === '0' || type === '') await writeFile(join(folder, path), archive.subarray(body, body + size), { mode: 0o600 })
    offset = body + Math.ceil(size / 512) * 512
  }
}
