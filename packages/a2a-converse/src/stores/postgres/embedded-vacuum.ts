/**
 * The embedded database's vacuum (issue 43; docs/state.md, "One code for both PostgreSQLs": no autovacuum). PGlite runs
 * PostgreSQL in this process without autovacuum's workers, so the row versions that updates and deletes leave behind
 * stayed for good, and every scan of a churned table walked them: one caller's task reservations (each a row inserted,
 * then deleted once taken or expired) cost 355 µs of CPU each over the first 2,000, 900 µs after 12,000 (11,616 dead
 * rows), and 93–108 µs after a VACUUM of the table, which took 5.4 ms; vacuumed every second, 109–145 µs throughout
 * 16,000 (scratch scripts, 2026-12-07). So this does what autovacuum would: every `intervalMs` the tables whose dead
 * rows passed autovacuum's default threshold (50 and a fifth of the live rows) are vacuumed, one at a time, each a
 * statement of its own between the turns' statements. A server has its own autovacuum.
 */
import type pg from 'pg'
import type { PostgresLogger } from './postgres-database.js'

/**
 * How often the tables are looked at: more often than autovacuum's minute, because the cost of dead rows grows with
 * their number and each run here holds the one session; a look with nothing due is one read of the statistics.
 */
export const VACUUM_INTERVAL_MS = 10_000

/** The tables due, most dead rows first, as quoted qualified names. */
const DUE = `select format('%I.%I', schemaname, relname) as name from pg_stat_user_tables
  where n_dead_tup > 50 + 0.2 * n_live_tup order by n_dead_tup desc`

/** Vacuums each of `tables` (quoted qualified names); a failure is logged and the others go on. */
export async function vacuumTables (pool: Pick<pg.Pool, 'query'>, tables: readonly string[], logger: PostgresLogger): Promise<void> {
  for (const table of tables) {
    try {
      await pool.query(`vacuum ${table}`)
    } catch (error) {
      logger.warn({ table, code: (error as { code?: unknown }).code }, 'the embedded database could not vacuum a table')
    }
  }
}

/** Vacuums the tables due now (never rejects: a failure is logged). */
export async function vacuumDue (pool: Pick<pg.Pool, 'query'>, logger: PostgresLogger): Promise<void> {
  let tables: string[]
  try {
    tables = (await pool.query<{ name: string }>(DUE)).rows.map((row) => row.name)
  } catch (error) {
    logger.warn({ code: (error as { code?: unknown }).code }, 'the embedded database could not read which tables to vacuum')
    return
  }
  await vacuumTables(pool, tables, logger)
}

/**
 * Vacuums the tables due every `intervalMs` (the next wait starts when a run ends) until the function it answers is
 * called, which waits for a run in progress. The timer does not keep the process alive.
 */
export function startVacuum (pool: Pick<pg.Pool, 'query'>, logger: PostgresLogger, intervalMs = VACUUM_INTERVAL_MS): () => Promise<void> {
  let stopped = false
  let running = Promise.resolve()
  let timer: NodeJS.Timeout
  const wait = (): void => {
    timer = setTimeout(() => {
      running = vacuumDue(pool, logger).then(() => { if (!stopped) wait() })
    }, intervalMs).unref()
  }
  wait()
  return async () => {
    stopped = true
    clearTimeout(timer)
    await running
  }
}
