/**
 * The per-task turn lock shared by instances (PostgresTaskTurnLock): two "instances" (a lock on a pool of its own
 * each) on one schema run the turns of one task one at a time; a crashed holder's lease runs out and the next turn
 * proceeds; a wait is bounded; a lost database is a StoreUnavailableError, and a release or renewal that cannot
 * reach it is logged. Runs when TEST_DATABASE_URL is set.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL task turn lock', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate, TASK_TURN_LOCKS_TABLE } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresTaskTurnLock, DEFAULT_LEASE_MS } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.js')
  const { TaskBusyError, taskTurnKeyString } = await import('../../../packages/a2a-converse/src/stores/task-turn-lock.js')
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')
  const { InvalidOptionError } = await import('../../../packages/a2a-converse/src/core/errors.js')

  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const warnings: Array<{ obj: Record<string, unknown>, msg: string }> = []
  const logger = { warn: (obj: Record<string, unknown>, msg: string) => { warnings.push({ obj, msg }) } }
  const opened: PostgresDatabase[] = []
  const open = (): PostgresDatabase => {
    const database = createPostgresDatabase({ connectionString: url, schema, logger })
    opened.push(database)
    return database
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await migrate(open().db, { schema })
  t.teardown(async () => {
    for (const database of opened) await database.close()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  const key = (taskId: string) => ({ tenant: '', owner: 'unknown', taskId })
  const rows = async (): Promise<Array<{ lock_key: string, holder: string }>> =>
    (await admin.query(`select lock_key, holder from ${schema}.${TASK_TURN_LOCKS_TABLE} order by lock_key`)).rows

  t.test('two instances: the turns of one task run one at a time, every one of them runs', async (t) => {
    const a = new PostgresTaskTurnLock(open(), { scope: 'demo' })
    const b = new PostgresTaskTurnLock(open(), { scope: 'demo' })
    t.equal(a.leaseMs, DEFAULT_LEASE_MS)
    let running = 0
    let most = 0
    let ran = 0
    await Promise.all(Array.from({ length: 20 }, async (_, n) => {
      const release = await (n % 2 === 0 ? a : b).acquire(key('t-1'))
      running++
      most = Math.max(most, running)
      await sleep(2)
      ran++
      running--
      await release()
      await release() // idempotent
    }))
    t.equal(ran, 20, 'every turn ran')
    t.equal(most, 1, 'never two at once, across the instances')
    t.strictSame(await rows(), [], 'released: no lease row left')

    const held = await a.acquire(key('t-1'))
    const otherTask = await b.acquire(key('t-2'))
    const otherAgent = await new PostgresTaskTurnLock(open(), { scope: 'other' }).acquire(key('t-1'))
    t.pass('another task, or the same task id of another agent, does not wait')
    t.strictSame((await rows()).map((row) => row.lock_key).sort(),
      [taskTurnKeyString(key('t-1'), 'demo'), taskTurnKeyString(key('t-1'), 'other'), taskTurnKeyString(key('t-2'), 'demo')].sort())
    await Promise.all([held(), otherTask(), otherAgent()])
  })

  t.test('the lease table is unlogged (no disk flush per take and release)', async (t) => {
    const { rows: [row] } = await admin.query(`select relpersistence from pg_class where oid = '${schema}.${TASK_TURN_LOCKS_TABLE}'::regclass`)
    t.equal(row.relpersistence, 'u')
  })

  t.test('a crashed holder: its lease runs out and the next turn proceeds', async (t) => {
    const lock = new PostgresTaskTurnLock(open(), { scope: 'demo', waitTimeoutMs: 10_000 })
    const name = taskTurnKeyString(key('t-crash'), 'demo')
    // What a holder that was SIGKILLed mid-turn leaves: its row, with a lease it will never renew.
    await admin.query(`insert into ${schema}.${TASK_TURN_LOCKS_TABLE} (lock_key, holder, expires_at) values ($1, 'gone', now() + interval '300 milliseconds')`, [name])
    const release = await lock.acquire(key('t-crash'))
    t.not((await rows()).find((row) => row.lock_key === name)?.holder, 'gone', 'taken over by the new turn')
    await release()
    t.strictSame(await rows(), [])
  })

  t.test('a holder whose lease was taken over releases nothing of the new holder\'s', async (t) => {
    const slow = new PostgresTaskTurnLock(open(), { scope: 'demo', leaseMs: 60_000 })
    const release = await slow.acquire(key('t-over'))
    const name = taskTurnKeyString(key('t-over'), 'demo')
    await admin.query(`update ${schema}.${TASK_TURN_LOCKS_TABLE} set holder = 'newer' where lock_key = $1`, [name])
    await release()
    t.strictSame((await rows()).map((row) => row.holder), ['newer'], 'the newer holder keeps its lease')
    await admin.query(`delete from ${schema}.${TASK_TURN_LOCKS_TABLE}`)
  })

  t.test('a long turn keeps its lease: it is renewed while held', async (t) => {
    const a = new PostgresTaskTurnLock(open(), { scope: 'demo', leaseMs: 150 })
    const b = new PostgresTaskTurnLock(open(), { scope: 'demo', waitTimeoutMs: 50 })
    const release = await a.acquire(key('t-long'))
    const before = (await admin.query(`select expires_at from ${schema}.${TASK_TURN_LOCKS_TABLE}`)).rows[0].expires_at as Date
    for (let i = 0; i < 100; i++) {
      const now = (await admin.query(`select expires_at from ${schema}.${TASK_TURN_LOCKS_TABLE}`)).rows[0].expires_at as Date
      if (now > before) break
      await sleep(20)
    }
    const after = (await admin.query(`select expires_at from ${schema}.${TASK_TURN_LOCKS_TABLE}`)).rows[0].expires_at as Date
    t.ok(after > before, 'the lease was extended')
    await t.rejects(b.acquire(key('t-long')), TaskBusyError, 'still held: another instance waits, then gives up')
    await release()
    await (await b.acquire(key('t-long')))()
  })

  t.test('a wait is bounded (TaskBusyError) and ends with the request\'s signal', async (t) => {
    const a = new PostgresTaskTurnLock(open(), { scope: 'demo' })
    const b = new PostgresTaskTurnLock(open(), { scope: 'demo', waitTimeoutMs: 100, retryInitialDelayMs: 1, retryMaxDelayMs: 20 })
    const held = await a.acquire(key('t-busy'))
    await t.rejects(b.acquire(key('t-busy')), { code: 'A2A_CONVERSE_TASK_BUSY', taskId: 't-busy' })
    const gone = new AbortController()
    const waiting = b.acquire(key('t-busy'), gone.signal)
    const queued = b.acquire(key('t-busy'), gone.signal)
    const both = Promise.all([
      t.rejects(waiting, { message: 'client gone' }, 'while polling the lease'),
      t.rejects(queued, { message: 'client gone' }, 'while queued behind a turn of its own instance')
    ])
    gone.abort(new Error('client gone'))
    await both
    await held()
    await (await b.acquire(key('t-busy')))()
    t.strictSame(await rows(), [])
  })

  t.test('the database lost: taking is a StoreUnavailableError; a release or renewal that fails is logged', async (t) => {
    const database = open()
    const lock = new PostgresTaskTurnLock(database, { scope: 'demo', leaseMs: 30 })
    const release = await lock.acquire(key('t-lost'))
    await database.pool.end()
    for (let i = 0; i < 200 && !warnings.some((w) => w.msg.includes('lease renewal failed')); i++) await sleep(10)
    t.ok(warnings.some((w) => w.msg === 'task turn lock: lease renewal failed'), 'renewal failure logged')
    await release()
    t.ok(warnings.some((w) => w.msg === 'task turn lock: release failed (the lease runs out by itself)' && w.obj.taskId === 't-lost'))
    await admin.query(`delete from ${schema}.${TASK_TURN_LOCKS_TABLE}`)

    const unreachable = createPostgresDatabase({ connectionString: 'postgres://postgres@127.0.0.1:1/test', logger, connectTimeoutMs: 500 })
    opened.push(unreachable)
    const down = new PostgresTaskTurnLock(unreachable)
    await t.rejects(down.acquire(key('t-down')), StoreUnavailableError)
  })

  t.test('options are validated', async (t) => {
    const database = opened[0]
    for (const name of ['leaseMs', 'waitTimeoutMs', 'retryInitialDelayMs', 'retryMaxDelayMs']) {
      t.throws(() => new PostgresTaskTurnLock(database, { [name]: 0 }), InvalidOptionError, name)
    }
    t.throws(() => new PostgresTaskTurnLock(database, { scope: 1 as unknown as string }), new InvalidOptionError('scope', 'must be a string'))
  })
}
