/**
 * BoundedMemoryTaskStore: the SDK's InMemoryTaskStore with bounds. Same answers as the SDK's store while nothing
 * is evicted (load, scopes, list with every filter and its pages); at most maxTasks tasks and maxTaskBytes, the
 * earliest finished evicted first and open work never; a new task refused past its caller's open-task cap or when
 * only open work is left; finished tasks forgotten after their time.
 */
import t from 'tap'
import { TaskState, type ListTasksRequest, type Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import {
  BoundedMemoryTaskStore, DEFAULT_FINISHED_TASK_TTL_MS, DEFAULT_MAX_OPEN_TASKS_PER_CALLER, DEFAULT_MAX_TASK_BYTES, DEFAULT_MAX_TASKS, taskSize
} from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { AuthenticatedCaller } from '../../../packages/a2a-converse/src/auth/sdk-user.js'
import { CALLER_KEY_STATE, CallerCapError } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import { RefusedTasks, TASK_RESERVATION_TTL_MS } from '../../../packages/a2a-converse/src/stores/task-reservations.js'
import { taskReservationCases } from '../../fixtures/task-reservations.js'
import { finishedStaysFinished } from '../../fixtures/finished-stays-finished.js'

const context = new ServerCallContext()

/** A walk-in's context at `address` (the caller key the dispatcher puts in the state). */
function walkIn (address: string): ServerCallContext {
  return new ServerCallContext({ state: new Map([[CALLER_KEY_STATE, `address:${address}`]]) })
}

function task (id: string, state: TaskState, options: { contextId?: string, timestamp?: string, metadata?: Record<string, unknown> } = {}): Task {
  return {
    id,
    contextId: options.contextId ?? `ctx-${id}`,
    status: { state, message: undefined, timestamp: options.timestamp ?? '2026-12-01T10:00:00.000Z' },
    artifacts: [{ artifactId: `a-${id}`, name: 'n', description: '', parts: [], metadata: undefined, extensions: [] }],
    history: [],
    metadata: options.metadata
  }
}

function listRequest (extra: Partial<ListTasksRequest> = {}): ListTasksRequest {
  return { tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, ...extra } as ListTasksRequest
}

t.test('options: defaults and named errors', async (t) => {
  const store = new BoundedMemoryTaskStore()
  t.equal(store.maxTasks, DEFAULT_MAX_TASKS)
  t.equal(store.finishedTaskTtlMs, DEFAULT_FINISHED_TASK_TTL_MS)
  t.equal(DEFAULT_MAX_TASKS, 10_000)
  t.equal(DEFAULT_FINISHED_TASK_TTL_MS, 3_600_000)
  t.strictSame([store.maxTaskBytes, store.maxOpenTasksPerCaller], [DEFAULT_MAX_TASK_BYTES, DEFAULT_MAX_OPEN_TASKS_PER_CALLER])
  t.strictSame([DEFAULT_MAX_TASK_BYTES, DEFAULT_MAX_OPEN_TASKS_PER_CALLER], [268_435_456, 1000])
  t.throws(() => new BoundedMemoryTaskStore({ maxTaskBytes: 0.5 }), { code: 'A2A_CONVERSE_INVALID_OPTION', message: /maxTaskBytes/ })
  t.throws(() => new BoundedMemoryTaskStore({ maxOpenTasksPerCaller: -1 }), { code: 'A2A_CONVERSE_INVALID_OPTION', message: /maxOpenTasksPerCaller/ })
  t.throws(() => new BoundedMemoryTaskStore({ maxTasks: 0 }), { code: 'A2A_CONVERSE_INVALID_OPTION', message: /maxTasks/ })
  t.throws(() => new BoundedMemoryTaskStore({ finishedTaskTtlMs: 1.5 }), { message: /finishedTaskTtlMs/ })
})

t.test('the same answers as the SDK\'s InMemoryTaskStore: load, scopes, copies, list with filters and pages', async (t) => {
  const ours = new BoundedMemoryTaskStore()
  const sdk = new InMemoryTaskStore()
  const tenant = new ServerCallContext({ tenant: 'other' })
  const states = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_WORKING]
  for (let index = 0; index < 23; index++) {
    const saved = task(`t-${index % 17}`, states[index % 3], {
      contextId: `ctx-${index % 4}`,
      timestamp: `2026-12-01T10:00:${String(index % 7).padStart(2, '0')}.000Z`
    })
    for (const store of [ours, sdk]) await store.save(saved, index % 5 === 0 ? tenant : context)
  }
  for (const id of ['t-0', 't-5', 't-16', 'missing']) {
    for (const scope of [context, tenant]) t.strictSame(await ours.load(id, scope), await sdk.load(id, scope), `load ${id}`)
  }
  const requests = [
    listRequest(),
    listRequest({ pageSize: 4 }),
    listRequest({ contextId: 'ctx-1' }),
    listRequest({ status: TaskState.TASK_STATE_COMPLETED, includeArtifacts: true }),
    listRequest({ statusTimestampAfter: '2026-12-01T10:00:03.000Z' })
  ]
  for (const request of requests) {
    for (const scope of [context, tenant]) {
      let [mine, theirs] = [await ours.list(request, scope), await sdk.list(request, scope)]
      t.strictSame(mine, theirs, `list ${JSON.stringify(request)}`)
      while (theirs.nextPageToken !== '') {
        const next = { ...request, pageToken: theirs.nextPageToken }
        ;[mine, theirs] = [await ours.list(next, scope), await sdk.list(next, scope)]
        t.strictSame(mine, theirs, 'the next page')
      }
    }
  }
  const unknownCursor = listRequest({ pageToken: Buffer.from('2020|nope').toString('base64') })
  t.strictSame(await ours.list(unknownCursor, context), await sdk.list(unknownCursor, context), 'a cursor that matches nothing')
  await t.rejects(ours.list(listRequest({ pageToken: 'bm9waXBl' }), context), { name: 'RequestMalformedError' }, 'a token without "|"')
  await t.rejects(sdk.list(listRequest({ pageToken: 'bm9waXBl' }), context), { name: 'RequestMalformedError' })

  const loaded = await ours.load('t-1', context) as Task
  loaded.metadata = { changed: true }
  t.equal((await ours.load('t-1', context))?.metadata, undefined, 'load gives a copy')
})

