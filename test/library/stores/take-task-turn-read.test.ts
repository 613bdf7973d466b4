/**
 * A turn's lease taken and its task read in one statement (PostgresTaskTurnLock `taskOwner`,
 * take-task-turn-function.ts): the take hands the task's row, read once the lease is taken, to the request holding the
 * turn (TurnLease `task`, held-task-turn.ts), and the task store answers the SDK's first load of the turn from it —
 * one round trip for both. A store whose owner of the task differs reads the row itself; a lock without `taskOwner`
 * takes the lease alone. A take that waited for the holder before it reads what that holder's last commit saved (the
 * read is a statement of its own, after the take's wait: on a server). On the embedded database and, with
 * TEST_DATABASE_URL, on a server. Queries are counted as test/gateway/turn-round-trips.test.ts counts round trips.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { Task } from '@a2a-js/sdk'
import { resolveUserScope, ServerCallContext } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { queryCounter } from '../../fixtures/query-counter.js'
import { onBothDatabases, SERVER_SKIP } from '../../fixtures/both-databases.js'
import { migratedDatabase } from '../../fixtures/migrated-database.js'
import { TASK_TURN_LOCKS_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresTaskStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { PostgresTaskTurnLock } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import { acquireTaskTurn, heldTaskTurn } from '../../../packages/a2a-converse/src/stores/held-task-turn.js'
import { taskTurnKey } from '../../../packages/a2a-converse/src/stores/task-turn-lock.js'

t.setTimeout(120_000)

const counted = queryCounter(t)

const task = (id: string, step: number): Task =>
  Task.fromJSON({ id, contextId: `ctx-${id}`, status: { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: '2026-12-07T10:00:00.000Z' }, history: [{ messageId: `${id}-m`, role: 'ROLE_USER', parts: [{ text: 'hi' }] }], metadata: { step } })

/** The task store's owner of a request's task: the SDK's user scope, as PostgresTaskStore resolves it by default. */
const sameOwner = (key: { owner: string }): string => key.owner

