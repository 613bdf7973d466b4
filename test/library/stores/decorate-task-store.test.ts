import t from 'tap'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { Role, TaskState, type Task } from '@a2a-js/sdk'
import { decorateTaskStore } from '../../../packages/a2a-converse/src/stores/decorate-task-store.js'
import { executorStoreFailure, failuresAsUnavailable } from '../../../packages/a2a-converse/src/stores/postgres/task-store-failures.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'
import { isConverseError, ERROR_CODES } from '../../../packages/a2a-converse/src/core/errors.js'

const context = new ServerCallContext()
const task = (id: string, state = TaskState.TASK_STATE_WORKING, text?: string): Task => ({
  id,
  contextId: 'c-1',
  history: [],
  artifacts: [],
  metadata: undefined,
  status: {
    state,
    message: text === undefined ? undefined : { messageId: 'm', contextId: 'c-1', taskId: id, role: Role.ROLE_AGENT, parts: text === '' ? [] : [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    timestamp: '2026-01-01T00:00:00.000Z'
  }
})

/** A store with a private field and a capability of its own (reservations). */
class ReservingStore extends InMemoryTaskStore {
  readonly #reserved = new Set<string>()
  failWith: unknown
  async reserve (taskId: string, _context?: ServerCallContext): Promise<void> {
    if (this.failWith !== undefined) throw this.failWith
    this.#reserved.add(taskId)
  }

  refuse (_taskId: string, _error: unknown): void {}

  async writeDeferredSaves (_context: ServerCallContext): Promise<void> {
    if (this.failWith !== undefined) throw this.failWith
  }

  reserved (taskId: string): boolean { return this.#reserved.has(taskId) }
  override async save (saved: Task, ctx: ServerCallContext): Promise<void> {
    if (this.failWith !== undefined) throw this.failWith
    await super.save(saved, ctx)
  }
}

t.test('decorateTaskStore: the decoration replaces or adds members; the rest are the store\'s, on the store', async (t) => {
  const store = new ReservingStore()
  const saved: string[] = []
  const decorated = decorateTaskStore(store, {
    save: async (next: Task, ctx: ServerCallContext) => { saved.push(next.id); await store.save(next, ctx) },
    onSaved: () => () => {}
  })
  await decorated.save(task('t-1'), context)
  t.same(saved, ['t-1'], 'the decoration ran')
  t.equal((await decorated.load('t-1', context))?.id, 't-1', 'load is the store\'s')
  await decorated.reserve('t-2')
  t.ok(store.reserved('t-2'), 'a method of the store runs on the store (its private field)')
  t.ok(decorated.reserved('t-2'))
  t.ok('onSaved' in decorated, 'an added member is visible to `in`')
  t.ok('reserve' in decorated)
  t.notOk('nothing' in decorated)
})

t.test('failuresAsUnavailable: connection failures become StoreUnavailableError; an executor\'s store failure is not saved', async (t) => {
  const store = new ReservingStore()
  const guarded = failuresAsUnavailable(store)
  await guarded.save(task('t-1'), context)
  t.equal((await guarded.load('t-1', context))?.id, 't-1')
  t.equal((await guarded.list({} as never, context)).tasks.length, 1)
  await guarded.reserve('t-3', context)
  t.ok(store.reserved('t-3'))
  await guarded.writeDeferredSaves(context)

  const failure = `Agent execution error: ${new StoreUnavailableError().message}: connect ECONNREFUSED`
  await t.rejects(guarded.save(task('t-2', TaskState.TASK_STATE_FAILED, failure), context), StoreUnavailableError)
  t.equal(await store.load('t-2', context), undefined, 'the FAILED task was not saved')
  const found = executorStoreFailure(task('t-2', TaskState.TASK_STATE_FAILED, failure))
  t.match(found?.message, /connect ECONNREFUSED/, 'the driver\'s detail is kept')
  for (const other of [task('x', TaskState.TASK_STATE_FAILED), task('x', TaskState.TASK_STATE_FAILED, ''), task('x', TaskState.TASK_STATE_FAILED, 'Agent execution error: boom'), task('x', TaskState.TASK_STATE_COMPLETED, failure)]) {
    t.equal(executorStoreFailure(other), undefined, 'any other task is saved as it is')
  }

  store.failWith = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  for (const call of [() => guarded.save(task('t-4'), context), () => guarded.reserve('t-5', context), () => guarded.writeDeferredSaves(context)]) {
    const error = await call().catch((caught: unknown) => caught)
    t.ok(isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE), 'a connection failure reads as the store\'s')
  }
  store.failWith = new Error('a bug')
  await t.rejects(guarded.save(task('t-6'), context), { message: 'a bug' }, 'anything else is passed on')
})
