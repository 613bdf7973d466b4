/**
 * PostgresTaskStore: the SDK's task table and row format with a conditional save. A finished task stays finished
 * (the same rule and error as the memory store), and rows stay the SDK's: what one store writes, the other reads,
 * lists and pages the same. Runs when TEST_DATABASE_URL is set.
 */
import t from 'tap'
import { migratedDatabase } from '../../fixtures/migrated-database.js'
import { TaskState, type ListTasksRequest, type Task } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import { finishedStaysFinished } from '../../fixtures/finished-stays-finished.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL task store', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { PostgresTaskStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js')

  const { database } = await migratedDatabase(t, url)
  const context = new ServerCallContext()

  t.test('a finished task stays finished', async (t) => {
    await finishedStaysFinished(t, new PostgresTaskStore(database.db), 'pg')
  })

  t.test('rows are the SDK\'s: what one writes the other reads, lists and pages the same', async (t) => {
    const ours = new PostgresTaskStore(database.db, { ownerResolver: () => 'agent:x' })
    const sdk = new DatabaseTaskStore(database.db, { ownerResolver: () => 'agent:x' })
    const full = (id: string, state: TaskState, second: number): Task => ({
      id,
      contextId: `session-${id}-0123456789abcdef0123456789abcdef`,
      status: { state, message: undefined, timestamp: `2026-12-01T10:00:${String(second).padStart(2, '0')}.000Z` },
      artifacts: [{ artifactId: `a-${id}`, name: 'n', description: 'd', parts: [], metadata: { k: 1 }, extensions: [] }],
      history: [],
      metadata: { origin: id }
    })
    for (let n = 0; n < 6; n++) await (n % 2 === 0 ? ours : sdk).save(full(`row-${n}`, n % 3 === 0 ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_WORKING, n), context)
    await ours.save({ ...full('row-nostatus', TaskState.TASK_STATE_WORKING, 0), status: undefined }, context)
    await ours.save(full('row-nostatus', TaskState.TASK_STATE_WORKING, 9), context)
    t.equal((await sdk.load('row-nostatus', context))?.status?.state, TaskState.TASK_STATE_WORKING, 'a task saved without a status moves on')
    await ours.save({ ...full('row-notime', TaskState.TASK_STATE_WORKING, 0), status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: 'not a date' } }, context)
    await ours.save({ ...full('row-notime2', TaskState.TASK_STATE_WORKING, 0), status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined } }, context)
    for (const id of ['row-0', 'row-1', 'row-4', 'row-nostatus', 'row-notime', 'missing']) {
      t.strictSame(await ours.load(id, context), await sdk.load(id, context), `load ${id}`)
    }
    const request = (extra: Partial<ListTasksRequest> = {}): ListTasksRequest =>
      ({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true, ...extra }) as ListTasksRequest
    for (const listed of [request(), request({ pageSize: 2 }), request({ status: TaskState.TASK_STATE_COMPLETED })]) {
      t.strictSame(await ours.list(listed, context), await sdk.list(listed, context))
    }
    const first = await ours.list(request({ pageSize: 2 }), context)
    t.strictSame(await ours.list(request({ pageSize: 2, pageToken: first.nextPageToken }), context),
      await sdk.list(request({ pageSize: 2, pageToken: first.nextPageToken }), context), 'the same pages')
  })
}
