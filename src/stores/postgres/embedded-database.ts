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
 * Values come back as `pg` returns them (int8 and numeric as strings), so the stores read both alike.
 */
import { PGlite, type Results } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import type pg from 'pg'
import { StoreUnavailableError } from '../errors.js'
import { isWriteFailure } from './connection-errors.js'
import { lockFolder } from './folder-lock.js'
import { assertSchemaName, type PostgresDatabase, type PostgresLogger } from './postgres-database.js'

export interface EmbeddedDatabaseOptions {
  /**
   * The data folder: created when missing, held by this process alone while open (folder-lock.ts). Absent: in memory,
   * gone when closed.
   */
  dataDir?: string
  /** The schema every table lives in (the session's `search_path`). Default `public`. */
  schema?: string
  logger: PostgresLogger
}

/** int8 (20) as a string, as `pg` reads it: a count or a sequence never loses digits. */
const PG_COMPATIBLE_PARSERS = { 20: (value: string) => value }

type Query = string | { text: string, name?: string }

/** A `pg` query result, as the stores and Kysely read it (Kysely reads `command` and `rowCount` of a write). */
function pgResult (result: { rows: unknown[], affectedRows?: number, fields: unknown[], command?: string }): pg.QueryResult {
  // PGlite counts a statement's affected rows on every result; a SELECT's rows are its count, as pg reports it.
  const rowCount = result.command === 'SELECT' ? result.rows.length : result.affectedRows as number
  return { rows: result.rows, rowCount, command: result.command, fields: result.fields, oid: 0 } as unknown as pg.QueryResult
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

export async function openEmbeddedDatabase (options: EmbeddedDatabaseOptions): Promise<PostgresDatabase> {
  if (options.schema !== undefined) assertSchemaName(options.schema)
  const unlock = options.dataDir === undefined ? async () => {} : await lockFolder(options.dataDir)
  let session: PGlite
  try {
    session = new PGlite({ dataDir: options.dataDir, parsers: PG_COMPATIBLE_PARSERS })
    await session.waitReady
    if (options.schema !== undefined) await session.query(`set search_path to ${options.schema}`)
  } catch (error) {
    await unlock()
    throw error
  }
  const turns = new SessionTurns()
  let closed = false

  async function run (query: Query, values?: unknown[]): Promise<pg.QueryResult> {
    if (closed) throw new StoreUnavailableError(new Error('the embedded database is closed'))
    const text = typeof query === 'string' ? query : query.text
    try {
      // Without parameters (BEGIN, COMMIT, ROLLBACK): PostgreSQL's simple protocol, a third of the extended one's cost.
      if (values === undefined || values.length === 0) return pgResult((await session.exec(text)).at(-1) as Results)
      return pgResult(await session.query(text, values))
    } catch (error) {
      // A full disk (or another failure to write the folder's files): the log names the folder to free up.
      if (options.dataDir !== undefined && isWriteFailure(error)) (error as Error).message = `DATA_DIR ${options.dataDir}: ${(error as Error).message}`
      throw error
    }
  }

  const pool = {
    async query (query: Query, values?: unknown[]): Promise<pg.QueryResult> {
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
          if (broken === undefined || broken === false || closed) handOn()
          else session.query('rollback').then(handOn, handOn)
        }
      }
      return client as unknown as pg.PoolClient
    },
    async end () {}
  }
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) })

  let closing: Promise<void> | undefined
  return {
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
        // Every holder hands the session on before it closes: nothing is cut mid-transaction.
        const handOn = await turns.take()
        closed = true
        await db.destroy()
        await session.close()
        await unlock()
        handOn()
      })()
      await closing
    }
  }
}
