/**
 * A2A 0.3 ↔ 1.0 translation, table-driven: every 0.3 method and shape to the 1.0 call (request-to-v1.ts), and
 * every 1.0 result and stream event back (result-to-v0_3.ts); what has no counterpart is a precise -32602.
 */
import t from 'tap'
import { requestToV1, v03EventToV1, v03ResultToV1 } from '../../../packages/a2a-converse/src/protocol/v0_3/request-to-v1.js'
import { resultToV03, streamEventToV03, taskStateToV03, v1CallToV03 } from '../../../packages/a2a-converse/src/protocol/v0_3/result-to-v0_3.js'
import { restResultToV03 } from '../../../packages/a2a-converse/src/protocol/v0_3/rest-result-to-v0_3.js'
import { isV03Method, V03_METHODS } from '../../../packages/a2a-converse/src/protocol/v0_3/types.js'

const URI = 'https://docs.radioso.ai/reference/a2a-converse-extension/v1'
const ENVELOPE = { author: 'agent', ownership: { state: 'ai_owned', suppressed: false } }

const v03Message = {
  kind: 'message',
  messageId: 'm1',
  role: 'user',
  contextId: 'c1',
  taskId: 't1',
  parts: [
    { kind: 'text', text: 'hello', metadata: { a: 1 } },
    { kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain', name: 'hi.txt' } },
    { kind: 'file', file: { uri: 'https://example.com/f.pdf' } },
    { kind: 'data', data: { x: 1 } },
    { kind: 'data', data: { value: [1, 2] }, metadata: { data_part_compat: true } },
    { kind: 'data', data: { value: 'v' }, metadata: { data_part_compat: true, keep: 1 } }
  ],
  metadata: { [URI]: ENVELOPE },
  extensions: [URI],
  referenceTaskIds: ['t0']
}
const v1Message = {
  messageId: 'm1',
  contextId: 'c1',
  taskId: 't1',
  role: 'ROLE_USER',
  parts: [
    { text: 'hello', metadata: { a: 1 } },
    { raw: 'aGk=', mediaType: 'text/plain', filename: 'hi.txt' },
    { url: 'https://example.com/f.pdf' },
    { data: { x: 1 } },
    { data: [1, 2] },
    { data: 'v', metadata: { keep: 1 } }
  ],
  metadata: { [URI]: ENVELOPE },
  extensions: [URI],
  referenceTaskIds: ['t0']
}

const REQUESTS: Array<[string, string, unknown, string, unknown]> = [
  ['send', 'message/send', { message: v03Message, metadata: { m: 1 } }, 'SendMessage', { message: v1Message, metadata: { m: 1 } }],
  ['send, blocking', 'message/send', { message: { ...v03Message, parts: [{ kind: 'text', text: 'x' }] }, configuration: { blocking: true, historyLength: 2, acceptedOutputModes: ['text/plain'] } },
    'SendMessage', { message: { ...v1Message, parts: [{ text: 'x' }] }, configuration: { acceptedOutputModes: ['text/plain'], historyLength: 2, returnImmediately: false } }],
  ['send, not blocking, push', 'message/send',
    { message: { kind: 'message', messageId: 'm', role: 'agent', parts: [] }, configuration: { blocking: false, pushNotificationConfig: { url: 'https://h.example/x', token: 'tok', authentication: { schemes: ['Bearer', 'Basic'], credentials: 'c' } } } },
    'SendMessage', { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] }, configuration: { taskPushNotificationConfig: { url: 'https://h.example/x', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'c' } }, returnImmediately: true } }],
  ['send, odd values left to the 1.0 schema', 'message/send', { message: { messageId: 5, role: 'bot', parts: 'no' }, configuration: 'x' },
    'SendMessage', { message: { messageId: 5, role: 'bot', parts: 'no' }, configuration: 'x' }],
  ['send, odd message and parts left to the 1.0 schema', 'message/send', { message: 'text', configuration: { pushNotificationConfig: 'x' } },
    'SendMessage', { message: 'text', configuration: { taskPushNotificationConfig: {} } }],
  ['send, non-object part', 'message/send', { message: { messageId: 'm', role: 'user', parts: [7, { kind: 'data', data: 'raw', metadata: { data_part_compat: true } }] } },
    'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [7, { data: 'raw' }] } }],
  ['push with odd authentication', 'tasks/pushNotificationConfig/set', { taskId: 't', pushNotificationConfig: { url: 'u', authentication: { schemes: 'x' } } },
    'CreateTaskPushNotificationConfig', { url: 'u', authentication: {}, taskId: 't' }],
  ['push with non-object authentication', 'tasks/pushNotificationConfig/set', { taskId: 't', pushNotificationConfig: { id: 'p', url: 'u', authentication: 'x' } },
    'CreateTaskPushNotificationConfig', { id: 'p', url: 'u', authentication: 'x', taskId: 't' }],
  ['stream', 'message/stream', { message: v03Message }, 'SendStreamingMessage', { message: v1Message }],
  ['get', 'tasks/get', { id: 't1', historyLength: 3, metadata: { q: 1 } }, 'GetTask', { id: 't1', historyLength: 3, metadata: { q: 1 } }],
  ['cancel', 'tasks/cancel', { id: 't1', metadata: { why: 'x' } }, 'CancelTask', { id: 't1', metadata: { why: 'x' } }],
  ['resubscribe', 'tasks/resubscribe', { id: 't1', metadata: {} }, 'SubscribeToTask', { id: 't1' }],
  ['push set', 'tasks/pushNotificationConfig/set', { taskId: 't1', pushNotificationConfig: { id: 'p1', url: 'https://h.example/x' } },
    'CreateTaskPushNotificationConfig', { id: 'p1', url: 'https://h.example/x', taskId: 't1' }],
  ['push get', 'tasks/pushNotificationConfig/get', { id: 't1', pushNotificationConfigId: 'p1' }, 'GetTaskPushNotificationConfig', { taskId: 't1', id: 'p1' }],
  ['push get, no config id: the task\'s', 'tasks/pushNotificationConfig/get', { id: 't1' }, 'GetTaskPushNotificationConfig', { taskId: 't1', id: 't1' }],
  ['push list', 'tasks/pushNotificationConfig/list', { id: 't1' }, 'ListTaskPushNotificationConfigs', { taskId: 't1' }],
  ['push delete', 'tasks/pushNotificationConfig/delete', { id: 't1', pushNotificationConfigId: 'p1' }, 'DeleteTaskPushNotificationConfig', { taskId: 't1', id: 'p1' }],
  ['extended card, no params', 'agent/getAuthenticatedExtendedCard', undefined, 'GetExtendedAgentCard', {}],
  ['extended card, params', 'agent/getAuthenticatedExtendedCard', {}, 'GetExtendedAgentCard', {}]
]

