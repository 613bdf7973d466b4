/**
 * The embedded database: PostgreSQL compiled to WebAssembly (PGlite, `@electric-sql/pglite`) in this process, behind
 * the same `PostgresDatabase` interface as a server's pool. The stores, their SQL and the migrations are the server's
 * own: one dialect, one contract suite.
 *
 * PGlite is one session. A connection taken from this "pool" holds that session alone until it is released, so a
 * transaction's statements never interleave with another caller's; a pool query waits its turn like any connection
 * would. A connection released as broken (`release(true)`) rolls back what it left open first — what a server does
 * when a connection closes.
 *
 * The session is spoken to by `pg`, over the wire protocol (embedded-wire.ts), so values come back as from a server
 * and the stores' named statements are prepared once per session. Tables are vacuumed here (embedded-vacuum.ts).
 * A new data folder's cluster is unpacked from a template (cluster-template.ts) or created in a child process
 * (embedded-initdb.ts), in a temporary sibling folder, then moved in: PGlite's initdb leaves ≈ 800 MB resident in the
 * process that ran it, and a first start cut short leaves no half-made database behind.
 */
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { importPeer } from '../../peers/import-peer.js'
import type pg from 'pg'
import { Kysely, PostgresDialect } from '../../peers/postgres.js'
import { StoreUnavailableError } from '../errors.js'
import { initdbInChild, templateFile, unpackTemplate } from './cluster-template.js'
import { isWriteFailure } from './connection-errors.js'
import { lockFolder } from './folder-lock.js'
import { privateFolder } from './folder-permissions.js'
import { namingClient, PreparedStatements } from './prepared-statements.js'
import { EmbeddedWire } from './embedded-wire.js'
import { startVacuum } from './embedded-vacuum.js'
import { assertSchemaName, type PostgresDatabase, type PostgresLogger } from './postgres-database.js'

export interface EmbeddedDatabaseOptions {
  /**
   * The data folder: created when missing, held by this process alone while open (folder-lock.ts), private to this
   * process's user (folders 0700, files 0600, after the start and at close: folder-permissions.ts). Absent: in
   * memory, gone when closed.
   */
  dataDir?: string
  /** The schema every table lives in (the session's `search_path`). Default `public`. */
  schema?: string
  /** PostgreSQL settings over EMBEDDED_SETTINGS (`shared_buffers: '32MB'`), given at each start. */
  settings?: Readonly<Record<string, string>>
  /**
   * A folder of cluster templates (`makeClusterTemplate`): a new data folder starts from the one of the installed
   * PGlite and this library's migrations when it is there (its `public` schema already migrated), instead of running
   * initdb (≈ 750 MB for a few seconds, in a child process). The gateway ships one, made by its build.
   */
  templates?: string
  /** How often tables with dead rows are vacuumed (embedded-vacuum.ts; PGlite has no autovacuum). Default 10 s. */
  vacuumIntervalMs?: number
  logger: PostgresLogger
}

/**
 * PostgreSQL's memory settings for a gateway. PGlite starts with a server's (shared_buffers 128MB,
 * maintenance_work_mem 64MB, wal_buffers 4MB, temp_buffers 8MB), and its WebAssembly memory never shrinks: a restart of
 * the gateway on a data folder was ≈ 390 MB resident, ≈ 225 MB with these (docs/state.md, "Memory").
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  shared_buffers: '16MB',
  maintenance_work_mem: '16MB'
})

/** `-c name=value` for each setting: PGlite's start parameters (after its own) and initdb's (into postgresql.conf). */
function settingParams (settings: Readonly<Record<string, string>>): string[] {
  return Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])
}

async function exists (path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false)
}

/**
 * A new data folder gets its cluster made in `<folder>.initdb` (removed first: a start cut short there left it half
 * made) — unpacked from the installed PGlite's template when `templates` holds one (cluster-template.ts), else by
 * initdb in a child process — renamed `<folder>.ready` once whole, then its entries moved into the folder, PG_VERSION
 * last: until PG_VERSION is in, the folder is no database and the next start resumes the move. Renames: one file
 * system. The caller holds the folder's lock, and with it the siblings.
 */
async function initialised (folder: string, params: string[], templates: string | undefined): Promise<void> {
  if (await exists(join(folder, 'PG_VERSION'))) return
  const making = `${folder}.initdb`
  const ready = `${folder}.ready`
  if (!await exists(ready)) {
    await rm(making, { recursive: true, force: true })
    // 0700 before the child writes its 0666 files into it (moved in, they are made private with the folder).
    await mkdir(making, { mode: 0o700 })
    try {
      const template = templates === undefined ? undefined : await templateFile(templates)
      if (template !== undefined && await exists(template)) await unpackTemplate(template, making)
      else await initdbInChild(making, params)
    } catch (error) {
      await rm(making, { recursive: true, force: true })
      throw error
    }
    await rename(making, ready)
  }
  const names = (await readdir(ready)).sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'))
  for (const name of names) await rename(join(ready, name), join(folder, name))
  await rmdir(ready)
}

/** One session, taken in turn: a queue of waiting holders. */
class SessionTurns {
  #tail: Promise<void> = Promise.resolve()

  /** Resolves when the session is ours; call the function it gives to hand it on. */
  async take (): Promise<() => void> {
    let handOn!: () => void
    const previous = this.#tail
    this.#tail = new Promise((resolve) => { handOn = resolve })
    await previous
    return handOn
  }
}

