import t from 'tap'
import { A2A_METHODS } from '../../../packages/a2a-converse/src/protocol/methods.js'
import { isRfc3339Timestamp, MAX_VIOLATIONS, paramsSchema, validateParams } from '../../../packages/a2a-converse/src/protocol/params.js'

const message = (extra: Record<string, unknown> = {}) => ({ messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }], ...extra })
const send = (extra: Record<string, unknown> = {}, params: Record<string, unknown> = {}) =>
  validateParams('SendMessage', { message: message(extra), ...params })

t.test('valid params of every method pass', async (t) => {
  const valid: Record<string, unknown> = {
    SendMessage: {
      tenant: 'acme',
      message: message({
        contextId: 'c',
        taskId: 't',
        metadata: { a: 1 },
        extensions: ['https://x'],
        referenceTaskIds: ['t0'],
        parts: [
          { text: 'hi', mediaType: 'text/plain', filename: 'a.txt', metadata: {} },
          { raw: 'aGk=' },
          { raw: 'aGk' },
          { url: 'https://example.com/a.pdf' },
          { data: { k: 1 } },
          { data: null },
          { data: [1, 2] }
        ]
      }),
      configuration: {
        acceptedOutputModes: ['text/plain'],
        taskPushNotificationConfig: { url: 'https://hook.example.com/x', token: 't', authentication: { scheme: 'Bearer', credentials: 'c' } },
        historyLength: 0,
        returnImmediately: true
      },
      metadata: { requestLevel: true },
      unknownField: 'ignored (§5.7)'
    },
    SendStreamingMessage: { message: message({ role: 'ROLE_AGENT' }) },
    GetTask: { id: 't-1', historyLength: 3 },
    ListTasks: {
      contextId: 'c',
      status: 'TASK_STATE_WORKING',
      pageSize: 100,
      pageToken: 'x',
      historyLength: 0,
      statusTimestampAfter: '2026-01-01T00:00:00.000Z',
      includeArtifacts: true
    },
    CancelTask: { id: 't-1', metadata: {} },
    SubscribeToTask: { id: 't-1' },
    CreateTaskPushNotificationConfig: { taskId: 't-1', url: 'http://127.0.0.1:9/hook', id: 'cfg' },
    GetTaskPushNotificationConfig: { taskId: 't-1', id: 'cfg' },
    ListTaskPushNotificationConfigs: { taskId: 't-1', pageSize: 0, pageToken: '' },
    DeleteTaskPushNotificationConfig: { taskId: 't-1', id: 'cfg' },
    GetExtendedAgentCard: { tenant: 'acme' }
  }
  for (const method of A2A_METHODS) {
    t.equal(validateParams(method, valid[method]), undefined, method)
    t.type(paramsSchema(method), 'object')
  }
  t.equal(validateParams('GetExtendedAgentCard', undefined), undefined, 'GetExtendedAgentCard params may be omitted')
  t.equal(validateParams('ListTasks', {}), undefined)
})

t.test('ProtoJSON integer enums are accepted (decision: documented)', async (t) => {
  t.equal(send({ role: 1 }), undefined)
  t.equal(send({ role: 2 }), undefined)
  t.equal(validateParams('ListTasks', { status: 3 }), undefined)
  t.equal(validateParams('ListTasks', { status: 0 }), undefined)
})

t.test('params that are not an object', async (t) => {
  t.strictSame(validateParams('SendMessage', undefined), [{ field: 'params', description: 'must be an object' }])
  t.strictSame(validateParams('GetTask', [1]), [{ field: 'params', description: 'must be an object' }])
  t.strictSame(validateParams('GetExtendedAgentCard', 'x'), [{ field: 'params', description: 'must be an object' }])
})

t.test('message rules', async (t) => {
  t.strictSame(validateParams('SendMessage', {}), [{ field: 'message', description: 'is required' }])
  t.strictSame(send({ parts: [] }), [{ field: 'message.parts', description: 'must have at least one item' }])
  t.strictSame(send({ parts: undefined }), [{ field: 'message.parts', description: 'is required' }])
  t.strictSame(send({ parts: 'hi' }), [{ field: 'message.parts', description: 'must be an array' }])
  t.strictSame(send({ messageId: undefined }), [{ field: 'message.messageId', description: 'is required' }])
  t.strictSame(send({ messageId: '  ' }), [{ field: 'message.messageId', description: 'must not be empty' }])
  t.strictSame(send({ messageId: 5 }), [{ field: 'message.messageId', description: 'must be a string' }])
  t.strictSame(send({ role: undefined }), [{ field: 'message.role', description: 'is required' }])
  for (const role of ['user', 'agent', 'ROLE_UNSPECIFIED', 0, 3, 'ROLE_user']) {
    t.strictSame(send({ role }), [{ field: 'message.role', description: 'must be one of ROLE_USER, ROLE_AGENT' }], String(role))
  }
  t.strictSame(send({ metadata: [] }), [{ field: 'message.metadata', description: 'must be an object' }])
  t.strictSame(send({ extensions: [1] }), [{ field: 'message.extensions[0]', description: 'must be a string' }])
  t.strictSame(validateParams('SendMessage', { message: 'hi' }), [{ field: 'message', description: 'must be an object' }])
})