t.test('0.3 requests → 1.0 calls', async (t) => {
  t.equal(Object.keys(V03_METHODS).length, 10, 'every 0.3 JSON-RPC method')
  for (const [what, method, params, v1Method, v1Params] of REQUESTS) {
    t.strictSame(requestToV1(method, params), { ok: true, method: v1Method, params: v1Params }, what)
  }
})

t.test('0.3 requests with no 1.0 form: precise errors', async (t) => {
  const rejected: Array<[string, string, unknown, number, unknown]> = [
    ['unknown method', 'tasks/list', {}, -32601, undefined],
    ['a 1.0 name without its version', 'SendMessage', {}, -32601, undefined],
    ['inherited name', 'toString', {}, -32601, undefined],
    ['params not an object', 'tasks/get', [1], -32602, [{ field: 'params', description: 'must be an object' }]],
    ['params missing', 'message/send', undefined, -32602, [{ field: 'params', description: 'must be an object' }]],
    ['part kind', 'message/send', { message: { messageId: 'm', role: 'user', parts: [{ kind: 'image' }, { text: 'no kind' }] } }, -32602,
      [{ field: 'message.parts[0].kind', description: 'must be "text", "file" or "data"' }, { field: 'message.parts[1].kind', description: 'must be "text", "file" or "data"' }]],
    ['file without bytes or uri', 'message/stream', { message: { messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { name: 'x' } }, { kind: 'file' }] } }, -32602,
      [{ field: 'message.parts[0].file', description: 'must have bytes or uri (a string)' }, { field: 'message.parts[1].file', description: 'must have bytes or uri (a string)' }]]
  ]
  for (const [what, method, params, code, violations] of rejected) {
    const result = requestToV1(method, params)
    t.equal(result.ok, false, what)
    if (result.ok) continue
    t.equal(result.error.code, code, what)
    if (violations !== undefined) t.strictSame((result.error.data as any)[0].fieldViolations, violations, what)
  }
  const v1 = requestToV1('SendMessage', {})
  t.match(!v1.ok && v1.error.message, /send A2A-Version: 1\.0/, 'a 1.0 name is told what to send')
  const many = requestToV1('message/send', { message: { messageId: 'm', role: 'user', parts: Array.from({ length: 50 }, () => ({ kind: 'x' })) } })
  t.equal(!many.ok && (many.error.data as any)[0].fieldViolations.length, 20, 'violations bounded')
  t.ok(isV03Method('message/send'))
  t.notOk(isV03Method('constructor'))
})

