/**
 * A server's task store (PostgresTaskStore without `soleWriter`) and the request that holds a task's turn lock on
 * every instance (held-task-turn.ts): that request's re-reads of the task are answered from what it last saved or read,
 * without a query; a load after the release, in another request or of another task reads the row; a refused save
 * forgets; a writer that takes no turn lock (a cancel on another instance) is seen by a read, and a turn that read
 * before it is refused (-32004): the task stays as that writer ended it. (With every load a read, that turn was
 * answered the canceled task instead: the SDK drops a status update to a finished task.) Queries are counted as
 * test/gateway/turn-round-trips.test.ts counts round trips. Runs when TEST_DATABASE_URL is set.
 */
import t from 'tap'
import { migratedDatabase } from '../../fixtures/migrated-database.js'
import { AgentEvent, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { queryCounter } from '../../fixtures/query-counter.js'
import { Message, Task, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { holdTaskTurn } from '../../../packages/a2a-converse/src/stores/held-task-turn.js'
import { loadWhen } from '../../../packages/a2a-converse/src/stores/task-save-signals.js'
import { A2ADispatcher } from '../../../packages/a2a-converse/src/backends/local/dispatch.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('a server\'s task store and the request holding a task\'s turn lock', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { PostgresTaskStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js')
  const { PostgresTaskTurnLock } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.js')

  const { database, schema } = await migratedDatabase(t, url)

  // Every query pg sends, counted (one round trip each).
  const counted = queryCounter(t)

  function task (id: string, state: TaskState, step: number): Task {
    return {
      id,
      contextId: `ctx-${id}`,
      status: { state, message: undefined, timestamp: '2026-12-01T10:00:00.000Z' },
      artifacts: [],
      history: [{ messageId: `m-${id}`, contextId: `ctx-${id}`, taskId: id, role: 1, parts: [{ content: { $case: 'text', value: 'hello' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] }],
      metadata: { step }
    }
  }

  /** The SDK's own read of the row, to compare with. */
  const rows = new DatabaseTaskStore(database.db)
  const store = new PostgresTaskStore(database.db)

  t.test('the request holding the task: a load after its read or save answers without a query, what the row holds, a copy each time', async (t) => {
    await store.save(task('held-1', TaskState.TASK_STATE_WORKING, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const unhold = holdTaskTurn(context, 'held-1')
    t.equal((await counted(async () => await store.load('held-1', context))).queries, 1, 'the first load reads the row')
    const again = await counted(async () => await store.load('held-1', context))
    t.equal(again.queries, 0, 'the second: no query')
    t.strictSame(again.result, await rows.load('held-1', context), 'what the row holds')
    again.result!.metadata = { step: 'changed by the caller' }
    t.equal((await store.load('held-1', context))?.metadata?.step, 1, 'a copy each time')
    t.equal((await counted(async () => { await store.save(task('held-1', TaskState.TASK_STATE_WORKING, 2), context) })).queries, 1, 'the save: one statement')
    const saved = await counted(async () => await store.load('held-1', context))
    t.equal(saved.queries, 0, 'a load after its save: no query')
    t.strictSame(saved.result, await rows.load('held-1', context), 'what the row holds')
    t.equal(saved.result?.metadata?.step, 2)
    t.equal((await counted(async () => { await store.save(task('held-1', TaskState.TASK_STATE_WORKING, 2), context) })).queries, 0,
      'a save of the task as kept (a turn\'s opening task event): nothing to write')
    t.equal((await counted(async () => await store.load('held-2', context))).queries, 1, 'another task of the request: read')
    t.equal((await counted(async () => await store.load('held-2', context))).queries, 1, 'and read again')
    t.equal((await counted(async () => await store.load('held-1', new ServerCallContext()))).queries, 1, 'another request: read')
    unhold()
    t.equal((await counted(async () => await store.load('held-1', context))).queries, 1, 'after the release: read')
    t.equal((await counted(async () => await store.load('held-1', context))).queries, 1, 'and read again')
  })

  t.test('a refused save forgets: the next load reads the row, which another writer ended', async (t) => {
    await store.save(task('cancel-1', TaskState.TASK_STATE_WORKING, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const unhold = holdTaskTurn(context, 'cancel-1')
    t.teardown(unhold)
    await store.load('cancel-1', context)
    // A cancel (no turn lock) from another request.
    await store.save(task('cancel-1', TaskState.TASK_STATE_CANCELED, 1), new ServerCallContext())
    const kept = await counted(async () => await store.load('cancel-1', context))
    t.equal(kept.queries, 0, 'the turn\'s re-read: what it read, without a query')
    t.equal(kept.result?.status?.state, TaskState.TASK_STATE_WORKING)
    t.equal((await counted(async () => { await store.save(task('cancel-1', TaskState.TASK_STATE_WORKING, 1), context) })).queries, 0,
      'a save of the task as the turn read it writes nothing (the row stays CANCELED)')
    await t.rejects(store.save(task('cancel-1', TaskState.TASK_STATE_WORKING, 2), context), { name: 'UnsupportedOperationError', message: /TASK_STATE_CANCELED/ },
      'the turn that read before the cancel cannot write over it (-32004)')
    const { result, queries } = await counted(async () => await store.load('cancel-1', context))
    t.equal(queries, 1, 'read again')
    t.equal(result?.status?.state, TaskState.TASK_STATE_CANCELED, 'the cancel seen')
    t.equal(result?.metadata?.step, 1)
  })

  t.test('a wait for another writer\'s save in the request holding the task reads the row each time', async (t) => {
    await store.save(task('wait-1', TaskState.TASK_STATE_WORKING, 1), new ServerCallContext())
    const context = new ServerCallContext()
    const unhold = holdTaskTurn(context, 'wait-1')
    t.teardown(unhold)
    await store.load('wait-1', context)
    const waited = loadWhen(store, 'wait-1', context, (found) => found?.metadata?.step === 2, 5000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await store.save(task('wait-1', TaskState.TASK_STATE_WORKING, 2), new ServerCallContext())
    const started = Date.now()
    t.equal((await waited)?.metadata?.step, 2, 'the other writer\'s save seen')
    t.ok(Date.now() - started < 4000, 'on its signal, not at the bound')
  })

  t.test('two instances: a turn runs on one, a cancel lands from the other meanwhile; the task stays CANCELED', async (t) => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => { open = resolve })
    let running!: () => void
    const started = new Promise<void>((resolve) => { running = resolve })
    const status = (taskId: string, contextId: string, state: string): TaskStatusUpdateEvent =>
      TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status: { state, timestamp: new Date().toISOString() } })
    const executor: AgentExecutor = {
      async execute (request, bus) {
        const current = request.task ?? Task.fromJSON({ id: request.taskId, contextId: request.contextId, status: { state: 'TASK_STATE_SUBMITTED' }, history: [Message.toJSON(request.userMessage)] })
        bus.publish(AgentEvent.task(current))
        if (request.task === undefined) {
          bus.publish(AgentEvent.statusUpdate(status(request.taskId, request.contextId, 'TASK_STATE_INPUT_REQUIRED')))
          return
        }
        bus.publish(AgentEvent.statusUpdate(status(request.taskId, request.contextId, 'TASK_STATE_WORKING')))
        running()
        await gate
        bus.publish(AgentEvent.statusUpdate(status(request.taskId, request.contextId, 'TASK_STATE_COMPLETED')))
        bus.finished()
      },
      async cancelTask () {}
    }
    const card = { name: 'Orders', description: 'two instances' }
    const instance = (): A2ADispatcher => new A2ADispatcher({
      card, executor, taskStore: new PostgresTaskStore(database.db), turnLock: new PostgresTaskTurnLock(database, { scope: schema })
    })
    const a = instance()
    const b = instance()
    const send = (text: string, taskId?: string) => ({ id: 1, method: 'SendMessage' as const, params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }], ...(taskId === undefined ? {} : { taskId }) } } })
    const first = await a.call(send('start'), new ServerCallContext()) as { result: { task: { id: string } } }
    const taskId = first.result.task.id
    const turn = a.call(send('answer', taskId), new ServerCallContext())
    await started
    t.match(await b.call({ id: 2, method: 'CancelTask', params: { id: taskId } }, new ServerCallContext()), { result: { status: { state: 'TASK_STATE_CANCELED' } } }, 'canceled from the other instance, without the turn lock')
    open()
    // The SDK logs the refused save of its event loop.
    const errors = t.capture(console, 'error')
    const answered = await turn as { result?: { task: { status: { state: string } } }, error?: { code: number } }
    t.match(answered, { error: { code: -32004 } }, 'the turn read the task before the cancel: its later save refused')
    t.match(errors(), [{ args: [/Event processing loop failed/, { name: 'UnsupportedOperationError' }] }])
    t.match(await b.call({ id: 3, method: 'GetTask', params: { id: taskId } }, new ServerCallContext()), { result: { status: { state: 'TASK_STATE_CANCELED' } } }, 'the task stays CANCELED')
  })
}