t.test('full: the earliest finished goes first, open work never; with only open work left a new task is refused', async (t) => {
  const store = new BoundedMemoryTaskStore({ maxTasks: 3 })
  await store.save(task('open-1', TaskState.TASK_STATE_INPUT_REQUIRED), context)
  await store.save(task('done-1', TaskState.TASK_STATE_COMPLETED), context)
  await store.save(task('done-2', TaskState.TASK_STATE_CANCELED), context)
  await store.save(task('open-2', TaskState.TASK_STATE_WORKING), context)
  t.equal(store.size, 3)
  t.equal(await store.load('done-1', context), undefined, 'the earliest finished went first')
  t.ok(await store.load('open-1', context), 'the open task stayed')
  await store.save(task('open-3', TaskState.TASK_STATE_INPUT_REQUIRED), context)
  t.equal(await store.load('done-2', context), undefined, 'then the next finished one')
  await t.rejects(store.save(task('open-4', TaskState.TASK_STATE_INPUT_REQUIRED), context),
    { name: 'CallerCapError', code: 'A2A_CONVERSE_CAP_REACHED', cap: 'MEMORY_MAX_TASKS', limit: 3 }, 'only open work left: a new task is refused')
  await t.rejects(store.save(task('done-3', TaskState.TASK_STATE_COMPLETED), walkIn('10.0.0.9')), { name: 'CallerCapError', cap: 'MEMORY_MAX_TASKS' }, 'whoever sends it')
  t.equal(await store.load('open-4', context), undefined, 'nothing written')
  t.strictSame((await store.list(listRequest(), context)).tasks.map((entry) => entry.id).sort(), ['open-1', 'open-2', 'open-3'])
  await store.save(task('open-1', TaskState.TASK_STATE_INPUT_REQUIRED, { metadata: { more: true } }), context)
  t.equal(store.size, 3, 'a held task is saved again: it takes no new room')
  await store.save(task('open-2', TaskState.TASK_STATE_COMPLETED), context)
  await store.save(task('open-5', TaskState.TASK_STATE_SUBMITTED), context)
  t.equal(await store.load('open-2', context), undefined, 'it finished, so it went for the new one')
  t.equal(store.openTasksOf('address:unknown'), 3)

  const one = new BoundedMemoryTaskStore({ maxTasks: 1 })
  await one.save(task('a', TaskState.TASK_STATE_COMPLETED), context)
  await one.save(task('b', TaskState.TASK_STATE_COMPLETED), context)
  t.strictSame([await one.load('a', context), (await one.load('b', context))?.id], [undefined, 'b'], 'the task just saved is never the one evicted')
})

