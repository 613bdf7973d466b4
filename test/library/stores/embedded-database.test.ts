/**
 * The embedded database's pool over one PGlite session: a connection holds the session alone (a transaction never
 * interleaves with another caller's statements), statements are prepared once (a bounded number), a broken connection
 * rolls back what it left open, values read as pg reads them, and its data folder is one process's.
 */
import t from 'tap'
import { join } from 'node:path'
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { EMBEDDED_SETTINGS, openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { initdbFailure } from '../../../packages/a2a-converse/src/stores/postgres/cluster-template.js'
import { MAX_PREPARED_STATEMENTS } from '../../../packages/a2a-converse/src/stores/postgres/prepared-statements.js'
import { FolderInUseError, LOCK_FILE, lockFolder, running } from '../../../packages/a2a-converse/src/stores/postgres/folder-lock.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'

const logger = { warn () {} }
// Each case opens a PGlite of its own (an initdb: seconds, tens of them on a loaded 2-core machine).
t.setTimeout(300_000)

t.test('a connection holds the session: a pool query waits for its transaction to end', async (t) => {
  const database = await openEmbeddedDatabase({ logger })
  t.teardown(async () => await database.close())
  await database.pool.query('create table counters (id text primary key, n int8 not null)')
  const client = await database.pool.connect()
  await client.query('BEGIN')
  await client.query("insert into counters values ('a', 1)")
  const outside = database.pool.query('select count(*) as n from counters')
  await client.query("insert into counters values ('b', 9007199254740993)")
  await client.query('COMMIT')
  client.release()
  t.strictSame((await outside).rows, [{ n: '2' }], 'the count after the commit, as a string (int8, as pg reads it)')
  t.strictSame((await database.pool.query('select n from counters where id = $1', ['b'])).rows, [{ n: '9007199254740993' }], 'no digit lost')
  const write = await database.pool.query("update counters set n = n + 1 where id = 'a'")
  t.strictSame([write.command, write.rowCount], ['UPDATE', 1], 'a write tells its command and rows (Kysely reads them)')
})

t.test('statements with parameters are prepared once per session, at most MAX_PREPARED_STATEMENTS of them', async (t) => {
  const database = await openEmbeddedDatabase({ logger })
  t.teardown(async () => await database.close())
  const prepared = async (): Promise<string[]> =>
    (await database.pool.query('select statement from pg_prepared_statements order by prepare_time')).rows.map((row) => row.statement as string)
  t.strictSame(await prepared(), [], 'none yet')
  for (let run = 0; run < 3; run++) t.strictSame((await database.pool.query('select $1::int + 1 as n', [run])).rows, [{ n: run + 1 }])
  t.strictSame(await prepared(), ['select $1::int + 1 as n'], 'one text, prepared once, run three times')
  t.strictSame((await database.pool.query({ name: 'mine', text: 'select $1::text as s' }, ['x'])).rows, [{ s: 'x' }], 'a statement named by its caller')
  for (let extra = 0; extra < MAX_PREPARED_STATEMENTS + 10; extra++) {
    t.equal((await database.pool.query(`select $1::int + ${extra} as n`, [1])).rows[0].n, extra + 1)
  }
  const kept = await prepared()
  t.equal(kept.length, MAX_PREPARED_STATEMENTS + 1, 'the bound, and the caller\'s own')
  t.notOk(kept.includes(`select $1::int + ${MAX_PREPARED_STATEMENTS + 9} as n`), 'past the bound: parsed on each call, not kept')
})

t.test('a connection released as broken rolls back what it left open', async (t) => {
  const database = await openEmbeddedDatabase({ schema: 'broken_release', logger })
  t.teardown(async () => await database.close())
  await database.pool.query('create schema broken_release')
  await database.pool.query('create table t (id text)')
  const client = await database.pool.connect()
  await client.query('BEGIN')
  await client.query("insert into t values ('half-written')")
  client.release(true)
  client.release()
  t.same((await database.pool.query('select * from t')).rows, [], 'nothing half-written')
  t.equal((await database.pool.query('select current_schema() as s')).rows[0].s, 'broken_release', 'the schema option is the search path')
})

t.test('closed: every call is a StoreUnavailableError, ping says false, close again is fine', async (t) => {
  const database = await openEmbeddedDatabase({ logger })
  t.equal(await database.ping(), true)
  await database.close()
  await database.close()
  t.equal(await database.ping(), false)
  await t.rejects(database.pool.query('select 1'), StoreUnavailableError)
})

t.test('one process per folder: a running holder refuses, a lock left by a dead process or by this pid is taken over', async (t) => {
  const dir = t.testdir()
  const folder = join(dir, 'data')
  const release = await lockFolder(folder)
  await t.rejects(lockFolder(folder), new FolderInUseError(folder, process.pid), 'twice in this process')
  await release()
  // pid 1 runs (init): another process holds the folder.
  writeFileSync(join(folder, LOCK_FILE), '1')
  await t.rejects(lockFolder(folder), { name: 'FolderInUseError', pid: 1, message: `${folder} is in use by another running process (pid 1)` })
  for (const stale of ['2147483646', String(process.pid), 'garbage']) {
    writeFileSync(join(folder, LOCK_FILE), stale)
    const again = await lockFolder(folder)
    await again()
  }
  t.pass('stale locks taken over')
  // Another user's process: signal 0 answers EPERM, and the process runs (whoever runs this suite, root included).
  writeFileSync(join(folder, LOCK_FILE), '4242')
  const asked: number[] = []
  const anotherUsers = (pid: number) => { asked.push(pid); throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' }) }
  await t.rejects(lockFolder(folder, anotherUsers), { name: 'FolderInUseError', pid: 4242 }, 'EPERM: held by a live process of another user')
  t.strictSame(asked, [4242])
  const gone = () => { throw Object.assign(new Error('no such process'), { code: 'ESRCH' }) }
  await (await lockFolder(folder, gone))()
  t.ok(running(process.pid), 'the default probe: process.kill')
  // A folder that can be made but holds no file: its path leaves no room for the lock's name (PATH_MAX 4096).
  let deep = dir
  while (deep.length < 4090 - 200) deep = join(deep, 'd'.repeat(200))
  deep = join(deep, 'e'.repeat(4090 - deep.length - 1))
  await t.rejects(lockFolder(deep), { code: 'ENAMETOOLONG' })
})

t.test('a folder that cannot be created: the file system\'s error; one that holds no database: PGlite\'s, and the lock is let go', async (t) => {
  const dir = t.testdir({ file: 'x', 'not-a-database': { PG_VERSION: '99' } })
  await t.rejects(openEmbeddedDatabase({ dataDir: join(dir, 'file', 'data'), logger }), { code: 'ENOTDIR' })
  const folder = join(dir, 'not-a-database')
  await t.rejects(openEmbeddedDatabase({ dataDir: folder, logger }), { message: /PGlite/ })
  await (await lockFolder(folder))()
})

t.test('a failure to write the folder\'s files (disk_full, io_error) names DATA_DIR and reads as the store unavailable', async (t) => {
  const { toStoreError } = await import('../../../packages/a2a-converse/src/stores/postgres/connection-errors.js')
  const dataDir = t.testdir()
  const database = await openEmbeddedDatabase({ dataDir, logger })
  t.teardown(async () => await database.close())
  // The server's own SQLSTATEs, raised as PostgreSQL raises them when a write finds no room (test/gateway/full-disk.test.ts fills a real disk).
  for (const [errcode, code] of [['disk_full', '53100'], ['io_error', '58030']]) {
    const error = await database.pool.query(`do $$ begin raise exception using errcode = '${errcode}', message = 'could not extend file: No space left on device'; end $$`).catch((error: unknown) => error)
    t.match(error, { code, message: `DATA_DIR ${dataDir}: could not extend file: No space left on device` })
    t.type(toStoreError(error), StoreUnavailableError, `${errcode}: the store is unavailable (try again later)`)
  }
  const other = await database.pool.query('select * from no_such_table').catch((error: unknown) => error)
  t.notMatch((other as Error).message, /DATA_DIR/, 'other errors are the query\'s, as they were')
  t.notOk(toStoreError(other) instanceof StoreUnavailableError)
  const inMemory = await openEmbeddedDatabase({ logger })
  t.teardown(async () => await inMemory.close())
  const unnamed = await inMemory.pool.query("do $$ begin raise exception using errcode = 'disk_full', message = 'full'; end $$").catch((error: unknown) => error)
  t.match(unnamed, { code: '53100', message: 'full' }, 'no folder, nothing to name')
})

t.test('a new folder\'s cluster is made by a child process beside it and moved in; the memory settings hold at every start', async (t) => {
  const dir = t.testdir()
  const folder = join(dir, 'data')
  // A start cut short while the child was at work left a half-made sibling: made again.
  mkdirSync(`${folder}.initdb`)
  writeFileSync(join(`${folder}.initdb`, 'PG_VERSION'), '17')
  const database = await openEmbeddedDatabase({ dataDir: folder, logger })
  const setting = async (db: typeof database, name: string): Promise<unknown> => (await db.pool.query(`show ${name}`)).rows[0][name]
  t.strictSame([await setting(database, 'shared_buffers'), await setting(database, 'maintenance_work_mem')], [EMBEDDED_SETTINGS.shared_buffers, EMBEDDED_SETTINGS.maintenance_work_mem])
  t.notOk(existsSync(`${folder}.initdb`), 'no sibling left')
  t.notOk(existsSync(`${folder}.ready`))
  await database.pool.query("create table kept as select 'x' as v")
  await database.close()

  // A start cut short while moving the made cluster in: part of it in the folder, the rest (PG_VERSION with it) beside.
  const other = join(dir, 'other')
  mkdirSync(other)
  mkdirSync(`${other}.ready`)
  for (const name of readdirSync(folder)) renameSync(join(folder, name), join(['base', 'PG_VERSION'].includes(name) ? `${other}.ready` : other, name))
  const resumed = await openEmbeddedDatabase({ dataDir: other, logger, settings: { shared_buffers: '24MB' } })
  t.teardown(async () => await resumed.close())
  t.strictSame((await resumed.pool.query('select v from kept')).rows, [{ v: 'x' }], 'the move resumed: the same database')
  t.equal(await setting(resumed, 'shared_buffers'), '24MB', 'a setting given over the defaults')
  t.notOk(existsSync(`${other}.ready`))
  const inMemory = await openEmbeddedDatabase({ logger })
  t.teardown(async () => await inMemory.close())
  t.equal(await setting(inMemory, 'shared_buffers'), EMBEDDED_SETTINGS.shared_buffers, 'in memory too')
})

t.test('a child that fails: its message, no database and no sibling left, the lock let go', async (t) => {
  const folder = join(t.testdir(), 'data')
  await t.rejects(openEmbeddedDatabase({ dataDir: folder, logger, settings: { shared_buffers: 'lots' } }), { message: /^INITDB failed to initialize/ }, 'PGlite\'s words, from the child')
  t.notOk(existsSync(join(folder, 'PG_VERSION')))
  t.notOk(existsSync(`${folder}.initdb`))
  await (await lockFolder(folder))()
  t.equal(initdbFailure('', null, 'SIGKILL').message, 'the database\'s initialisation process ended with SIGKILL', 'killed (a memory limit)')
  t.equal(initdbFailure(' \n', 3, null).message, 'the database\'s initialisation process ended with exit code 3')
})
