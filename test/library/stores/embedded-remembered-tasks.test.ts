/**
 * The embedded task store as its table's one writer (PostgresTaskStore's `soleWriter`, remembered-tasks.ts): a load
 * answers from the tasks it saved or read, without a query, exactly what the row holds; a copy each time; never
 * another caller's or tenant's; bounded; forgotten when a save is refused or fails, or overlaps another. Queries are
 * counted as test/gateway/turn-round-trips.test.ts counts round trips: each query `pg`'s Client sends.
 */
import t from 'tap'
import { TaskState, type Task } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { queryCounter } from '../../fixtures/query-counter.js'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresTaskStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { RememberedTasks } from '../../../packages/a2a-converse/src/stores/postgres/remembered-tasks.js'
import { AuthenticatedCaller } from '../../../packages/a2a-converse/src/auth/sdk-user.js'
import { CALLER_KEY_STATE } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import { finishedStaysFinished } from '../../fixtures/finished-stays-finished.js'
import { taskReservationCases } from '../../fixtures/task-reservations.js'

const database = await openEmbeddedDatabase({ schema: 'converse_remembered', logger: { warn () {} } })
t.teardown(async () => await database.close())
await migrate(database.db, { schema: 'converse_remembered' })

// Every query pg sends, counted (one round trip each).
const counted = queryCounter(t)

function task (id: string, state: TaskState, metadata: Record<string, unknown> = {}): Task {
  return {
    id,
    contextId: `ctx-${id}`,
    status: { state, message: undefined, timestamp: '2026-12-01T10:00:00.000Z' },
    artifacts: [],
    history: [{ messageId: `m-${id}`, contextId: `ctx-${id}`, taskId: id, role: 1, parts: [{ content: { $case: 'text', value: 'hello' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] }],
    metadata
  }
}

const context = new ServerCallContext()
/** The SDK's own read of the row, to compare with. */
const rows = new DatabaseTaskStore(database.db)

t.test('a load after a save answers the task saved, as the row holds it, without a query', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  const saved = task('kept-1', TaskState.TASK_STATE_WORKING, { step: 1 })
  t.equal((await counted(async () => { await store.save(saved, context) })).queries, 1, 'the save: one statement')
  const { result, queries } = await counted(async () => await store.load('kept-1', context))
  t.equal(queries, 0, 'no query')
  t.strictSame(result, await rows.load('kept-1', context), 'what the row holds')
  t.equal(result?.metadata?.step, 1)
  saved.metadata = { step: 'changed after the save' }
  t.equal((await store.load('kept-1', context))?.metadata?.step, 1, 'the task saved changed afterwards: not what is kept')
})

t.test('a save of the task as kept writes nothing; a change, a task not kept, a refused turn\'s task are written', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  const saved = task('same-1', TaskState.TASK_STATE_INPUT_REQUIRED, { step: 1 })
  await store.save(saved, context)
  // What the SDK saves when a turn opens with the task's event: the stored task, merged again.
  const merged = await store.load('same-1', context) as Task
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 0, 'the same columns: no statement')
  t.strictSame(await rows.load('same-1', context), await store.load('same-1', context), 'the row is what is kept')
  merged.status = { ...merged.status, timestamp: '2026-12-01T10:00:01.000Z' } as Task['status']
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'a changed status: written')
  t.equal((await rows.load('same-1', context))?.status?.timestamp, '2026-12-01T10:00:01.000Z')
  merged.history = [...merged.history, merged.history[0]]
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'a longer history: written')
  t.equal((await rows.load('same-1', context))?.history.length, 2)
  merged.metadata = { step: 2 }
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'other metadata: written')
  merged.artifacts = [{ artifactId: 'a-1', name: 'a', description: '', parts: [], metadata: undefined, extensions: [] }]
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'an artifact: written')
  merged.contextId = 'ctx-moved'
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'another context: written')
  t.strictSame(await rows.load('same-1', context), await store.load('same-1', context), 'the row is what is kept')
  const other = new PostgresTaskStore(database.db, { soleWriter: new RememberedTasks() })
  t.equal((await counted(async () => { await other.save(merged, context) })).queries, 1, 'not kept (another memory): written')
  const unshared = new PostgresTaskStore(database.db)
  t.equal((await counted(async () => { await unshared.save(merged, context) })).queries, 1, 'a store that keeps nothing: written')
  // A turn refused past a cap: its task's save is refused by the statement, never skipped.
  const refusal = new Error('refused')
  store.refuse('same-1', refusal as never)
  t.equal((await counted(async () => { await store.save(merged, context) })).queries, 1, 'a refused turn\'s save: sent')
})