t.test('a finished task is forgotten finishedTaskTtlMs after its last save; open tasks are not', async (t) => {
  let now = 1_000_000
  const store = new BoundedMemoryTaskStore({ finishedTaskTtlMs: 60_000, now: () => now })
  await store.save(task('done', TaskState.TASK_STATE_COMPLETED), context)
  await store.save(task('open', TaskState.TASK_STATE_INPUT_REQUIRED), context)
  now += 30_000
  await store.save(task('late', TaskState.TASK_STATE_FAILED), context)
  now += 30_000
  t.equal(await store.load('done', context), undefined, '60 s after it finished')
  t.ok(await store.load('late', context), 'finished 30 s ago')
  t.ok(await store.load('open', context))
  now += 3_600_000
  t.strictSame((await store.list(listRequest(), context)).tasks.map((entry) => entry.id), ['open'], 'open tasks have no age limit')
  t.equal(store.size, 1)
})

t.test('fresh contexts level off: 5,000 turns with 900 KB-style metadata keep at most maxTasks', async (t) => {
  const store = new BoundedMemoryTaskStore({ maxTasks: 100 })
  const metadata = { blob: 'x'.repeat(10_000) }
  for (let turn = 0; turn < 5000; turn++) {
    // Each task opens and finishes (a routine's turns), some wait a while: at most 10 open at once.
    await store.save(task(`turn-${turn}`, TaskState.TASK_STATE_INPUT_REQUIRED, { metadata }), context)
    if (turn >= 10) await store.save(task(`turn-${turn - 10}`, TaskState.TASK_STATE_COMPLETED, { metadata }), context)
    if (store.size > 100) t.fail(`over the cap after turn ${turn}`)
  }
  t.equal(store.size, 100)
  t.equal((await store.list(listRequest(), context)).totalSize, 100)
})