function takeWithRead (t: Test, database: Pick<PostgresDatabase, 'db' | 'pool' | 'logger'>, prefix: string): void {
  const lock = new PostgresTaskTurnLock(database, { scope: 'demo', taskOwner: sameOwner })
  const store = new PostgresTaskStore(database.db)
  const rows = new DatabaseTaskStore(database.db)

  t.test('the take reads the task: the request\'s first load answers from it with no query, what the row holds', async (t) => {
    const id = `${prefix}read`
    await store.save(task(id, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const acquired = await counted(async () => await acquireTaskTurn(lock, context, id))
    t.equal(acquired.queries, 1, 'the lease and the read: one round trip')
    t.equal(heldTaskTurn(context, id)?.lease?.task?.row?.contextId, `ctx-${id}`, 'the row rides with the lease')
    const first = await counted(async () => await store.load(id, context))
    t.equal(first.queries, 0, 'the first load: no query')
    t.strictSame(first.result, await rows.load(id, context), 'what the SDK\'s read of the row answers')
    t.equal((await counted(async () => await store.load(id, new ServerCallContext()))).queries, 1, 'another request reads the row')
    await acquired.result()
    t.equal((await counted(async () => await store.load(id, context))).queries, 1, 'after the release: read')
  })

  t.test('no row: the first load answers none, with no query', async (t) => {
    const id = `${prefix}none`
    const context = new ServerCallContext()
    const release = await acquireTaskTurn(lock, context, id)
    t.teardown(release)
    t.equal(heldTaskTurn(context, id)?.lease?.task?.row, null)
    const first = await counted(async () => await store.load(id, context))
    t.equal(first.queries, 0)
    t.equal(first.result, undefined)
  })

  t.test('a store whose owner of the task is another reads the row itself', async (t) => {
    const id = `${prefix}other-owner`
    const other = new PostgresTaskStore(database.db, { ownerResolver: (context) => `elsewhere:${resolveUserScope(context)}` })
    await other.save(task(id, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const release = await acquireTaskTurn(lock, context, id)
    t.teardown(release)
    t.equal(heldTaskTurn(context, id)?.lease?.task?.row, null, 'the lock read its own owner\'s row: none')
    const first = await counted(async () => await other.load(id, context))
    t.equal(first.queries, 1, 'not its row: read')
    t.equal(first.result?.metadata?.step, 1)
  })

  t.test('a lock without taskOwner takes the lease alone; the load reads', async (t) => {
    const id = `${prefix}alone`
    await store.save(task(id, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const release = await acquireTaskTurn(new PostgresTaskTurnLock(database, { scope: 'demo' }), context, id)
    t.teardown(release)
    t.equal(heldTaskTurn(context, id)?.lease?.task, undefined)
    t.equal((await counted(async () => await store.load(id, context))).queries, 1)
  })

  t.test('a lease held elsewhere: nothing is read until the take gets it, then the task as its holder left it', async (t) => {
    const id = `${prefix}waited`
    await store.save(task(id, 1), new ServerCallContext())
    // Another instance's lock on the same table (another process's KeyedLock): its holder's turn saves step 2.
    const elsewhere = new PostgresTaskTurnLock(database, { scope: 'demo', taskOwner: sameOwner })
    const holder = await elsewhere.acquire(taskTurnKey(new ServerCallContext(), id))
    const context = new ServerCallContext()
    const waiting = acquireTaskTurn(new PostgresTaskTurnLock(database, { scope: 'demo', taskOwner: sameOwner, retryInitialDelayMs: 1, retryMaxDelayMs: 5 }), context, id)
    await new Promise((resolve) => setTimeout(resolve, 30))
    await store.save(task(id, 2), new ServerCallContext())
    await holder()
    const release = await waiting
    t.teardown(release)
    const first = await counted(async () => await store.load(id, context))
    t.equal(first.queries, 0)
    t.equal(first.result?.metadata?.step, 2, 'read after the holder\'s save')
  })

  t.test('taskOwner must be a function', async (t) => {
    t.throws(() => new PostgresTaskTurnLock(database, { taskOwner: 'demo' as never }), { name: 'InvalidOptionError' })
  })
}

onBothDatabases('a2a_test_take_task_turn_read', takeWithRead)

// A take that waits inside its statement, on a server. Skipped without one (SERVER_SKIP, both-databases.ts): it needs
// two sessions at once — a holder's open transaction and the waiting take — and the embedded database runs one
// statement at a time; the embedded half above runs the same function. CI runs it with TEST_DATABASE_URL.
t.test('a take that waited for the holder\'s commit reads what that commit saved', { skip: process.env.TEST_DATABASE_URL === undefined ? SERVER_SKIP : false }, async (t) => {
  const { database } = await migratedDatabase(t, process.env.TEST_DATABASE_URL as string, { warn () {} })
  const lock = new PostgresTaskTurnLock(database, { scope: 'demo', taskOwner: sameOwner })
  const store = new PostgresTaskStore(database.db)
  const id = 'waited-in-statement'
  await store.save(task(id, 1), new ServerCallContext())
  // The holder's last statement, as the task store writes it (the save and the lease's delete, one commit), held open.
  const holding = await database.pool.connect()
  t.teardown(() => { holding.release() })
  const first = new ServerCallContext()
  t.teardown(await acquireTaskTurn(new PostgresTaskTurnLock(database, { scope: 'demo' }), first, id))
  const key = heldTaskTurn(first, id)?.lease?.key
  await holding.query('begin')
  await holding.query('update tasks set metadata = $1 where id = $2', [JSON.stringify({ step: 2 }), id])
  await holding.query(`delete from ${TASK_TURN_LOCKS_TABLE} where lock_key = $1`, [key])
  const context = new ServerCallContext()
  let taken = false
  const waiting = acquireTaskTurn(lock, context, id).then((release) => { taken = true; return release })
  // Sessions whose statement waits for the holding one (not another test's: the suites run side by side).
  const { rows: [{ pid }] } = await holding.query<{ pid: number }>('select pg_backend_pid() as pid')
  const waits = async (): Promise<number> => (await holding.query(`select count(*)::int as n from pg_stat_activity
    where $1 = any(pg_blocking_pids(pid)) and query like '%converse_take_task_turn%'`, [pid])).rows[0].n
  for (let tries = 0; tries < 100 && await waits() === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(await waits(), 1, 'the take waits in its statement for the holder\'s row')
  t.notOk(taken)
  await holding.query('commit')
  t.teardown(await waiting)
  t.equal((await store.load(id, context))?.metadata?.step, 2, 'the read saw the commit it waited for')
  const { rows } = await sql<{ holder: string }>`select holder from ${sql.table(TASK_TURN_LOCKS_TABLE)} where lock_key = ${key}`.execute(database.db)
  t.equal(rows.length, 1, 'the lease is the new holder\'s')
})