const v1Task = {
  id: 't1',
  contextId: 'c1',
  status: {
    state: 'TASK_STATE_INPUT_REQUIRED',
    timestamp: '2026-01-01T00:00:00Z',
    message: { messageId: 's1', role: 'ROLE_AGENT', parts: [{ text: 'which day?' }], metadata: { [URI]: ENVELOPE }, extensions: [URI] }
  },
  artifacts: [{ artifactId: 'a1', name: 'n', description: 'd', parts: [{ data: 42 }, { data: null, metadata: { k: 1 } }], metadata: { [URI]: ENVELOPE }, extensions: [URI] }],
  history: [{ messageId: 'u1', role: 'ROLE_USER', parts: [{ url: 'https://x.example/f', mediaType: '', filename: 'f' }], contextId: 'c1', taskId: 't1', extensions: [], referenceTaskIds: [] }],
  metadata: { m: 1 }
}
const v03Task = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: {
    state: 'input-required',
    message: { kind: 'message', messageId: 's1', role: 'agent', parts: [{ kind: 'text', text: 'which day?' }], metadata: { [URI]: ENVELOPE }, extensions: [URI] },
    timestamp: '2026-01-01T00:00:00Z'
  },
  history: [{ kind: 'message', messageId: 'u1', role: 'user', parts: [{ kind: 'file', file: { uri: 'https://x.example/f', name: 'f' } }], contextId: 'c1', taskId: 't1' }],
  artifacts: [{
    artifactId: 'a1',
    parts: [{ kind: 'data', data: { value: 42 }, metadata: { data_part_compat: true } }, { kind: 'data', data: { value: null }, metadata: { k: 1, data_part_compat: true } }],
    name: 'n',
    description: 'd',
    metadata: { [URI]: ENVELOPE },
    extensions: [URI]
  }],
  metadata: { m: 1 }
}
const v1Reply = { messageId: 'r1', role: 'ROLE_AGENT', contextId: 'c1', parts: [{ text: 'hi' }, { raw: 'aGk=', mediaType: 'text/plain' }, { data: { a: 1 } }], metadata: { [URI]: ENVELOPE } }
const v03Reply = {
  kind: 'message',
  messageId: 'r1',
  role: 'agent',
  parts: [{ kind: 'text', text: 'hi' }, { kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain' } }, { kind: 'data', data: { a: 1 } }],
  contextId: 'c1',
  metadata: { [URI]: ENVELOPE }
}
const v1Push = { taskId: 't1', id: 'p1', url: 'https://h.example/x', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'c' } }
const v03Push = { taskId: 't1', pushNotificationConfig: { url: 'https://h.example/x', id: 'p1', token: 'tok', authentication: { schemes: ['Bearer'], credentials: 'c' } } }

t.test('1.0 results → 0.3 results', async (t) => {
  const results: Array<[string, any, unknown, unknown]> = [
    ['send → task', 'SendMessage', { task: v1Task }, v03Task],
    ['send → message', 'SendMessage', { message: v1Reply }, v03Reply],
    ['get', 'GetTask', v1Task, v03Task],
    ['cancel', 'CancelTask', { ...v1Task, status: { state: 'TASK_STATE_CANCELED' }, artifacts: [], history: [] }, { kind: 'task', id: 't1', contextId: 'c1', status: { state: 'canceled' }, metadata: { m: 1 } }],
    ['push set', 'CreateTaskPushNotificationConfig', v1Push, v03Push],
    ['push get, bare', 'GetTaskPushNotificationConfig', { taskId: 't1', id: '', url: 'u', token: '', authentication: { scheme: '' } }, { taskId: 't1', pushNotificationConfig: { url: 'u', authentication: { schemes: [] } } }],
    ['push list', 'ListTaskPushNotificationConfigs', { configs: [v1Push], nextPageToken: '' }, [v03Push]],
    ['push list, no authentication, odd scheme', 'ListTaskPushNotificationConfigs', { configs: [{ taskId: 't', url: 'u' }, { taskId: 't', url: 'u', authentication: { scheme: 5 } }] },
      [{ taskId: 't', pushNotificationConfig: { url: 'u' } }, { taskId: 't', pushNotificationConfig: { url: 'u', authentication: { schemes: [] } } }]],
    ['push list, empty', 'ListTaskPushNotificationConfigs', {}, []],
    ['push delete', 'DeleteTaskPushNotificationConfig', {}, null],
    ['extended card', 'GetExtendedAgentCard',
      { name: 'X', capabilities: { extendedAgentCard: true }, supportedInterfaces: [{ url: 'https://g.example/a2a/x', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url: 'https://g.example/a2a/x/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }] },
      {
        name: 'X',
        capabilities: { extendedAgentCard: true },
        supportedInterfaces: [{ url: 'https://g.example/a2a/x', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url: 'https://g.example/a2a/x/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }],
        protocolVersion: '0.3.0',
        url: 'https://g.example/a2a/x',
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [{ url: 'https://g.example/a2a/x', transport: 'JSONRPC' }, { url: 'https://g.example/a2a/x/rest', transport: 'HTTP+JSON' }],
        supportsAuthenticatedExtendedCard: true
      }],
    ['a stream method is not unary', 'SendStreamingMessage', { x: 1 }, { x: 1 }],
    ['not an object', 'GetTask', null, { kind: 'task', id: undefined, contextId: undefined, status: { state: 'unknown' } }]
  ]
  for (const [what, method, value, expected] of results) t.strictSame(resultToV03(method, value), expected, what)
})

t.test('1.0 stream events → 0.3 events, `final` where the stream ends', async (t) => {
  t.strictSame(streamEventToV03({ task: v1Task }), v03Task)
  t.strictSame(streamEventToV03({ message: v1Reply }), v03Reply)
  const states: Array<[string, string, boolean]> = [
    ['TASK_STATE_SUBMITTED', 'submitted', false], ['TASK_STATE_WORKING', 'working', false],
    ['TASK_STATE_COMPLETED', 'completed', true], ['TASK_STATE_FAILED', 'failed', true], ['TASK_STATE_CANCELED', 'canceled', true],
    ['TASK_STATE_REJECTED', 'rejected', true], ['TASK_STATE_INPUT_REQUIRED', 'input-required', true],
    ['TASK_STATE_AUTH_REQUIRED', 'auth-required', true], ['TASK_STATE_UNSPECIFIED', 'unknown', false]
  ]
  for (const [v1, v03, final] of states) {
    t.strictSame(streamEventToV03({ statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: v1 }, metadata: { [URI]: ENVELOPE } } }),
      { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: v03 }, final, metadata: { [URI]: ENVELOPE } }, v1)
  }
  t.strictSame(streamEventToV03({ artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'x' }], metadata: { [URI]: ENVELOPE } }, append: true, lastChunk: false } }),
    { kind: 'artifact-update', taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }], metadata: { [URI]: ENVELOPE } }, append: true, lastChunk: false })
  t.strictSame(streamEventToV03({ artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a' } } }),
    { kind: 'artifact-update', taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [] } })
  t.equal(taskStateToV03(3), 'completed', 'enum by number')
  t.equal(taskStateToV03(99), 'unknown')
  t.equal(taskStateToV03('TASK_STATE_NEW'), 'unknown')
})

