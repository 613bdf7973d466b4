/**
 * CancelTask when the task finishes between the cancel's read and its write (task-cancel.ts): a turn elsewhere — on
 * another instance, or this instance's blocking turn writing its saves at its reply (deferred-task-saves.ts) —
 * completes it first, the store refuses the cancel's save (finished stays finished), and the cancel is answered
 * -32002 TaskNotCancelable, as one that read it finished: never -32004 for a task the client did not try to modify.
 */
import t from 'tap'
import { TaskState, type Task } from '@a2a-js/sdk'
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { BoundedMemoryTaskStore } from '../../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { Client, gateway } from '../../../fixtures/conversation-gateway.js'

/** A store where the task `finishing` completes just before a cancel's save of it reaches the store. */
class FinishedMeanwhile extends BoundedMemoryTaskStore {
  finishing: string | undefined

  override async save (task: Task, context: ServerCallContext): Promise<void> {
    if (task.id === this.finishing && task.status?.state === TaskState.TASK_STATE_CANCELED) {
      this.finishing = undefined
      await super.save({ ...task, status: { ...task.status, state: TaskState.TASK_STATE_COMPLETED } }, context)
    }
    await super.save(task, context)
  }
}

t.test('a cancel whose write finds the task finished meanwhile: -32002, the task as the turn left it', async (t) => {
  const store = new FinishedMeanwhile()
  const app = await gateway(t, { taskStores: { demo: store } })
  const client = new Client(t, app)
  const waiting = await client.task('I would like to book a table')
  t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
  store.finishing = waiting.id
  const canceled = await client.call('CancelTask', { id: waiting.id })
  t.equal(canceled.error?.code, -32002, 'TaskNotCancelable')
  t.match(canceled.error?.message, /cancel/i)
  t.equal((await client.getTask(waiting.id)).status.state, 'TASK_STATE_COMPLETED', 'it stays as the turn finished it')
  const other = await client.task('I would like to book a table')
  t.equal((await client.call('CancelTask', { id: other.id })).result?.status?.state, 'TASK_STATE_CANCELED', 'a cancel that wins is answered the task')
})
