import t from 'tap'
import {
  A2AError, ContentTypeNotSupportedError, ExtendedAgentCardNotConfiguredError, ExtensionSupportRequiredError,
  InvalidAgentResponseError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError,
  TaskNotFoundError, UnsupportedOperationError, VersionNotSupportedError
} from '@a2a-js/sdk/errors'
import { fromSdkError } from '../../../../packages/a2a-converse/src/backends/local/sdk-errors.js'

const info = (reason: string, metadata: Record<string, string> = {}) =>
  [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org', metadata }]

t.test('every A2A error the SDK throws maps to its code and reason', async (t) => {
  const cases: Array<[A2AError, number, string, boolean]> = [
    [new TaskNotFoundError('Task not found: t-1'), -32001, 'TASK_NOT_FOUND', true],
    [new TaskNotCancelableError('no'), -32002, 'TASK_NOT_CANCELABLE', true],
    [new PushNotificationNotSupportedError(), -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED', false],
    [new UnsupportedOperationError('terminal'), -32004, 'UNSUPPORTED_OPERATION', true],
    [new ContentTypeNotSupportedError('image/png'), -32005, 'CONTENT_TYPE_NOT_SUPPORTED', false],
    [new InvalidAgentResponseError(), -32006, 'INVALID_AGENT_RESPONSE', false],
    [new ExtendedAgentCardNotConfiguredError(), -32007, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', false],
    [new ExtensionSupportRequiredError('need x'), -32008, 'EXTENSION_SUPPORT_REQUIRED', false],
    [new VersionNotSupportedError('0.3'), -32009, 'VERSION_NOT_SUPPORTED', false]
  ]
  for (const [error, code, reason, aboutTask] of cases) {
    t.strictSame(fromSdkError(error, { taskId: 't-1' }), {
      code, message: error.message, data: info(reason, aboutTask ? { taskId: 't-1' } : {})
    }, error.name)
    t.strictSame(fromSdkError(error), { code, message: error.message, data: info(reason) }, `${error.name} without hints`)
  }
})

t.test('the SDK error metadata is kept (string values only)', async (t) => {
  const error = new TaskNotFoundError({ message: 'gone', metadata: { store: 'memory', count: 3 as unknown as string } })
  t.strictSame(fromSdkError(error, { taskId: 't' }), { code: -32001, message: 'gone', data: info('TASK_NOT_FOUND', { taskId: 't', store: 'memory' }) })
})

t.test('RequestMalformedError is -32602 with a field violation', async (t) => {
  t.strictSame(fromSdkError(new RequestMalformedError("contextId mismatch: message contextId 'a' does not match")), {
    code: -32602,
    message: 'Invalid parameters',
    data: [{
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'message.contextId', description: "contextId mismatch: message contextId 'a' does not match" }]
    }]
  })
  t.strictSame(fromSdkError(new RequestMalformedError('Invalid page token format.')), {
    code: -32602,
    message: 'Invalid parameters',
    data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'params', description: 'Invalid page token format.' }] }]
  })
})

t.test('anything else is not an A2A error', async (t) => {
  t.equal(fromSdkError(new Error('db down')), undefined)
  t.equal(fromSdkError(new A2AError('Agent execution finished without a result')), undefined, 'the base class is INTERNAL_ERROR')
  t.equal(fromSdkError('string'), undefined)
  t.equal(fromSdkError(undefined), undefined)
})
