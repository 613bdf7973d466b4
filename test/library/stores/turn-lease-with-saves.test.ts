/**
 * A turn's lease row deleted with its last write (TurnLease, task-turn-lock.ts): a request holding a task's turn lock
 * on every instance (PostgresTaskTurnLock, held-task-turn.ts) has its deferred saves written in one statement that
 * deletes the lease row too — one round trip and one commit for both — and the release then sends nothing; another
 * turn takes the lock at once. A statement that deleted nothing (the lease taken over meanwhile, or the lock on another
 * database) leaves the release to delete it as before, and never touches another holder's row. A request that saved
 * nothing, or whose saves are written early (a refused turn's save: not the turn's last write), releases as before. On the embedded database and, with
 * TEST_DATABASE_URL, on a server. Queries are counted as test/gateway/turn-round-trips.test.ts counts round trips.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { Task, TaskState } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { queryCounter } from '../../fixtures/query-counter.js'
import { onBothDatabases } from '../../fixtures/both-databases.js'
import { TASK_TURN_LOCKS_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresTaskStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { PostgresTaskTurnLock } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import { acquireTaskTurn, heldTaskTurn } from '../../../packages/a2a-converse/src/stores/held-task-turn.js'
import { withDeferredSaves } from '../../../packages/a2a-converse/src/stores/deferred-task-saves.js'
import { CallerCapError } from '../../../packages/a2a-converse/src/stores/caller-key.js'

t.setTimeout(120_000)

const counted = queryCounter(t)

const task = (id: string, state: string): Task =>
  Task.fromJSON({ id, contextId: `ctx-${id}`, status: { state, timestamp: '2026-12-07T10:00:00.000Z' }, history: [{ messageId: `${id}-m`, role: 'ROLE_USER', parts: [{ text: 'hi' }] }] })

function leaseWithSaves (t: Test, database: Pick<PostgresDatabase, 'db' | 'pool' | 'logger'>, prefix: string): void {
  const lock = new PostgresTaskTurnLock(database, { scope: 'demo' })
  const store = new PostgresTaskStore(database.db)
  const leases = async (): Promise<string[]> => {
    const { rows } = await sql<{ holder: string }>`select holder from ${sql.table(TASK_TURN_LOCKS_TABLE)} where lock_key like ${`%${prefix}%`}`.execute(database.db)
    return rows.map((row) => row.holder)
  }
  /** A task waiting for input, and a request holding its turn lock. */
  const held = async (name: string): Promise<{ id: string, context: ServerCallContext, release: () => Promise<void> }> => {
    const id = `${prefix}${name}`
    await store.save(task(id, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    const context = new ServerCallContext()
    return { id, context, release: await acquireTaskTurn(lock, context, id) }
  }

  t.test('a step\'s saves delete the lease row in their statement; the release sends nothing; the next turn takes it at once', async (t) => {
    const { id, context, release } = await held('step')
    t.equal((await leases()).length, 1, 'held')
    const turn = await counted(async () => await withDeferredSaves(store, context, id, async () => {
      await store.save(task(id, 'TASK_STATE_WORKING'), context)
      await store.save(task(id, 'TASK_STATE_COMPLETED'), context)
    }))
    t.equal(turn.queries, 1, 'the saves and the lease in one statement')
    t.strictSame(await leases(), [], 'the lease row deleted with them')
    t.equal((await store.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'the saves written')
    t.equal((await counted(async () => { await release() })).queries, 0, 'the release sends nothing')
    const next = await counted(async () => await acquireTaskTurn(lock, new ServerCallContext(), id))
    t.equal(next.queries, 1, 'the next turn takes the lock at once')
    await next.result()
  })

  t.test('a save refused in the statement (the task finished elsewhere): the lease row goes all the same', async (t) => {
    const { id, context, release } = await held('refused')
    await store.save(task(id, 'TASK_STATE_CANCELED'), new ServerCallContext())
    await t.rejects(withDeferredSaves(store, context, id, async () => {
      await store.save(task(id, 'TASK_STATE_COMPLETED'), context)
    }), { name: 'UnsupportedOperationError' }, 'refused: the task is finished (-32004 at the endpoint)')
    t.strictSame(await leases(), [], 'the turn is over: its lease deleted')
    t.equal((await counted(async () => { await release() })).queries, 0)
  })

  t.test('taken over meanwhile: the statement deletes nothing, the release deletes as before, the other holder\'s row stays', async (t) => {
    const { id, context, release } = await held('taken')
    const lease = heldTaskTurn(context, id)?.lease
    t.ok(lease, 'the mark carries the lease')
    await sql`update ${sql.table(TASK_TURN_LOCKS_TABLE)} set holder = 'another instance' where lock_key = ${lease?.key}`.execute(database.db)
    const turn = await counted(async () => await withDeferredSaves(store, context, id, async () => {
      await store.save(task(id, 'TASK_STATE_COMPLETED'), context)
    }))
    t.equal(turn.queries, 1)
    t.strictSame(await leases(), ['another instance'], 'not deleted: not this holder\'s')
    t.equal((await counted(async () => { await release() })).queries, 1, 'the release deletes as before (nothing: not its row)')
    t.strictSame(await leases(), ['another instance'])
    await sql`delete from ${sql.table(TASK_TURN_LOCKS_TABLE)} where lock_key = ${lease?.key}`.execute(database.db)
  })

  t.test('written early for a refused turn\'s save: not the turn\'s last write, the lease row stays for the release', async (t) => {
    const { id, context, release } = await held('early')
    await withDeferredSaves(store, context, id, async () => {
      await store.save(task(id, 'TASK_STATE_WORKING'), context)
      store.refuse(id, new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', 1, 'capped'))
      await store.save(task(id, 'TASK_STATE_FAILED'), context)
      t.equal((await leases()).length, 1, 'still held while the turn runs')
    })
    t.equal((await leases()).length, 1, 'nothing deferred at the end: still held')
    t.equal((await counted(async () => { await release() })).queries, 1, 'released by its own statement')
    t.strictSame(await leases(), [])
  })

  t.test('nothing saved: the release deletes the row', async (t) => {
    const { id, context, release } = await held('nothing')
    t.equal((await counted(async () => await withDeferredSaves(store, context, id, async () => {}))).queries, 0)
    t.equal((await leases()).length, 1, 'still held')
    t.equal((await counted(async () => { await release() })).queries, 1, 'released by its own statement')
    t.strictSame(await leases(), [])
  })
}

onBothDatabases('converse_lease', leaseWithSaves)
