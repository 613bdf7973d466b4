/**
 * The JSON-RPC error for anything thrown while the dispatcher (dispatch.ts) handles a request: the SDK's errors
 * mapped exactly (sdk-errors.ts), the library's own (a cap, a reused messageId, a refused push URL, a busy task, the
 * state store unreachable) as A2A says, anything else logged and answered with a bare -32603.
 */
import { MessageIdReusedError } from '../../stores/message-replays.js'
import { CallerCapError } from '../../stores/caller-key.js'
import { TaskBusyError } from '../../stores/task-turn-lock.js'
import { ConversationMovedError } from '../../stores/errors.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { capReached, internalError, invalidParams, type JsonRpcError } from '../../protocol/errors.js'
import { fromSdkError } from './sdk-errors.js'
import { ConverseError, ERROR_CODES, isConverseError } from '../../core/errors.js'

/** pino-compatible. */
export interface ErrorLogger {
  error (object: object, message: string): void
}

/** A push config the URL policy refuses: -32602 naming the field. */
export class PushConfigRefusedError extends ConverseError {
  readonly field: string
  constructor (field: string, description: string) {
    super(ERROR_CODES.PUSH_CONFIG_REFUSED, description)
    this.field = field
  }
}

/** The -32603 message when the state store (tasks, conversations) cannot be reached. */
export const STORE_UNAVAILABLE_MESSAGE = 'the state store is unreachable; try again later'

/** The JSON-RPC error for anything thrown while handling `request`; unknown errors are logged. */
export function dispatchError (error: unknown, request: CheckedRequest, log?: ErrorLogger): JsonRpcError {
  const mapped = fromSdkError(error, { taskId: taskIdOf(request) })
  if (mapped !== undefined) return mapped
  if (error instanceof CallerCapError) return capReached(error.cap, error.limit, error.message)
  if (error instanceof MessageIdReusedError) return invalidParams([{ field: 'message.messageId', description: error.message }])
  if (error instanceof PushConfigRefusedError) return invalidParams([{ field: error.field, description: error.message }])
  // Waited its bound for the task's earlier turns: nothing ran, nothing was written; not a failure of ours.
  if (error instanceof TaskBusyError) return internalError(error.message)
  // The turn's conversation was removed while it ran: nothing was stored; the caller may send it again.
  if (error instanceof ConversationMovedError) return internalError(error.message)
  log?.error({ err: error, method: request.method }, 'A2A request handler failed')
  // The state store is unreachable (StoreUnavailableError): say so, but keep the driver's detail (hosts, ports)
  // in the log above, not in the reply.
  if (isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE)) return internalError(STORE_UNAVAILABLE_MESSAGE)
  return internalError(`Internal error while handling ${request.method}`)
}

/** The task a request names, which the SDK's "task not found" errors name too. */
function taskIdOf (request: CheckedRequest): string | undefined {
  const params = request.params as { id?: unknown, taskId?: unknown, message?: { taskId?: unknown } }
  let taskId: unknown = params.id
  if (request.method.includes('PushNotificationConfig')) taskId = params.taskId
  else if (request.method === 'SendMessage' || request.method === 'SendStreamingMessage') taskId = params.message?.taskId
  return typeof taskId === 'string' && taskId !== '' ? taskId : undefined
}