t.test('each load is a copy: a caller changing what it loaded changes nothing kept', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  await store.save(task('copy-1', TaskState.TASK_STATE_WORKING, { step: 1 }), context)
  const first = await store.load('copy-1', context) as Task
  first.metadata = { step: 2 }
  first.history.push(first.history[0])
  const second = await store.load('copy-1', context)
  t.not(second, first)
  t.equal(second?.metadata?.step, 1)
  t.equal(second?.history.length, 1)
})

t.test('a task read once is kept; a task with no row too; a reservation of a new task tells it has none', async (t) => {
  await new PostgresTaskStore(database.db).save(task('read-1', TaskState.TASK_STATE_WORKING), context)
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  t.equal((await counted(async () => await store.load('read-1', context))).queries, 1, 'not kept yet: read')
  const again = await counted(async () => await store.load('read-1', context))
  t.equal(again.queries, 0, 'then kept')
  t.strictSame(again.result, await rows.load('read-1', context))
  t.equal((await counted(async () => await store.load('none-1', context))).queries, 1)
  const none = await counted(async () => await store.load('none-1', context))
  t.same(none, { result: undefined, queries: 0 }, 'no row: kept as such')
  const walkIn = new ServerCallContext({ state: new Map([[CALLER_KEY_STATE, 'address:remembered']]) })
  t.equal((await counted(async () => { await store.reserve('new-1', walkIn) })).queries, 1)
  t.same(await counted(async () => await store.load('new-1', walkIn)), { result: undefined, queries: 0 }, 'reserved: no row, and known')
  await store.save(task('new-1', TaskState.TASK_STATE_SUBMITTED), walkIn)
  t.equal((await counted(async () => await store.load('new-1', walkIn))).result?.status?.state, TaskState.TASK_STATE_SUBMITTED)
  await store.reserve('read-1', context)
  t.equal((await counted(async () => await store.load('read-1', context))).queries, 0, 'a reservation of a stored task (held) changes nothing kept')
})

t.test('another tenant or another caller never gets the task', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  const alice = new ServerCallContext({ user: new AuthenticatedCaller('alice') })
  const bob = new ServerCallContext({ user: new AuthenticatedCaller('bob') })
  const tenant = new ServerCallContext({ tenant: 'other', user: new AuthenticatedCaller('alice') })
  await store.save(task('scoped-1', TaskState.TASK_STATE_WORKING), alice)
  t.ok(await store.load('scoped-1', alice))
  for (const [name, other] of [['another caller', bob], ['another tenant', tenant], ['no caller', context]] as const) {
    const { result, queries } = await counted(async () => await store.load('scoped-1', other))
    t.same({ result, queries }, { result: undefined, queries: 1 }, `${name}: read, and nothing there`)
  }
  await store.save(task('scoped-1', TaskState.TASK_STATE_COMPLETED), tenant)
  t.equal((await store.load('scoped-1', tenant))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'the other tenant\'s own task of that id')
  t.equal((await store.load('scoped-1', alice))?.status?.state, TaskState.TASK_STATE_WORKING, 'alice\'s unchanged')
})

t.test('the bound: past it, the least recently used task is read again', async (t) => {
  const remembered = new RememberedTasks(2)
  const store = new PostgresTaskStore(database.db, { soleWriter: remembered })
  for (const id of ['bound-1', 'bound-2']) await store.save(task(id, TaskState.TASK_STATE_WORKING), context)
  t.equal((await counted(async () => await store.load('bound-1', context))).queries, 0, 'bound-1 used: bound-2 is the oldest now')
  await store.save(task('bound-3', TaskState.TASK_STATE_WORKING), context)
  t.equal(remembered.size, 2)
  t.equal((await counted(async () => await store.load('bound-1', context))).queries, 0)
  t.equal((await counted(async () => await store.load('bound-3', context))).queries, 0)
  const oldest = await counted(async () => await store.load('bound-2', context))
  t.equal(oldest.queries, 1, 'the oldest, forgotten: read from the database')
  t.equal(oldest.result?.id, 'bound-2')
})

