/**
 * Maps what @a2a-js/sdk's request handler throws to our exact A2A error objects. The SDK's own mapping
 * answers -32603 with the raw message of any Error (leaking internals) and gives RequestMalformedError an
 * ErrorInfo where A2A wants BadRequest field violations. Here errors the protocol does not name map to
 * undefined, so the caller logs them and answers a bare -32603.
 */
import { A2AError } from '@a2a-js/sdk/errors'
import { a2aError, invalidParams, JsonRpcErrorCode, type JsonRpcError } from '../../protocol/errors.js'

/** Request facts that make the error more useful than the SDK's message alone. */
export interface ErrorHints {
  /** The task the request names: added to the ErrorInfo metadata of task errors. */
  taskId?: string
}

/** SDK error name → [code, ErrorInfo reason, whether the error is about the request's task]. */
const A2A_ERRORS: Readonly<Record<string, readonly [number, string, boolean]>> = {
  TaskNotFoundError: [JsonRpcErrorCode.TaskNotFound, 'TASK_NOT_FOUND', true],
  TaskNotCancelableError: [JsonRpcErrorCode.TaskNotCancelable, 'TASK_NOT_CANCELABLE', true],
  PushNotificationNotSupportedError: [JsonRpcErrorCode.PushNotificationNotSupported, 'PUSH_NOTIFICATION_NOT_SUPPORTED', false],
  UnsupportedOperationError: [JsonRpcErrorCode.UnsupportedOperation, 'UNSUPPORTED_OPERATION', true],
  ContentTypeNotSupportedError: [JsonRpcErrorCode.ContentTypeNotSupported, 'CONTENT_TYPE_NOT_SUPPORTED', false],
  InvalidAgentResponseError: [JsonRpcErrorCode.InvalidAgentResponse, 'INVALID_AGENT_RESPONSE', false],
  ExtendedAgentCardNotConfiguredError: [JsonRpcErrorCode.ExtendedAgentCardNotConfigured, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', false],
  ExtensionSupportRequiredError: [JsonRpcErrorCode.ExtensionSupportRequired, 'EXTENSION_SUPPORT_REQUIRED', false],
  VersionNotSupportedError: [JsonRpcErrorCode.VersionNotSupported, 'VERSION_NOT_SUPPORTED', false]
}

/** The A2A error for an SDK error, or undefined when it is not one the protocol names (an internal error). */
export function fromSdkError (error: unknown, hints: ErrorHints = {}): JsonRpcError | undefined {
  if (!(error instanceof A2AError)) return undefined
  if (error.name === 'RequestMalformedError') {
    return invalidParams([{ field: malformedField(error.message), description: error.message }])
  }
  if (!Object.hasOwn(A2A_ERRORS, error.name)) return undefined
  const [code, reason, aboutTask] = A2A_ERRORS[error.name]
  const metadata: Record<string, string> = {}
  if (aboutTask && hints.taskId !== undefined) metadata.taskId = hints.taskId
  for (const [key, value] of Object.entries(error.metadata ?? {})) {
    if (typeof value === 'string') metadata[key] = value
  }
  return a2aError(code, reason, error.message, metadata)
}

/** The SDK reports a taskId/contextId mismatch as RequestMalformedError("contextId mismatch: …"). */
function malformedField (message: string): string {
  return message.startsWith('contextId mismatch') ? 'message.contextId' : 'params'
}