t.test('parts carry exactly one of text, raw, url, data', async (t) => {
  t.strictSame(send({ parts: [{}] }), [{ field: 'message.parts[0]', description: 'must have exactly one of text, raw, url, data; it has none' }])
  t.strictSame(send({ parts: [{ mediaType: 'text/plain' }] }),
    [{ field: 'message.parts[0]', description: 'must have exactly one of text, raw, url, data; it has none' }])
  t.strictSame(send({ parts: [{ text: 'a' }, { text: 'a', url: 'https://x' }] }),
    [{ field: 'message.parts[1]', description: 'must have exactly one of text, raw, url, data; it has text, url' }])
  t.strictSame(send({ parts: [{ text: 'a', raw: 'aGk=', url: 'https://x', data: 1 }] }),
    [{ field: 'message.parts[0]', description: 'must have exactly one of text, raw, url, data; it has text, raw, url, data' }])
  t.strictSame(send({ parts: ['hi'] }), [{ field: 'message.parts[0]', description: 'must be an object' }])
  t.strictSame(send({ parts: [{ text: 5 }] }), [{ field: 'message.parts[0].text', description: 'must be a string' }])
  t.strictSame(send({ parts: [{ raw: 'not base64!' }] }), [{ field: 'message.parts[0].raw', description: 'must be base64' }])
  t.strictSame(send({ parts: [{ url: '' }] }), [{ field: 'message.parts[0].url', description: 'must not be empty' }])
  t.strictSame(send({ parts: [{ kind: 'text', text: 'a 0.3 part still has text' }] }), undefined, 'unknown members are ignored')
})

t.test('configuration rules', async (t) => {
  t.strictSame(send({}, { configuration: { historyLength: -1 } }),
    [{ field: 'configuration.historyLength', description: 'must be >= 0' }])
  t.strictSame(send({}, { configuration: { historyLength: 1.5 } }),
    [{ field: 'configuration.historyLength', description: 'must be an integer' }])
  t.strictSame(send({}, { configuration: { historyLength: 2 ** 31 } }),
    [{ field: 'configuration.historyLength', description: 'must be <= 2147483647' }])
  t.strictSame(send({}, { configuration: { returnImmediately: 'yes' } }),
    [{ field: 'configuration.returnImmediately', description: 'must be a boolean' }])
  t.strictSame(send({}, { configuration: { taskPushNotificationConfig: {} } }),
    [{ field: 'configuration.taskPushNotificationConfig.url', description: 'is required' }])
  t.strictSame(send({}, { configuration: { taskPushNotificationConfig: { url: 'ftp://x' } } }),
    [{ field: 'configuration.taskPushNotificationConfig.url', description: 'must be an absolute http(s) URL' }])
})

t.test('task-by-id methods need a string id', async (t) => {
  for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask'] as const) {
    t.strictSame(validateParams(method, {}), [{ field: 'id', description: 'is required' }], method)
    t.strictSame(validateParams(method, { id: 7 }), [{ field: 'id', description: 'must be a string' }], method)
    t.strictSame(validateParams(method, { id: '' }), [{ field: 'id', description: 'must not be empty' }], method)
  }
  t.strictSame(validateParams('GetTask', { id: 't', historyLength: -2 }), [{ field: 'historyLength', description: 'must be >= 0' }])
  t.strictSame(validateParams('CancelTask', { id: 't', metadata: 'x' }), [{ field: 'metadata', description: 'must be an object' }])
})