t.test('one memory shared by the stores of a database: a save through one is what another loads', async (t) => {
  const remembered = new RememberedTasks()
  const first = new PostgresTaskStore(database.db, { soleWriter: remembered })
  const second = new PostgresTaskStore(database.db, { soleWriter: remembered })
  await first.save(task('shared-1', TaskState.TASK_STATE_WORKING), context)
  t.equal((await second.load('shared-1', context))?.status?.state, TaskState.TASK_STATE_WORKING)
  await second.save(task('shared-1', TaskState.TASK_STATE_INPUT_REQUIRED), context)
  const { result, queries } = await counted(async () => await first.load('shared-1', context))
  t.same([result?.status?.state, queries], [TaskState.TASK_STATE_INPUT_REQUIRED, 0])
})

t.test('a save not written forgets the task: refused (finished), failed, refused by a reservation', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  await store.save(task('forgot-1', TaskState.TASK_STATE_COMPLETED), context)
  await t.rejects(store.save(task('forgot-1', TaskState.TASK_STATE_WORKING), context), { name: 'UnsupportedOperationError' })
  const finished = await counted(async () => await store.load('forgot-1', context))
  t.same([finished.result?.status?.state, finished.queries], [TaskState.TASK_STATE_COMPLETED, 1], 'read again: finished as stored')

  await store.save(task('forgot-2', TaskState.TASK_STATE_WORKING, { step: 1 }), context)
  // PostgreSQL text holds no NUL: the statement fails, nothing is written.
  await t.rejects(store.save({ ...task('forgot-2', TaskState.TASK_STATE_WORKING, { step: 2 }), contextId: 'ctx-\u0000' }, context))
  const failed = await counted(async () => await store.load('forgot-2', context))
  t.same([failed.result?.metadata?.step, failed.queries], [1, 1], 'read again: the row as it was')

  const walkIn = new ServerCallContext({ state: new Map([[CALLER_KEY_STATE, 'address:forgot']]) })
  const capped = new PostgresTaskStore(database.db, { soleWriter: true, maxOpenTasksPerCaller: 1 })
  await capped.reserve('forgot-3', walkIn)
  await t.rejects(capped.reserve('forgot-4', walkIn), { name: 'CallerCapError' })
  await t.rejects(capped.save(task('forgot-4', TaskState.TASK_STATE_FAILED), walkIn), { name: 'CallerCapError' }, 'the SDK\'s FAILED task of the refused turn')
  t.same(await counted(async () => await capped.load('forgot-4', walkIn)), { result: undefined, queries: 1 }, 'read again: no row')
  await capped.save(task('forgot-3', TaskState.TASK_STATE_WORKING), walkIn)
  await t.rejects(capped.save(task('forgot-5', TaskState.TASK_STATE_WORKING), walkIn), { name: 'CallerCapError' }, 'past the cap, unreserved')
  t.same(await counted(async () => await capped.load('forgot-5', walkIn)), { result: undefined, queries: 1 })
})

t.test('overlapping saves and reads of a task keep nothing they cannot vouch for', async (t) => {
  const store = new PostgresTaskStore(database.db, { soleWriter: true })
  await new PostgresTaskStore(database.db).save(task('overlap-1', TaskState.TASK_STATE_WORKING, { step: 1 }), context)
  // A read under way while a save is made: what it read is not kept (the save's task is).
  const [read] = await Promise.all([store.load('overlap-1', context), store.save(task('overlap-1', TaskState.TASK_STATE_WORKING, { step: 2 }), context)])
  t.equal(read?.metadata?.step, 1, 'read before the save')
  const after = await counted(async () => await store.load('overlap-1', context))
  t.same([after.result?.metadata?.step, after.queries], [2, 0], 'the save\'s task kept')
  // Two saves at once: which ended last is the row's, not told by their order here: forgotten, read again.
  await Promise.all([3, 4].map(async (step) => { await store.save(task('overlap-1', TaskState.TASK_STATE_WORKING, { step }), context) }))
  const both = await counted(async () => await store.load('overlap-1', context))
  t.same([both.result?.metadata?.step, both.queries], [4, 1], 'read again')
  t.strictSame(both.result, await rows.load('overlap-1', context))
})

t.test('the task stores\' rules hold as they are', async (t) => {
  await taskReservationCases(t, new PostgresTaskStore(database.db, { soleWriter: true, maxOpenTasksPerCaller: 2 }), 'remembered')
  await finishedStaysFinished(t, new PostgresTaskStore(database.db, { soleWriter: true }), 'remembered')
})