t.test('bytes: the sum of the tasks\' ProtoJSON lengths stays under maxTaskBytes; finished tasks go first', async (t) => {
  const metadata = { blob: 'x'.repeat(10_000) }
  const size = taskSize(task('turn-0000', TaskState.TASK_STATE_COMPLETED, { metadata }))
  t.ok(size > 10_000, 'a task counts its ProtoJSON')
  const store = new BoundedMemoryTaskStore({ maxTaskBytes: 10 * size })
  for (let turn = 0; turn < 1000; turn++) {
    const id = `turn-${String(turn).padStart(4, '0')}`
    await store.save(task(id, TaskState.TASK_STATE_WORKING, { metadata }), context)
    await store.save(task(id, TaskState.TASK_STATE_COMPLETED, { metadata }), context)
    if (store.bytes > 10 * size) t.fail(`over the byte bound after turn ${turn}`)
  }
  t.equal(store.size, 10, 'ten tasks of this size fit')
  t.equal(store.bytes, 10 * size)
  t.equal(await store.load('turn-0000', context), undefined, 'the earliest finished went')
  t.ok(await store.load('turn-0999', context))

  const open = new BoundedMemoryTaskStore({ maxTaskBytes: 2 * size })
  await open.save(task('open-a', TaskState.TASK_STATE_WORKING, { metadata }), context)
  await open.save(task('open-b', TaskState.TASK_STATE_WORKING, { metadata }), walkIn('10.0.0.1'))
  await t.rejects(open.save(task('open-c', TaskState.TASK_STATE_WORKING, { metadata }), walkIn('10.0.0.2')),
    { name: 'CallerCapError', cap: 'MEMORY_MAX_TASK_BYTES', limit: 2 * size }, 'open work is never evicted: the new task is refused')
  await open.save(task('open-a', TaskState.TASK_STATE_WORKING, { metadata: { blob: 'y'.repeat(20_000) } }), context)
  t.ok(open.bytes > 2 * size, 'a held open task that grows is saved all the same (a turn is never cut off)')
  await open.save(task('open-a', TaskState.TASK_STATE_COMPLETED, { metadata: { blob: 'y'.repeat(20_000) } }), context)
  await open.save(task('open-c', TaskState.TASK_STATE_WORKING, { metadata }), walkIn('10.0.0.2'))
  t.equal(await open.load('open-a', context), undefined, 'once it finished it makes room')
  t.ok(await open.load('open-b', walkIn('10.0.0.1')))

  const grow = new BoundedMemoryTaskStore({ maxTaskBytes: 2 * size })
  await grow.save(task('done', TaskState.TASK_STATE_COMPLETED, { metadata }), context)
  await grow.save(task('busy', TaskState.TASK_STATE_WORKING, { metadata }), context)
  await grow.save(task('busy', TaskState.TASK_STATE_WORKING, { metadata: { blob: 'y'.repeat(20_000) } }), context)
  t.equal(await grow.load('done', context), undefined, 'an open task that grows pushes finished ones out')
  t.ok(await grow.load('busy', context))
})

t.test('per caller: at most maxOpenTasksPerCaller open tasks; finishing one makes room; the first saver owns the task', async (t) => {
  const store = new BoundedMemoryTaskStore({ maxOpenTasksPerCaller: 2 })
  const alice = new ServerCallContext({ user: new AuthenticatedCaller('alice') })
  await store.save(task('a-1', TaskState.TASK_STATE_INPUT_REQUIRED), alice)
  await store.save(task('a-2', TaskState.TASK_STATE_SUBMITTED), alice)
  t.equal(store.openTasksOf('caller:alice'), 2, 'an authenticated caller without a stated key: caller:<id>')
  await t.rejects(store.save(task('a-3', TaskState.TASK_STATE_SUBMITTED), alice),
    { name: 'CallerCapError', cap: 'MAX_OPEN_TASKS_PER_CALLER', limit: 2, message: /MAX_OPEN_TASKS_PER_CALLER/ })
  await store.save(task('a-4', TaskState.TASK_STATE_COMPLETED), alice)
  t.ok(await store.load('a-4', alice), 'a task that starts finished opens nothing')
  await store.save(task('w-1', TaskState.TASK_STATE_WORKING), walkIn('10.0.0.1'))
  await store.save(task('w-2', TaskState.TASK_STATE_WORKING), walkIn('10.0.0.1'))
  await store.save(task('w-3', TaskState.TASK_STATE_WORKING), walkIn('10.0.0.2'))
  await t.rejects(store.save(task('w-4', TaskState.TASK_STATE_WORKING), walkIn('10.0.0.1')), { name: 'CallerCapError', cap: 'MAX_OPEN_TASKS_PER_CALLER' })
  await store.save(task('w-1', TaskState.TASK_STATE_INPUT_REQUIRED), walkIn('10.0.0.2'))
  t.strictSame([store.openTasksOf('address:10.0.0.1'), store.openTasksOf('address:10.0.0.2')], [2, 1], 'a task stays its first saver\'s')
  await store.save(task('a-1', TaskState.TASK_STATE_COMPLETED), alice)
  await store.save(task('a-3', TaskState.TASK_STATE_SUBMITTED), alice)
  t.equal(store.openTasksOf('caller:alice'), 2, 'finishing one made room')
  await store.save(task('w-1', TaskState.TASK_STATE_CANCELED), walkIn('10.0.0.1'))
  await store.save(task('w-2', TaskState.TASK_STATE_CANCELED), walkIn('10.0.0.1'))
  t.equal(store.openTasksOf('address:10.0.0.1'), 0)
})

