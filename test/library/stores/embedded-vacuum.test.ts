/**
 * The embedded database's vacuum (embedded-vacuum.ts): PGlite has no autovacuum, so the database vacuums the tables
 * whose dead rows passed autovacuum's threshold, every `vacuumIntervalMs`; a table it cannot vacuum is logged and the
 * others go on; closing the database stops it, waiting for a run in progress.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { startVacuum, vacuumDue, vacuumTables } from '../../../packages/a2a-converse/src/stores/postgres/embedded-vacuum.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

interface Warning { object: Record<string, unknown>, message: string }

function collecting (): { warnings: Warning[], logger: { warn: (object: Record<string, unknown>, message: string) => void } } {
  const warnings: Warning[] = []
  return { warnings, logger: { warn: (object, message) => { warnings.push({ object, message }) } } }
}

/** A table with `rows` rows deleted again: as many dead rows. */
async function churn (database: PostgresDatabase, table: string, rows: number): Promise<void> {
  await database.pool.query(`create table if not exists ${table} (id integer primary key, text text)`)
  await database.pool.query(`insert into ${table} select n, repeat('x', 100) from generate_series(1, ${rows}) as n`)
  await database.pool.query(`delete from ${table}`)
}

async function stats (database: PostgresDatabase, table: string): Promise<{ dead: number, vacuums: number }> {
  const { rows } = await database.pool.query<{ dead: string, vacuums: string }>(
    'select n_dead_tup as dead, vacuum_count as vacuums from pg_stat_user_tables where relname = $1', [table])
  return { dead: Number(rows[0].dead), vacuums: Number(rows[0].vacuums) }
}

t.test('a table whose dead rows passed the threshold is vacuumed on the next look; one below it is not', async (t) => {
  const { warnings, logger } = collecting()
  const database = await openEmbeddedDatabase({ schema: 'vacuumed', logger, vacuumIntervalMs: 20 })
  t.teardown(async () => await database.close())
  await database.pool.query('create schema if not exists vacuumed')
  await churn(database, 'few', 40)
  await churn(database, 'churned', 500)
  // A state observed, not a delay: at most 10 s.
  for (let waited = 0; (await stats(database, 'churned')).vacuums === 0 && waited < 10_000; waited += 20) await sleep(20)
  t.same(await stats(database, 'churned'), { dead: 0, vacuums: 1 }, 'vacuumed: no dead rows left')
  t.equal((await stats(database, 'few')).vacuums, 0, 'below autovacuum\'s threshold (50 and a fifth of the live rows): left')
  t.same(warnings, [])
})

t.test('a table that cannot be vacuumed is logged, and the others are vacuumed all the same', async (t) => {
  const { warnings, logger } = collecting()
  const database = await openEmbeddedDatabase({ schema: 'failing', logger })
  t.teardown(async () => await database.close())
  await database.pool.query('create schema if not exists failing')
  await churn(database, 'kept', 100)
  await vacuumTables(database.pool, ['failing.gone', 'failing.kept'], logger)
  t.same(warnings, [{ object: { table: 'failing.gone', code: '42P01' }, message: 'the embedded database could not vacuum a table' }])
  t.equal((await stats(database, 'kept')).vacuums, 1)
})

t.test('a database that cannot be read: logged, nothing thrown', async (t) => {
  const { warnings, logger } = collecting()
  // Nothing listens on port 1: the connection is refused.
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
  t.teardown(async () => await pool.end())
  await vacuumDue(pool, logger)
  t.match(warnings, [{ object: { code: 'ECONNREFUSED' }, message: 'the embedded database could not read which tables to vacuum' }])
})

t.test('stopping waits for a run in progress, and none follows it', async (t) => {
  const { logger } = collecting()
  const database = await openEmbeddedDatabase({ logger })
  t.teardown(async () => await database.close())
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let asked: () => void = () => {}
  const firstLook = new Promise<void>((resolve) => { asked = resolve })
  let looks = 0
  // The database's pool, its first look held until the stop is asked for.
  const gated = {
    query: async (text: string) => {
      looks++
      asked()
      await gate
      return await database.pool.query(text)
    }
  } as unknown as Parameters<typeof startVacuum>[0]
  // The vacuum's timer does not hold the process open (the gateway's server does): this test's interval does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => { clearInterval(alive) })
  const stop = startVacuum(gated, logger, 1)
  await firstLook
  const stopped = stop()
  open()
  await stopped
  await sleep(20)
  t.equal(looks, 1, 'one look, the run in progress; no other after the stop')
})
