/**
 * A blocking turn's saves of its task, written once (deferred-task-saves.ts, PostgresTaskStore.writeDeferredSaves,
 * converse_save_task_steps): while deferred, a save sends nothing and the request's loads answer the last one; then
 * one statement writes them all in order — the same row, the same push outbox rows in the same order, the same
 * refusals (a finished task stays finished; a save refused on the way leaves those before it written) — and signals
 * the save once. A new task's saves are deferred once its slot is reserved (it has no row: its first load answers
 * none); saves of other tasks and requests are written at once; a refused turn's save writes what was deferred first.
 * On the embedded database (as its own writer, `soleWriter`, and not), and on a server with TEST_DATABASE_URL.
 * Queries are counted as test/gateway/turn-round-trips.test.ts counts round trips.
 */
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { Task, TaskState } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { queryCounter } from '../../fixtures/query-counter.js'
import { migratedDatabase } from '../../fixtures/migrated-database.js'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate, PUSH_OUTBOX_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresTaskStore, type PostgresTaskStoreOptions } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { PostgresPushConfigStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js'
import { failuresAsUnavailable } from '../../../packages/a2a-converse/src/stores/postgres/task-store-failures.js'
import { taskUpdates } from '../../../packages/a2a-converse/src/push/task-updates.js'
import { CallerCapError } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import {
  adoptTask, defersTaskSaves, deferredSavesOf, publishesTurnAtOnce, takeDeferredSaves, withDeferredSaves, type DefersTaskSaves
} from '../../../packages/a2a-converse/src/stores/deferred-task-saves.js'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'

const url = process.env.TEST_DATABASE_URL
t.setTimeout(120_000)

const counted = queryCounter(t)

t.test('the deferral: opened around a turn, written after it whatever its outcome, one task per request', async (t) => {
  const written: string[] = []
  const store: DefersTaskSaves = {
    async writeDeferredSaves (context) {
      written.push(String(takeDeferredSaves(context)?.taskId))
    }
  }
  const context = new ServerCallContext()
  t.equal(await withDeferredSaves(store, context, 'step', async () => {
    t.ok(deferredSavesOf(context, 'step'), 'a step\'s saves deferred')
    t.equal(deferredSavesOf(context, 'other'), undefined, 'not another task\'s')
    adoptTask(context, 'new')
    t.equal(deferredSavesOf(context, 'new'), undefined, 'a reservation adopts no task when one is named')
    return 'reply'
  }), 'reply', 'the turn\'s reply')
  await t.rejects(withDeferredSaves(store, context, undefined, async () => {
    t.equal(deferredSavesOf(context, 'new'), undefined, 'a new task: none before its reservation')
    adoptTask(context, 'new')
    const deferred = deferredSavesOf(context, 'new')
    t.equal(deferred?.noRow, true, 'adopted at its reservation: it has no row')
    throw new Error('the turn failed')
  }), /the turn failed/, 'the turn\'s error')
  t.strictSame(written, ['step', 'new'], 'written after each, a failed turn\'s too')
  t.equal(deferredSavesOf(context, 'new'), undefined, 'the deferral ended')
  adoptTask(context, 'later')
  t.equal(deferredSavesOf(context, 'later'), undefined, 'no deferral, nothing adopted')
  t.equal(publishesTurnAtOnce({ publishesTurnAtOnce: true }), true)
  t.equal(publishesTurnAtOnce({}), false, 'an executor says so itself')
  t.equal(defersTaskSaves(new BoundedMemoryTaskStore()), false, 'the memory store writes at once (nothing to save a trip on)')
})

const task = (id: string, state: string, artifacts: unknown[] = [], history: unknown[] = []): Task =>
  Task.fromJSON({ id, contextId: `ctx-${id}`, status: { state, timestamp: '2026-12-07T10:00:00.000Z' }, artifacts, history })
const artifact = (artifactId: string, text: string): unknown => ({ artifactId, parts: [{ text }] })
const message = (messageId: string): unknown => ({ messageId, role: 'ROLE_USER', parts: [{ text: messageId }] })

async function outboxEvents (db: Kysely<any>, taskId: string): Promise<unknown[]> {
  const { rows } = await sql<{ event: string }>`select event from ${sql.table(PUSH_OUTBOX_TABLE)} where task_id = ${taskId} order by seq`.execute(db)
  return rows.map((row) => JSON.parse(row.event))
}

function deferredSaves (t: Test, db: Kysely<any>, options: PostgresTaskStoreOptions): void {
  let recorded = 0
  const store = new PostgresTaskStore(db, { ...options, push: { agentId: 'demo', recorded: () => { recorded++ } } })
  const configs = new PostgresPushConfigStore(db, { agentId: 'demo' })
  const config = { tenant: '', id: 'c1', taskId: '', url: 'https://h.example/a', token: '', authentication: undefined }
  const prefix = `${options.soleWriter === true ? 'sole' : 'shared'}-`

  t.test('a step: deferred saves send nothing, loads answer the last; then one statement, the same rows and outbox rows', async (t) => {
    const id = `${prefix}step`
    const stored = task(id, 'TASK_STATE_INPUT_REQUIRED', [], [message('m1')])
    await store.save(stored, new ServerCallContext())
    await configs.save(id, new ServerCallContext(), config)
    const asked = task(id, 'TASK_STATE_INPUT_REQUIRED', [], [message('m1'), message('m2')])
    const answered = task(id, 'TASK_STATE_INPUT_REQUIRED', [artifact('a1', 'booked')], [message('m1'), message('m2')])
    const done = task(id, 'TASK_STATE_COMPLETED', [artifact('a1', 'booked')], [message('m1'), message('m2')])
    const context = new ServerCallContext()
    let signals = 0
    let elsewhere = 0
    const stop = store.onSaved(id, () => { signals++ })
    t.teardown(stop)
    const turn = await counted(async () => await withDeferredSaves(store, context, id, async () => {
      const inside = await counted(async () => {
        await store.save(asked, context)
        t.strictSame(await store.load(id, context), asked, 'a load answers the last deferred save')
        await store.save(answered, context)
        await store.save(answered, context)
        await store.save(done, context)
        t.strictSame(await store.load(id, context), done)
      })
      t.equal(inside.queries, 0, 'nothing sent while deferred')
      const read = await counted(async () => await store.load(id, new ServerCallContext()))
      t.strictSame(read.result, stored, 'another request reads the row as it was')
      elsewhere = read.queries
      t.equal(signals, 0, 'nobody woken yet')
    }))
    t.equal(turn.queries - elsewhere, 1, 'one statement')
    t.equal(signals, 1, 'one signal, once written')
    t.strictSame(await store.load(id, new ServerCallContext()), done, 'the row as the last save')
    t.strictSame(await outboxEvents(db, id), [...taskUpdates(stored, asked), ...taskUpdates(asked, answered), ...taskUpdates(answered, done)],
      'the outbox rows of each save in order: the artifact, then the status')
    t.strictSame(await configs.load(id, new ServerCallContext()), [], 'the finished task\'s configs dropped')
  })

  t.test('a new task: deferred once its slot is reserved; its first load answers none without a query', async (t) => {
    const id = `${prefix}new`
    const context = new ServerCallContext()
    const submitted = task(id, 'TASK_STATE_SUBMITTED', [], [message('m1')])
    const completed = task(id, 'TASK_STATE_COMPLETED', [artifact('a1', 'done')], [message('m1')])
    let elsewhere = 0
    const turn = await counted(async () => await withDeferredSaves(store, context, undefined, async () => {
      await store.reserve(id, context)
      const inside = await counted(async () => {
        t.equal(await store.load(id, context), undefined, 'no row')
        await store.save(submitted, context)
        await store.save(completed, context)
      })
      t.equal(inside.queries, 0)
      const read = await counted(async () => await store.load(id, new ServerCallContext()))
      t.equal(read.result, undefined, 'not stored before the reply')
      elsewhere = read.queries
    }))
    t.equal(turn.queries - elsewhere, 2, 'the reservation and one statement')
    t.strictSame(await store.load(id, new ServerCallContext()), completed)
  })

  t.test('refusals: a finished task stays finished; a save refused on the way leaves those before it written', async (t) => {
    const id = `${prefix}refused`
    await store.save(task(id, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    const context = new ServerCallContext()
    await t.rejects(withDeferredSaves(store, context, id, async () => {
      await store.save(task(id, 'TASK_STATE_WORKING'), context)
      // Another writer ends the task meanwhile (a CancelTask takes no turn lock).
      await store.save(task(id, 'TASK_STATE_CANCELED'), new ServerCallContext())
    }), { name: 'UnsupportedOperationError' }, '-32004, as the save one by one')
    t.equal((await store.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_CANCELED, 'it stays canceled')
    const later = `${prefix}refused-later`
    await store.save(task(later, 'TASK_STATE_WORKING'), new ServerCallContext())
    await configs.save(later, new ServerCallContext(), config)
    const second = new ServerCallContext()
    const woken = recorded
    await t.rejects(withDeferredSaves(store, second, later, async () => {
      await store.save(task(later, 'TASK_STATE_COMPLETED'), second)
      await store.save(task(later, 'TASK_STATE_WORKING'), second)
    }), { name: 'UnsupportedOperationError' })
    t.equal((await store.load(later, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'the save before the refused one is written')
    t.strictSame(await outboxEvents(db, later), taskUpdates(task(later, 'TASK_STATE_WORKING'), task(later, 'TASK_STATE_COMPLETED')), 'with its notification')
    t.equal(recorded, woken + 1, 'the deliverer woken for it')
  })

  t.test('written at once: another task\'s saves; a refused turn\'s save, after what was deferred', async (t) => {
    const id = `${prefix}other`
    const context = new ServerCallContext()
    await withDeferredSaves(store, context, `${prefix}named`, async () => {
      t.equal((await counted(async () => { await store.save(task(id, 'TASK_STATE_WORKING'), context) })).queries, 1, 'another task: written at once')
    })
    const step = `${prefix}refused-turn`
    await store.save(task(step, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    const refusing = new ServerCallContext()
    await withDeferredSaves(store, refusing, step, async () => {
      await store.save(task(step, 'TASK_STATE_WORKING', [artifact('a1', 'x')]), refusing)
      store.refuse(step, new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', 1, 'capped'))
      const { queries } = await counted(async () => { await store.save(task(step, 'TASK_STATE_FAILED', [artifact('a1', 'x')]), refusing) })
      t.equal(queries, 2, 'what was deferred, then the refused turn\'s task (stored: written)')
      t.equal(deferredSavesOf(refusing, step), undefined, 'the deferral ended')
    })
    t.equal((await store.load(step, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_FAILED)
  })

  t.test('the store-failure wording decorates the write too', async (t) => {
    const decorated = failuresAsUnavailable(store)
    const context = new ServerCallContext()
    await t.rejects(withDeferredSaves(decorated, context, `${prefix}bad`, async () => {
      await decorated.save(Task.fromJSON({ id: `${prefix}bad`, contextId: 'c\0', status: { state: 'TASK_STATE_WORKING' } }), context)
    }), 'the database refuses the row: the write rejects')
    const nothing = await counted(async () => {
      await withDeferredSaves(decorated, context, `${prefix}nothing`, async () => {})
      await withDeferredSaves(decorated, context, undefined, async () => {})
      await store.writeDeferredSaves(new ServerCallContext())
    })
    t.equal(nothing.queries, 0, 'nothing deferred, no task adopted, no deferral: nothing written')
  })
}

t.test('on the embedded database', async (t) => {
  const database = await openEmbeddedDatabase({ schema: 'converse_deferred', logger: { warn () {} } })
  t.teardown(async () => await database.close())
  await migrate(database.db, { schema: 'converse_deferred' })
  t.test('as its own writer', async (t) => { deferredSaves(t, database.db, { soleWriter: true }) })
  t.test('as one of several', async (t) => { deferredSaves(t, database.db, {}) })
})

// The same cases on a server need one; without it they are skipped, the embedded database's runs above covering the
// module and the SQL (the same functions on both: a fresh machine has no server, README, docs/testing.md).
const serverSkip = 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)'
t.test('on a PostgreSQL server', { skip: url === undefined ? serverSkip : false }, async (t) => {
  const { database } = await migratedDatabase(t, url as string)
  deferredSaves(t, database.db, {})
})