t.test('ListTasks rules', async (t) => {
  t.strictSame(validateParams('ListTasks', { pageSize: 0 }), [{ field: 'pageSize', description: 'must be between 1 and 100' }])
  t.strictSame(validateParams('ListTasks', { pageSize: 150 }), [{ field: 'pageSize', description: 'must be between 1 and 100' }])
  t.strictSame(validateParams('ListTasks', { pageSize: '10' }), [{ field: 'pageSize', description: 'must be an integer' }])
  t.strictSame(validateParams('ListTasks', { historyLength: -1 }), [{ field: 'historyLength', description: 'must be >= 0' }])
  const states = 'TASK_STATE_UNSPECIFIED, TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, ' +
    'TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED'
  for (const status of ['completed', 'TASK_STATE_DONE', 9, -1]) {
    t.strictSame(validateParams('ListTasks', { status }), [{ field: 'status', description: `must be one of ${states}` }], String(status))
  }
  for (const statusTimestampAfter of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01', '2026-01-01 00:00:00Z', '2026-01-01T24:00:00Z']) {
    t.strictSame(validateParams('ListTasks', { statusTimestampAfter }),
      [{ field: 'statusTimestampAfter', description: 'must be an RFC 3339 timestamp such as 2026-01-01T00:00:00.000Z' }], statusTimestampAfter)
  }
  t.strictSame(validateParams('ListTasks', { statusTimestampAfter: 5 }), [{ field: 'statusTimestampAfter', description: 'must be a string' }])
  t.strictSame(validateParams('ListTasks', { includeArtifacts: 1 }), [{ field: 'includeArtifacts', description: 'must be a boolean' }])
})

t.test('push config params', async (t) => {
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', {}), [
    { field: 'taskId', description: 'is required' },
    { field: 'url', description: 'is required' }
  ])
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', authentication: {} }),
    [{ field: 'authentication.scheme', description: 'is required' }])
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', authentication: { scheme: '' } }),
    [{ field: 'authentication.scheme', description: 'must be an HTTP authentication scheme (a token, e.g. Bearer)' }])
  // Sent as HTTP header values: a config that could never be sent is refused when made, not retried until it gives up.
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', authentication: { scheme: 'Bearer x' } }),
    [{ field: 'authentication.scheme', description: 'must be an HTTP authentication scheme (a token, e.g. Bearer)' }])
  const control = 'must not contain control characters (it is sent as an HTTP header value)'
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Injected: 1' } }),
    [{ field: 'authentication.credentials', description: control }])
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', token: 'a\u0000b' }), [{ field: 'token', description: control }])
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', token: 'tab\tand spaces: fine ü', authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' } }), undefined)
  t.strictSame(validateParams('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] }, configuration: { taskPushNotificationConfig: { url: 'https://x', token: '\n' } } }),
    [{ field: 'configuration.taskPushNotificationConfig.token', description: control }])
  t.strictSame(validateParams('CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://x', token: 1 }),
    [{ field: 'token', description: 'must be a string' }])
  for (const method of ['GetTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig'] as const) {
    t.strictSame(validateParams(method, { id: 'c' }), [{ field: 'taskId', description: 'is required' }], method)
    t.strictSame(validateParams(method, { taskId: 't' }), [{ field: 'id', description: 'is required' }], method)
  }
  t.strictSame(validateParams('ListTaskPushNotificationConfigs', {}), [{ field: 'taskId', description: 'is required' }])
  t.strictSame(validateParams('ListTaskPushNotificationConfigs', { taskId: 't', pageSize: -1 }),
    [{ field: 'pageSize', description: 'must be between 0 and 100' }])
  t.strictSame(validateParams('GetExtendedAgentCard', { tenant: 1 }), [{ field: 'tenant', description: 'must be a string' }])
})

t.test('violations are reported together and bounded', async (t) => {
  const violations = validateParams('SendMessage', { message: { parts: [{}, {}] } })
  t.strictSame(violations, [
    { field: 'message.messageId', description: 'is required' },
    { field: 'message.role', description: 'is required' },
    { field: 'message.parts[0]', description: 'must have exactly one of text, raw, url, data; it has none' },
    { field: 'message.parts[1]', description: 'must have exactly one of text, raw, url, data; it has none' }
  ])
  const many = validateParams('SendMessage', { message: message({ parts: Array.from({ length: 500 }, () => ({})) }) })
  t.equal(many?.length, MAX_VIOLATIONS)
})

t.test('RFC 3339 timestamps', async (t) => {
  for (const ok of ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.123456789Z', '2024-02-29T23:59:59+01:00', '2026-06-30t12:00:00z']) {
    t.equal(isRfc3339Timestamp(ok), true, ok)
  }
  for (const bad of ['2025-02-29T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:60Z',
    '2026-01-01T00:00:00+24:00', '2026-01-01T00:00:00+01:60', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '']) {
    t.equal(isRfc3339Timestamp(bad), false, bad)
  }
})

t.test('__proto__ and constructor keys are plain data to the validator', async (t) => {
  const params = JSON.parse('{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","metadata":{"__proto__":{"polluted":1}}}],' +
    '"metadata":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}},"metadata":{"__proto__":{"polluted":1}}}')
  t.equal(validateParams('SendMessage', params), undefined)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  // A `__proto__` own member named like a required field does not satisfy it through the prototype.
  t.strictSame(validateParams('GetTask', JSON.parse('{"__proto__":{"id":"t"}}')), [{ field: 'id', description: 'is required' }])
})
