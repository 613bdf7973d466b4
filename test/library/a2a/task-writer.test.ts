/** The task writer: stored through the SDK's ResultManager, then published; only task updates are written. */
import t from 'tap'
import { Artifact, Task, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { createTaskWriter } from '../../../packages/a2a-converse/src/events/task-writer.js'
import { MemoryTaskEventHub } from '../../../packages/a2a-converse/src/events/task-event-hub.js'

t.test('status and artifact updates are stored and published; messages and tasks are not written', async (t) => {
  const store = new InMemoryTaskStore()
  const context = new ServerCallContext()
  await store.save(Task.fromJSON({ id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } }), context)
  const hub = new MemoryTaskEventHub()
  const seen: unknown[] = []
  hub.subscribe('t1', (event) => { seen.push(event) })
  const writer = createTaskWriter(store, hub)
  const artifact = { taskId: 't1', contextId: 'c1', artifact: Artifact.fromJSON({ artifactId: 'a', parts: [{ text: 'x' }] }), append: false, lastChunk: true, metadata: undefined }
  const done = TaskStatusUpdateEvent.fromJSON({ taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } })
  await writer.writeEvents([
    AgentEvent.message({ messageId: 'm', contextId: 'c1', taskId: 't1', role: 2, parts: [], metadata: undefined, extensions: [], referenceTaskIds: [] }),
    AgentEvent.artifactUpdate(artifact),
    AgentEvent.statusUpdate(done)
  ], context)
  const stored = await store.load('t1', context)
  t.equal(stored?.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(stored?.artifacts[0].artifactId, 'a')
  t.match(seen, [{ artifactUpdate: { taskId: 't1', artifact: { artifactId: 'a' } } }, { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } }])
  t.equal(seen.length, 2, 'the message is not a task update')

  await createTaskWriter(store, undefined).write(TaskStatusUpdateEvent.fromJSON({ taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } }))
  t.equal((await store.load('t1', context))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'a task already over stays over; no hub: nothing published')
  t.equal(seen.length, 2)
})
