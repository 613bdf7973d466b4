/**
 * One PostgreSQL connection pool shared by every store of an instance: the SDK's DatabaseTaskStore (through
 * Kysely), the conversation store and the task event hub (through `pg` directly). Built to survive the database
 * going away: connection errors are logged, never thrown at the process; calls fail fast (bounded connect
 * timeout) while it is down; new connections are made as soon as it is back.
 */
import type pg from 'pg'
import { Kysely, PostgresDialect, pgDriver } from '../../peers/postgres.js'
import { InvalidOptionError } from '../../core/errors.js'
import { namingClient, PreparedStatements } from './prepared-statements.js'
import { integerOption } from '../../core/integer-option.js'

/** The logging the PostgreSQL modules do: pino's `warn(obj, msg)` shape, so a Fastify `app.log` fits. */
export interface PostgresLogger {
  warn (obj: Record<string, unknown>, msg: string): void
}

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database?…`. Its own `options=` / `application_name=` win over ours. */
  connectionString: string
  /**
   * The schema every table lives in (set as the connections' `search_path`; created by `migrate`). A lowercase
   * SQL identifier. Default: the server's default search path (usually `public`).
   */
  schema?: string
  /** Connections in the pool. Default 10. */
  poolMax?: number
  /** Bound on opening a connection (and so on any call while the server is unreachable). Default 5000 ms. */
  connectTimeoutMs?: number
  /** Server-side `statement_timeout` of every connection; 0 disables it. Default 30000 ms. */
  statementTimeoutMs?: number
  /** An idle connection is closed after this. Default 30000 ms. */
  idleTimeoutMs?: number
  /** `application_name` of the connections (visible in `pg_stat_activity`). Default `a2a-converse`. */
  applicationName?: string
  /**
   * Pipelined connections (pg's `pipeline` mode): queries issued together go out without waiting for each other's
   * answers, so a conversation update takes two round trips instead of four. Default false.
   */
  pipeline?: boolean
  /** Where connection errors are reported. Default: `console.warn`. */
  logger?: PostgresLogger
}

export interface PostgresDatabase {
  /** Kysely over the pool, for the SDK's `DatabaseTaskStore` and `migrate`. */
  readonly db: Kysely<any>
  readonly pool: pg.Pool
  /** The schema option, when one was given. */
  readonly schema: string | undefined
  /** The settings of the pool's connections, for a dedicated connection (the event hub's LISTEN). */
  readonly clientConfig: Readonly<pg.ClientConfig>
  readonly logger: PostgresLogger
  /** True when `SELECT 1` answers within the connect timeout; never throws (for readiness checks). */
  ping (): Promise<boolean>
  /** Ends the pool (waits for checked-out connections to be released). Idempotent. */
  close (): Promise<void>
}

export const DEFAULT_POOL_MAX = 10
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000
export const DEFAULT_APPLICATION_NAME = 'a2a-converse'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Throws InvalidOptionError unless `schema` is a lowercase SQL identifier (usable unquoted in `search_path`). */
export function assertSchemaName (schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new InvalidOptionError('schema', 'must be a lowercase SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters)')
  }
}

const consoleLogger: PostgresLogger = {
  warn (obj, msg) {
    console.warn(`a2a-converse: ${msg}`, obj)
  }
}

export function createPostgresDatabase (options: PostgresDatabaseOptions): PostgresDatabase {
  if (typeof options.connectionString !== 'string' || options.connectionString === '') {
    throw new InvalidOptionError('connectionString', 'must be a non-empty postgres:// URL')
  }
  if (options.schema !== undefined) assertSchemaName(options.schema)
  const poolMax = integerOption('poolMax', options.poolMax, DEFAULT_POOL_MAX, 1)
  const connectTimeoutMs = integerOption('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 1)
  const statementTimeoutMs = integerOption('statementTimeoutMs', options.statementTimeoutMs, DEFAULT_STATEMENT_TIMEOUT_MS, 0)
  const idleTimeoutMs = integerOption('idleTimeoutMs', options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 1)
  const logger = options.logger ?? consoleLogger

  const clientConfig: pg.ClientConfig = Object.freeze({
    connectionString: options.connectionString,
    connectionTimeoutMillis: connectTimeoutMs,
    // Detects connections the network silently dropped (no FIN, no RST) on the kernel's keepalive schedule.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: options.applicationName ?? DEFAULT_APPLICATION_NAME,
    pipeline: options.pipeline === true,
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
    ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {})
  })
  const pool = new pgDriver.Pool({ ...clientConfig, Client: namingClient(new PreparedStatements()), max: poolMax, idleTimeoutMillis: idleTimeoutMs })
  // pg-pool re-emits an idle connection's error on the pool; without a listener that would be an uncaught
  // exception. The per-connection listener below already logs it, so this one only keeps the process alive.
  pool.on('error', () => {})
  // A checked-out connection has no listener of pg-pool's: a server restart between two queries of a
  // transaction would crash the process. Every connection gets a permanent one.
  pool.on('connect', (client) => {
    client.on('error', (err) => { logger.warn({ err }, 'PostgreSQL connection error (the pool replaces the connection)') })
  })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })

  let closing: Promise<void> | undefined
  return {
    db,
    pool,
    schema: options.schema,
    clientConfig,
    logger,
    async ping (): Promise<boolean> {
      if (closing !== undefined) return false
      let timer: NodeJS.Timeout | undefined
      const answered = pool.query('SELECT 1').then(() => true, () => false)
      // The connect timeout bounds a new connection; this bounds a query on an existing one that no longer answers.
      const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, connectTimeoutMs, false) })
      try {
        return await Promise.race([answered, timedOut])
      } finally {
        clearTimeout(timer)
      }
    },
    async close (): Promise<void> {
      closing ??= (async () => {
        await db.destroy()
        // Kysely ends the pool only when it ran a query itself (its driver starts lazily).
        if (!pool.ending) await pool.end()
      })()
      await closing
    }
  }
}
