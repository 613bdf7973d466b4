/** ExecutionBuses: one bus per running execution, and what executions publish, by task, for streams that follow it. */
import t from 'tap'
import { Artifact, Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, ServerCallContext } from '@a2a-js/sdk/server'
import { ExecutionBuses } from '../../../packages/a2a-converse/src/backends/local/execution-buses.js'
import type { TaskStreamEvent } from '../../../packages/a2a-converse/src/backends/local/task-event-relay.js'

const task = (id: string) => AgentEvent.task(Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } }))
const status = (taskId: string, state: string) => AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({ taskId, contextId: 'c', status: { state } }))

t.test('the bus manager the SDK\'s handler uses: one bus per task and context until it is cleaned up', async (t) => {
  const buses = new ExecutionBuses()
  const context = new ServerCallContext()
  const bus = buses.createOrGetByTaskId('t', context)
  t.equal(buses.createOrGetByTaskId('t', context), bus, 'a second execution on the task gets the same bus')
  t.equal(buses.getByTaskId('t', context), bus)
  t.equal(buses.getByTaskId('other', context), undefined)
  buses.cleanupByTaskId('t', context)
  t.equal(buses.getByTaskId('t', context), undefined)
  t.not(buses.createOrGetByTaskId('t', context), bus, 'a later execution gets a new bus')
})

t.test('subscribers get every task event of every execution on their task, as the wire writes it', async (t) => {
  const buses = new ExecutionBuses()
  const seen: TaskStreamEvent[] = []
  const other: TaskStreamEvent[] = []
  const unsubscribe = buses.subscribe('t', (event) => { seen.push(event) })
  buses.subscribe('u', (event) => { other.push(event) })
  t.equal(buses.subscribedTasks, 2)

  const first = buses.createOrGetByTaskId('t')
  first.publish(task('t'))
  first.publish(AgentEvent.message(Message.fromJSON({ messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] })))
  first.publish(AgentEvent.artifactUpdate({
    taskId: 't', contextId: 'c', artifact: Artifact.fromJSON({ artifactId: 'a', parts: [{ text: 'x' }] }), append: false, lastChunk: true, metadata: undefined
  }))
  first.publish(status('u', 'TASK_STATE_WORKING'))
  buses.cleanupByTaskId('t')
  const second = buses.createOrGetByTaskId('t')
  second.publish(status('t', 'TASK_STATE_COMPLETED'))

  t.match(seen, [
    { task: { id: 't', status: { state: 'TASK_STATE_SUBMITTED' } } },
    { artifactUpdate: { taskId: 't', artifact: { artifactId: 'a' } } },
    { statusUpdate: { taskId: 't', status: { state: 'TASK_STATE_COMPLETED' } } }
  ], 'Messages are no task event; the next execution is followed too')
  t.equal(seen.length, 3)
  t.match(other, [{ statusUpdate: { taskId: 'u' } }], 'an event belongs to the task it names, whichever bus carried it')

  unsubscribe()
  unsubscribe()
  t.equal(buses.subscribedTasks, 1)
  second.publish(status('t', 'TASK_STATE_WORKING'))
  t.equal(seen.length, 3, 'nothing after unsubscribing')
})

t.test('a late unsubscribe leaves a newer subscription of the task alone', async (t) => {
  const buses = new ExecutionBuses()
  const unsubscribeOld = buses.subscribe('t', () => {})
  unsubscribeOld()
  const seen: unknown[] = []
  buses.subscribe('t', (event) => { seen.push(event) })
  unsubscribeOld()
  buses.createOrGetByTaskId('t').publish(status('t', 'TASK_STATE_WORKING'))
  t.equal(seen.length, 1)
  t.equal(buses.subscribedTasks, 1)
})
