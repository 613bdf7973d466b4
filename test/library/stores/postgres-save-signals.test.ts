/**
 * Save signals on PostgreSQL: a PostgresTaskStore given the task event hub signals each committed save through it
 * (NOTIFY), so a save on one instance wakes `onSaved` listeners on another (over the hub's one LISTEN connection);
 * the saving instance wakes its own at once and ignores its echo; a refused save notifies nobody; loadWhen on a
 * second instance returns as soon as the first one's save lands; a signal that cannot be sent is logged, and the
 * save still succeeds. Runs when TEST_DATABASE_URL is set.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { TaskState } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import pg from 'pg'
import { loadWhen } from '../../../packages/a2a-converse/src/stores/task-save-signals.js'
import { storedTask } from '../../fixtures/stored-task.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL save signals', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresTaskEventHub, MAX_NOTIFY_PAYLOAD_BYTES } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-event-hub.js')
  const { PostgresTaskStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js')

  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const warnings: string[] = []
  const logger = { warn: (_obj: unknown, msg: string) => { warnings.push(msg) } }
  const databases: PostgresDatabase[] = []
  const hubs: Array<InstanceType<typeof PostgresTaskEventHub>> = []
  /** One instance: a pool, a hub on it, a task store signalling through the hub. */
  const instance = async () => {
    const database = createPostgresDatabase({ connectionString: url, schema, logger })
    databases.push(database)
    const hub = new PostgresTaskEventHub(database)
    hubs.push(hub)
    await hub.ready()
    return { hub, store: new PostgresTaskStore(database.db, { signals: hub }) }
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const first = createPostgresDatabase({ connectionString: url, schema, logger })
  databases.push(first)
  await migrate(first.db, { schema })
  t.teardown(async () => {
    for (const hub of hubs) await hub.close()
    for (const database of databases) await database.close()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  const context = new ServerCallContext()
  const task = storedTask
  /** Resolves at the listener's `count`-th call. */
  const counter = () => {
    let calls = 0
    const waiting: Array<{ count: number, resolve: () => void }> = []
    return {
      get calls () { return calls },
      listener: () => {
        calls++
        for (const wait of waiting.filter((wait) => wait.count <= calls)) wait.resolve()
      },
      reach: async (count: number) => { if (calls < count) await new Promise<void>((resolve) => { waiting.push({ count, resolve }) }) }
    }
  }

  t.test('a save on one instance wakes the listeners of both, once each; a refused save wakes nobody', async (t) => {
    const a = await instance()
    const b = await instance()
    const here = counter()
    const there = counter()
    const stopHere = a.store.onSaved('t-1', here.listener)
    const stopThere = b.store.onSaved('t-1', there.listener)
    t.equal(b.hub.saveListeners, 1)

    await a.store.save(task('t-1', TaskState.TASK_STATE_WORKING), context)
    t.equal(here.calls, 1, 'the saving instance wakes its listener before save resolves')
    await there.reach(1)
    await a.store.save(task('t-1', TaskState.TASK_STATE_COMPLETED), context)
    await t.rejects(a.store.save(task('t-1', TaskState.TASK_STATE_WORKING), context), { message: /terminal state \(TASK_STATE_COMPLETED\)/ })
    await a.store.save(task('t-1', TaskState.TASK_STATE_COMPLETED, 'late'), context)
    await there.reach(3)
    t.equal(there.calls, 3, 'the other instance: one wake per completed save, none for the refused one')
    t.equal(here.calls, 3, 'no echo: the NOTIFY back to the saving instance is ignored')

    stopHere()
    stopThere()
    t.equal(a.hub.saveListeners, 0)
    t.equal(b.hub.saveListeners, 0, 'listeners removed: nothing stays behind')
  })

  t.test('loadWhen on another instance returns at the save that settles the task, before the bound', async (t) => {
    const a = await instance()
    const b = await instance()
    await a.store.save(task('t-2', TaskState.TASK_STATE_WORKING), context)
    const started = performance.now()
    const waiting = loadWhen(b.store, 't-2', context, (loaded) => loaded?.metadata?.note === 'done', 10_000)
    setTimeout(() => { a.store.save(task('t-2', TaskState.TASK_STATE_WORKING, 'still'), context).catch(t.error) }, 20)
    setTimeout(() => { a.store.save(task('t-2', TaskState.TASK_STATE_INPUT_REQUIRED, 'done'), context).catch(t.error) }, 60)
    const loaded = await waiting
    t.equal(loaded?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
    t.ok(performance.now() - started < 5000, 'woken by the save, not by the bound')
    t.equal(b.hub.saveListeners, 0)
  })

  t.test('a store without the hub signals its own saves only; a signal that cannot go out is logged, the save stands', async (t) => {
    const b = await instance()
    const local = new PostgresTaskStore(first.db)
    const here = counter()
    const there = counter()
    const stopHere = local.onSaved('t-3', here.listener)
    const stopThere = b.store.onSaved('t-3', there.listener)
    await local.save(task('t-3', TaskState.TASK_STATE_WORKING), context)
    t.equal(here.calls, 1)

    const long = 'x'.repeat(MAX_NOTIFY_PAYLOAD_BYTES)
    const longHere = counter()
    const stopLong = b.store.onSaved(long, longHere.listener)
    await b.store.save(task(long, TaskState.TASK_STATE_WORKING), context)
    t.equal(longHere.calls, 1, 'an id too long for a NOTIFY: woken here')
    t.equal((await b.store.load(long, context))?.status?.state, TaskState.TASK_STATE_WORKING, 'and saved')
    t.strictSame(warnings, ['task event hub: could not signal a task save to the other instances'])

    // A save through the hub's store afterwards does arrive: the first one sent nothing (notifications keep order).
    const a = await instance()
    await a.store.save(task('t-3', TaskState.TASK_STATE_WORKING, 'signalled'), context)
    await there.reach(1)
    t.equal(there.calls, 1, 'the store without the hub notified nobody')
    stopHere()
    stopThere()
    stopLong()
  })

  t.test('recorded push notifications wake the other instances\' outboxes, not this one\'s; a NOTIFY that fails is logged', async (t) => {
    const a = await instance()
    const b = await instance()
    const here = counter()
    const there = counter()
    a.hub.onPushRecorded(here.listener)
    const stopThere = b.hub.onPushRecorded(there.listener)
    a.hub.pushRecorded()
    await there.reach(1)
    b.hub.pushRecorded()
    await here.reach(1)
    await sleep(100)
    t.strictSame([here.calls, there.calls], [1, 1], 'each hears the other once, never its own')
    stopThere()
    a.hub.pushRecorded()
    await sleep(200)
    t.equal(there.calls, 1, 'unsubscribed')
    // A hub whose pool is gone: the NOTIFY fails, is logged, nothing throws.
    const gone = createPostgresDatabase({ connectionString: url, schema, logger })
    const c = { hub: new PostgresTaskEventHub(gone) }
    const before = warnings.length
    await gone.close()
    c.hub.pushRecorded()
    for (let i = 0; i < 100 && warnings.length === before; i++) await sleep(10)
    t.strictSame(warnings.slice(before), ['task event hub: could not tell the other instances of recorded push notifications'])
    await c.hub.close()
    c.hub.pushRecorded()
    t.equal(warnings.length, before + 1, 'a closed hub sends nothing')
  })

  t.test('after the hub closed, saves still wake this instance\'s listeners', async (t) => {
    const a = await instance()
    const here = counter()
    a.store.onSaved('t-4', here.listener)
    await a.hub.close()
    await a.store.save(task('t-4', TaskState.TASK_STATE_WORKING), context)
    t.equal(here.calls, 1)
  })
}