t.test('0.3 HTTP+JSON results: what has no body, and a message without parts', async (t) => {
  t.strictSame(restResultToV03('SendStreamingMessage', { x: 1 }), { x: 1 }, 'streaming methods answer with events')
  t.strictSame(restResultToV03('DeleteTaskPushNotificationConfig', {}), {})
  t.strictSame(restResultToV03('ListTaskPushNotificationConfigs', {}), { configs: [] })
  t.strictSame(restResultToV03('GetTask', { id: 't', contextId: 'c', status: {}, history: [{ messageId: 'm', role: 'ROLE_USER' }] }),
    { id: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' }, history: [{ messageId: 'm', role: 'ROLE_USER', content: [] }] })
  t.strictSame(restResultToV03('GetTaskPushNotificationConfig', { taskId: 't', url: 'u' }), { name: 'tasks/t/pushNotificationConfigs/', pushNotificationConfig: { url: 'u' } }, 'a config without id')
})

t.test('proxy mode, a 0.3 upstream: 1.0 calls → 0.3 requests, 0.3 results → 1.0', async (t) => {
  const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'q' }] }
  const v03 = { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'q' }] }
  t.strictSame(v1CallToV03('SendMessage', { message, configuration: { returnImmediately: true, historyLength: 2, acceptedOutputModes: ['text/plain'] }, metadata: { a: 1 } }),
    { method: 'message/send', params: { message: v03, configuration: { acceptedOutputModes: ['text/plain'], historyLength: 2, blocking: false }, metadata: { a: 1 } } })
  t.strictSame(v1CallToV03('SendStreamingMessage', { message, configuration: {} }), { method: 'message/stream', params: { message: v03, configuration: {} } })
  t.strictSame(v1CallToV03('SendMessage', { message }), { method: 'message/send', params: { message: v03 } })
  t.strictSame(v1CallToV03('GetTask', { id: 't', historyLength: 3 }), { method: 'tasks/get', params: { id: 't', historyLength: 3 } })
  t.strictSame(v1CallToV03('CancelTask', { id: 't', metadata: { why: 1 } }), { method: 'tasks/cancel', params: { id: 't', metadata: { why: 1 } } })
  t.strictSame(v1CallToV03('SubscribeToTask', { id: 't' }), { method: 'tasks/resubscribe', params: { id: 't' } })
  t.equal(v1CallToV03('ListTasks', {}), undefined, 'no 0.3 counterpart')

  const task = { kind: 'task', id: 't', contextId: 'c', status: { state: 'input-required', message: { kind: 'message', messageId: 's', role: 'agent', parts: [{ kind: 'text', text: 'which?' }] }, timestamp: 'ts' }, history: [v03], artifacts: [{ artifactId: 'a', parts: [{ kind: 'data', data: { x: 1 } }] }], metadata: { k: 1 } }
  const v1Task = { id: 't', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 's', role: 'ROLE_AGENT', parts: [{ text: 'which?' }] }, timestamp: 'ts' }, artifacts: [{ artifactId: 'a', parts: [{ data: { x: 1 } }] }], history: [message], metadata: { k: 1 } }
  t.strictSame(v03ResultToV1('SendMessage', task), { task: v1Task })
  t.strictSame(v03ResultToV1('SendMessage', v03), { message })
  t.strictSame(v03ResultToV1('GetTask', task), v1Task)
  t.equal(v03ResultToV1('GetTask', null), null, 'not an object: left for the service to refuse')
  t.strictSame(v03EventToV1({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'done?' }, final: true, metadata: { m: 1 } }),
    { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' }, metadata: { m: 1 } } })
  t.strictSame(v03EventToV1({ kind: 'status-update', taskId: 't', contextId: 'c' }), { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' } } })
  t.strictSame(v03EventToV1({ kind: 'artifact-update', taskId: 't', contextId: 'c', artifact: { artifactId: 'a', name: 'n', parts: [{ kind: 'text', text: 'x' }] }, append: true, lastChunk: false }),
    { artifactUpdate: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', name: 'n', parts: [{ text: 'x' }] }, append: true, lastChunk: false } })
  t.strictSame(v03EventToV1({ kind: 'artifact-update', taskId: 't', contextId: 'c' }), { artifactUpdate: { taskId: 't', contextId: 'c', artifact: { parts: [] } } })
  t.strictSame(v03EventToV1('junk'), { message: {} })
  t.strictSame(v03EventToV1({ kind: 'task', id: 't', contextId: 'c' }), { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' } } })
})
