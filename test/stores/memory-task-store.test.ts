/**
 * BoundedMemoryTaskStore: the SDK's InMemoryTaskStore with a bound. Same answers as the SDK's store while nothing
 * is evicted (load, scopes, list with every filter and its pages); at most maxTasks tasks, the earliest finished
 * evicted first, then the least recently saved open one; finished tasks forgotten after their time.
 */
import t from 'tap'
import { TaskState, type ListTasksRequest, type Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { BoundedMemoryTaskStore, DEFAULT_FINISHED_TASK_TTL_MS, DEFAULT_MAX_TASKS } from '../../src/stores/memory-task-store.js'
import { finishedStaysFinished } from '../fixtures/finished-stays-finished.js'

const context = new ServerCallContext()

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

t.test('full: the earliest finished goes first, then the least recently saved open task; evicted means unknown', async (t) => {
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
  await store.save(task('open-4', TaskState.TASK_STATE_INPUT_REQUIRED), context)
  t.equal(await store.load('open-1', context), undefined, 'no finished task left: the least recently saved open one')
  t.strictSame((await store.list(listRequest(), context)).tasks.map((entry) => entry.id).sort(), ['open-2', 'open-3', 'open-4'])
  await store.save(task('open-2', TaskState.TASK_STATE_COMPLETED), context)
  t.equal(store.size, 3, 'saving a held task again takes no room')
  await store.save(task('open-5', TaskState.TASK_STATE_SUBMITTED), context)
  t.equal(await store.load('open-2', context), undefined, 'it finished, so it went first')

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
    await store.save(task(`turn-${turn}`, turn % 2 === 0 ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_COMPLETED, { metadata }), context)
    if (store.size > 100) t.fail(`over the cap after turn ${turn}`)
  }
  t.equal(store.size, 100)
  t.equal((await store.list(listRequest(), context)).totalSize, 100)
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
