import t from 'tap'
import {
  a2aError, BAD_REQUEST_TYPE, contentTypeNotSupported, ERROR_INFO_TYPE, errorResponse, extendedAgentCardNotConfigured,
  extensionSupportRequired, internalError, invalidAgentResponse, invalidParams, invalidRequest, JsonRpcErrorCode,
  methodNotFound, parseError, pushNotificationNotSupported, successResponse, taskNotCancelable, taskNotFound,
  unsupportedOperation, versionNotSupported
} from '../../../packages/a2a-converse/src/protocol/errors.js'

const info = (reason: string, metadata: Record<string, string> = {}) =>
  [{ '@type': ERROR_INFO_TYPE, reason, domain: 'a2a-protocol.org', metadata }]

t.test('standard JSON-RPC errors', async (t) => {
  t.strictSame(parseError(), { code: -32700, message: 'Invalid JSON payload' })
  t.strictSame(invalidRequest([{ field: 'jsonrpc', description: 'must be "2.0"' }]), {
    code: -32600,
    message: 'Invalid JSON-RPC request',
    data: [{ '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: 'jsonrpc', description: 'must be "2.0"' }] }]
  })
  t.equal(invalidRequest([], 'Batch requests are not supported').message, 'Batch requests are not supported')
  t.strictSame(methodNotFound('message/send'), { code: -32601, message: 'Method not found: "message/send"' })
  t.equal(methodNotFound('x'.repeat(500)).message.length < 160, true, 'echoed method names are cut')
  t.strictSame(invalidParams([{ field: 'message.parts', description: 'must have at least one item' }]), {
    code: -32602,
    message: 'Invalid parameters',
    data: [{ '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: 'message.parts', description: 'must have at least one item' }] }]
  })
  t.strictSame(internalError(), { code: -32603, message: 'Internal error' })
  t.strictSame(internalError('Internal error while handling GetTask'), { code: -32603, message: 'Internal error while handling GetTask' })
})

t.test('A2A errors carry one ErrorInfo with a string metadata map', async (t) => {
  t.strictSame(taskNotFound('t-1'), { code: -32001, message: 'Task not found', data: info('TASK_NOT_FOUND', { taskId: 't-1' }) })
  t.strictSame(taskNotFound(), { code: -32001, message: 'Task not found', data: info('TASK_NOT_FOUND') })
  t.strictSame(taskNotCancelable('t-2', 'no'), { code: -32002, message: 'no', data: info('TASK_NOT_CANCELABLE', { taskId: 't-2' }) })
  t.strictSame(taskNotCancelable(), { code: -32002, message: 'Task cannot be canceled', data: info('TASK_NOT_CANCELABLE') })
  t.strictSame(pushNotificationNotSupported(), {
    code: -32003, message: 'Push notifications are not supported by this agent', data: info('PUSH_NOTIFICATION_NOT_SUPPORTED')
  })
  t.strictSame(unsupportedOperation(), { code: -32004, message: 'This operation is not supported', data: info('UNSUPPORTED_OPERATION') })
  t.strictSame(contentTypeNotSupported('text/plain'), {
    code: -32005,
    message: 'Unsupported Content-Type "text/plain"; expected application/json',
    data: info('CONTENT_TYPE_NOT_SUPPORTED', { supportedContentTypes: 'application/json', contentType: 'text/plain' })
  })
  t.strictSame(contentTypeNotSupported(), {
    code: -32005,
    message: 'Content-Type is required; expected application/json',
    data: info('CONTENT_TYPE_NOT_SUPPORTED', { supportedContentTypes: 'application/json' })
  })
  t.strictSame(invalidAgentResponse(), { code: -32006, message: 'Invalid agent response', data: info('INVALID_AGENT_RESPONSE') })
  t.strictSame(extendedAgentCardNotConfigured(), {
    code: -32007, message: 'Extended agent card is not configured', data: info('EXTENDED_AGENT_CARD_NOT_CONFIGURED')
  })
  t.strictSame(extensionSupportRequired(['https://a/v1', 'https://b/v1']), {
    code: -32008,
    message: 'Required extension not activated',
    data: info('EXTENSION_SUPPORT_REQUIRED', { missingExtensions: 'https://a/v1,https://b/v1' })
  })
  t.strictSame(versionNotSupported('0.3', ['1.0']), {
    code: -32009,
    message: 'A2A version 0.3 is not supported',
    data: info('VERSION_NOT_SUPPORTED', { requestedVersion: '0.3', supportedVersions: '1.0' })
  })
  t.equal((versionNotSupported('9'.repeat(100), ['1.0']).data?.[0] as unknown as { metadata: { requestedVersion: string } })
    .metadata.requestedVersion.length, 32)
  t.strictSame(a2aError(-32099, 'CUSTOM', 'custom'), { code: -32099, message: 'custom', data: info('CUSTOM') })
  t.equal(JsonRpcErrorCode.VersionNotSupported, -32009)
})

t.test('response envelopes', async (t) => {
  t.strictSame(errorResponse(7, parseError()), { jsonrpc: '2.0', id: 7, error: { code: -32700, message: 'Invalid JSON payload' } })
  t.strictSame(successResponse('a', { ok: true }), { jsonrpc: '2.0', id: 'a', result: { ok: true } })
})

t.test('builders return fresh objects', async (t) => {
  const violations = [{ field: 'a', description: 'b' }]
  const built = invalidParams(violations)
  violations[0].field = 'changed'
  t.equal((built.data?.[0] as { fieldViolations: Array<{ field: string }> }).fieldViolations[0].field, 'a')
  t.not(taskNotFound('x'), taskNotFound('x'))
})