t.test('edges as the SDK: an empty scope, a task without status; a scope whose last task went is empty again', async (t) => {
  const ours = new BoundedMemoryTaskStore({ finishedTaskTtlMs: 1000, now: () => now })
  const sdk = new InMemoryTaskStore()
  let now = 0
  const nobody = new ServerCallContext({ tenant: 'nobody' })
  t.strictSame(await ours.list(listRequest(), nobody), await sdk.list(listRequest(), nobody), 'nothing in that scope')
  const bare = { ...task('bare', TaskState.TASK_STATE_WORKING), status: undefined }
  for (const store of [ours, sdk]) {
    await store.save(bare, context)
    await store.save(task('dated', TaskState.TASK_STATE_WORKING, { timestamp: '2026-12-01T09:00:00.000Z' }), context)
  }
  t.strictSame(await ours.list(listRequest(), context), await sdk.list(listRequest(), context), 'a task without status sorts last')
  const alone = new ServerCallContext({ tenant: 'alone' })
  await ours.save(task('only', TaskState.TASK_STATE_COMPLETED), alone)
  now += 1000
  t.strictSame((await ours.list(listRequest(), alone)).tasks, [], 'expired: the scope is empty')
})

t.test('a finished task stays finished (the same rule as the PostgreSQL store)', async (t) => {
  await finishedStaysFinished(t, new BoundedMemoryTaskStore(), 'memory')
})

t.test('reservations (MAX_OPEN_TASKS_PER_CALLER before a turn is recorded)', async (t) => {
  await taskReservationCases(t, new BoundedMemoryTaskStore({ maxOpenTasksPerCaller: 2 }), 'memory')
})

t.test('a reservation holds its slot for TASK_RESERVATION_TTL_MS at most', async (t) => {
  let now = 0
  const store = new BoundedMemoryTaskStore({ maxOpenTasksPerCaller: 2, now: () => now })
  const alice = walkIn('10.0.0.9')
  await store.reserve('left-1', alice)
  await store.reserve('left-2', alice)
  await t.rejects(store.reserve('next', alice), { name: 'CallerCapError' })
  now += TASK_RESERVATION_TTL_MS
  await store.reserve('next', alice)
  t.pass('expired reservations (their turns never saved a task) no longer count')
  now += TASK_RESERVATION_TTL_MS
  await store.save(task('next', TaskState.TASK_STATE_SUBMITTED), alice)
  t.equal(store.openTasksOf('address:10.0.0.9'), 1, 'an expired reservation is counted again at the save, and fits')
})

t.test('RefusedTasks keeps the most recent refusals', async (t) => {
  const refused = new RefusedTasks(2)
  const error = new CallerCapError('MAX_OPEN_TASKS_PER_CALLER', 1, 'no')
  for (const id of ['a', 'b', 'a', 'c']) refused.add(id, error)
  t.strictSame(['a', 'b', 'c'].map((id) => refused.take(id) !== undefined), [true, false, true])
  t.equal(refused.take('a'), undefined, 'taken once')
})
