/**
 * A PostgreSQL (or embedded) task store whose failures read as the store's: a connection failure becomes
 * StoreUnavailableError, which the endpoint answers with -32603 and a clear message (never a driver's words). And the
 * FAILED task the SDK makes of an executor that found the conversation store unreachable is not saved: the save
 * rejects with that StoreUnavailableError instead, so the request fails with -32603 (a stream: an error frame) and
 * the task stays as it was — a task waiting for input is not over for good for a passing outage, and the client may
 * send the turn again.
 */
import { TaskState, type Task } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'
import { StoreUnavailableError } from '../errors.js'
import { decorateTaskStore } from '../decorate-task-store.js'
import type { TaskReservations } from '../task-reservations.js'
import type { DefersTaskSaves } from '../deferred-task-saves.js'
import { toStoreError } from './connection-errors.js'

/** How the SDK words an executor's rejection into the FAILED task ("Agent execution error: <message>"). */
const EXECUTOR_STORE_FAILURE = `Agent execution error: ${new StoreUnavailableError().message}`

/** The StoreUnavailableError behind a FAILED task the SDK made of an executor rejection, or undefined. */
export function executorStoreFailure (task: Task): StoreUnavailableError | undefined {
  if (task.status?.state !== TaskState.TASK_STATE_FAILED) return undefined
  const content = task.status.message?.parts[0]?.content
  const text = content?.$case === 'text' ? content.value : ''
  if (!text.startsWith(EXECUTOR_STORE_FAILURE)) return undefined
  // The driver's detail, if any, follows as ": detail"; the new error words it as the original did.
  return new StoreUnavailableError(new Error(text.slice(EXECUTOR_STORE_FAILURE.length + 2)))
}

async function asStoreError<T> (call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw toStoreError(error)
  }
}

export function failuresAsUnavailable<S extends TaskStore & TaskReservations & DefersTaskSaves> (store: S): S {
  return decorateTaskStore(store, {
    reserve: async (taskId, context) => { await asStoreError(async () => { await store.reserve(taskId, context) }) },
    save: async (task, context) => {
      const failure = executorStoreFailure(task)
      if (failure !== undefined) throw failure
      await asStoreError(async () => { await store.save(task, context) })
    },
    load: async (taskId, context) => await asStoreError(async () => await store.load(taskId, context)),
    list: async (params, context) => await asStoreError(async () => await store.list(params, context)),
    writeDeferredSaves: async (context) => { await asStoreError(async () => { await store.writeDeferredSaves(context) }) }
  } satisfies Partial<TaskStore & TaskReservations & DefersTaskSaves>)
}
