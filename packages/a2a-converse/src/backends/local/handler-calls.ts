/**
 * The dispatcher's (dispatch.ts) read and push-config methods: the SDK request handler's own methods called with the
 * ProtoJSON ↔ SDK conversions its JSON-RPC transport would do, and the members A2A requires emitted where ProtoJSON
 * would omit a default; and SubscribeToTask's first result read as the handler's resubscribe reads it.
 */
import {
  DeleteTaskPushNotificationConfigRequest, StreamResponse, GetTaskPushNotificationConfigRequest, GetTaskRequest,
  ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Task,
  TaskPushNotificationConfig
} from '@a2a-js/sdk'
import type { DefaultRequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { TERMINAL_TASK_STATES } from '../../stores/task-states.js'
import type { TaskStreamEvent } from './task-event-relay.js'
import { withoutUnsetStatusFilter } from '../../protocol/params.js'
import type { CheckedRequest } from '../../protocol/check-request.js'

/** The methods answered here. */
export const HANDLER_METHODS: ReadonlySet<string> = new Set([
  'GetTask', 'ListTasks', 'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig'
])

/** One of HANDLER_METHODS answered with its JSON-RPC `result`. */
export async function callHandler (handler: DefaultRequestHandler, request: CheckedRequest, context: ServerCallContext): Promise<unknown> {
  const params = request.params
  switch (request.method) {
    case 'GetTask':
      return Task.toJSON(await handler.getTask(GetTaskRequest.fromJSON(params), context))
    case 'ListTasks': {
      const listed = ListTasksResponse.toJSON(await handler.listTasks(ListTasksRequest.fromJSON(withoutUnsetStatusFilter(params)), context)) as {
        tasks?: unknown[], nextPageToken?: string, pageSize?: number, totalSize?: number
      }
      // ListTasksResponse members are all REQUIRED (§3.1.4): emit them despite ProtoJSON default omission.
      return { tasks: listed.tasks ?? [], nextPageToken: listed.nextPageToken ?? '', pageSize: listed.pageSize ?? 0, totalSize: listed.totalSize ?? 0 }
    }
    case 'CreateTaskPushNotificationConfig':
      return TaskPushNotificationConfig.toJSON(
        await handler.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(params), context))
    case 'GetTaskPushNotificationConfig':
      return TaskPushNotificationConfig.toJSON(
        await handler.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON(params), context))
    case 'ListTaskPushNotificationConfigs': {
      const listed = ListTaskPushNotificationConfigsResponse.toJSON(
        await handler.listTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest.fromJSON(params), context)
      ) as { configs?: unknown[], nextPageToken?: string }
      return { configs: listed.configs ?? [], nextPageToken: listed.nextPageToken ?? '' }
    }
    default:
      // DeleteTaskPushNotificationConfig: the only one left of HANDLER_METHODS.
      await handler.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON(params), context)
      return {} // google.protobuf.Empty
  }
}

/** SubscribeToTask's first result, with the SDK's errors for the same cases (DefaultRequestHandler.resubscribe). */
export async function subscribeSnapshot (taskStore: TaskStore, taskId: string, context: ServerCallContext): Promise<TaskStreamEvent> {
  if (taskId.trim() === '') throw new RequestMalformedError('Task ID is required')
  const task = await taskStore.load(taskId, context)
  if (task === undefined) throw new TaskNotFoundError(`Task not found: ${taskId}`)
  const state = task.status?.state
  if (TERMINAL_TASK_STATES.has(state)) {
    throw new UnsupportedOperationError(`Task ${taskId} is in a terminal state (${state as number}) and cannot be subscribed to.`)
  }
  return StreamResponse.toJSON({ payload: { $case: 'task', value: task } }) as TaskStreamEvent
}