/** PGlite is loaded when an embedded database is opened: a server-only deployment does without it. */
const EMBEDDED = 'the embedded database (a2a-converse/postgres)'

/**
 * The session as a pool: a query waits its turn; a connection holds the session until released, and one released as
 * broken rolls back what it left open first (what a server does when a connection closes).
 */
function sessionPool (
  turns: SessionTurns,
  run: (query: string | pg.QueryConfig, values?: unknown[]) => Promise<pg.QueryResult>,
  rollback: () => Promise<void>,
  isClosed: () => boolean
): Pick<pg.Pool, 'query' | 'connect' | 'end'> {
  return {
    async query (query: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
      const handOn = await turns.take()
      try {
        return await run(query, values)
      } finally {
        handOn()
      }
    },
    async connect (): Promise<pg.PoolClient> {
      const handOn = await turns.take()
      let released = false
      const client = {
        query: run,
        release (broken?: boolean | Error) {
          if (released) return
          released = true
          // A broken connection's open transaction ends with it (a server rolls it back when the connection closes).
          if (broken === undefined || broken === false || isClosed()) handOn()
          else rollback().then(handOn, handOn)
        }
      }
      return client as unknown as pg.PoolClient
    },
    async end () {}
  } as unknown as Pick<pg.Pool, 'query' | 'connect' | 'end'>
}

/**
 * The PGlite session over the folder (made first when new), and `pg` speaking the wire protocol to it
 * (embedded-wire.ts): statements prepared once (prepared-statements.ts), values read as from a server (int8 and
 * numeric as strings).
 */
async function openSession (options: EmbeddedDatabaseOptions, params: string[]): Promise<{ session: PGlite, wire: pg.Client }> {
  const { PGlite: Session } = await importPeer<typeof import('@electric-sql/pglite')>('@electric-sql/pglite', EMBEDDED)
  if (options.dataDir !== undefined) await initialised(options.dataDir, params, options.templates)
  // In memory (no folder), initdb runs here: nothing outlives the session.
  const session = new Session({ dataDir: options.dataDir, startParams: [...Session.defaultStartParams, ...params], initDbStartParams: params })
  await session.waitReady
  // PGlite's start writes files 0666 or 0644 whatever the umask (folder-permissions.ts).
  if (options.dataDir !== undefined) await privateFolder(options.dataDir)
  if (options.schema !== undefined) await session.query(`set search_path to ${options.schema}`)
  const wire = new (namingClient(new PreparedStatements()))({ stream: () => new EmbeddedWire(session), user: 'postgres', database: 'postgres' })
  await wire.connect()
  return { session, wire }
}

export async function openEmbeddedDatabase (options: EmbeddedDatabaseOptions): Promise<PostgresDatabase> {
  return (await openEmbeddedSession(options)).database
}

/**
 * `openEmbeddedDatabase`, and its PGlite session: a cluster template is the session's dump once migrated
 * (embedded-initdb.ts). `params`, PostgreSQL's start parameters (and initdb's, in memory), replace the settings'.
 */
export async function openEmbeddedSession (
  options: EmbeddedDatabaseOptions,
  params = settingParams({ ...EMBEDDED_SETTINGS, ...options.settings })
): Promise<{ database: PostgresDatabase, session: PGlite }> {
  if (options.schema !== undefined) assertSchemaName(options.schema)
  const unlock = options.dataDir === undefined ? async () => {} : await lockFolder(options.dataDir)
  let session: PGlite
  let wire: pg.Client
  try {
    ({ session, wire } = await openSession(options, params))
  } catch (error) {
    await unlock()
    throw error
  }
  // pg emits 'error' only for a failure while no query is active: every message sent here belongs to a query, whose
  // caller gets its error. A listener, so that an unforeseen one is not a crash.
  /* c8 ignore next -- not reached: see above */
  wire.on('error', (error) => { options.logger.warn({ code: (error as { code?: unknown }).code }, 'the embedded database session reported an error') })
  const turns = new SessionTurns()
  let closed = false

  async function run (query: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
    if (closed) throw new StoreUnavailableError(new Error('the embedded database is closed'))
    try {
      return await wire.query(query, values)
    } catch (error) {
      // A full disk (or another failure to write the folder's files): the log names the folder to free up.
      if (options.dataDir !== undefined && isWriteFailure(error)) (error as Error).message = `DATA_DIR ${options.dataDir}: ${(error as Error).message}`
      throw error
    }
  }

  const pool = sessionPool(turns, run, async () => { await wire.query('rollback') }, () => closed)
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) })

  const stopVacuum = startVacuum(pool as unknown as pg.Pool, options.logger, options.vacuumIntervalMs)
  let closing: Promise<void> | undefined
  const database: PostgresDatabase = {
    db,
    pool: pool as unknown as pg.Pool,
    schema: options.schema,
    clientConfig: Object.freeze({}),
    logger: options.logger,
    async ping () {
      return !closed
    },
    async close () {
      closing ??= (async () => {
        await stopVacuum()
        // Every holder hands the session on before it closes: nothing is cut mid-transaction.
        const handOn = await turns.take()
        closed = true
        await db.destroy()
        await wire.end()
        await session.close()
        // What the session wrote since the start (its relation cache files are rewritten 0644).
        if (options.dataDir !== undefined) await privateFolder(options.dataDir)
        await unlock()
        handOn()
      })()
      await closing
    }
  }
  return { database, session }
}
