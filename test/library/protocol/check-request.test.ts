import t from 'tap'
import { checkEnvelope, checkRequest, type AgentFacts } from '../../../packages/a2a-converse/src/protocol/check-request.js'
import { A2A_METHODS, isA2AMethod, PUSH_CONFIG_METHODS, STREAMING_METHODS } from '../../../packages/a2a-converse/src/protocol/methods.js'

const REQUIRED = 'https://example.com/ext/required/v1'
const agent: AgentFacts = {
  capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
  requiredExtensions: []
}
const facts = { version: '1.0', activated: [] }
const sendParams = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }

function errorOf (result: ReturnType<typeof checkRequest>) {
  t.equal(result.ok, false)
  return result.ok ? undefined : result.response
}

t.test('methods', async (t) => {
  t.equal(A2A_METHODS.length, 11)
  t.equal(isA2AMethod('SendMessage'), true)
  t.equal(isA2AMethod('message/send'), false)
  t.equal(isA2AMethod('constructor'), false)
  t.equal(isA2AMethod('__proto__'), false)
  t.strictSame([...STREAMING_METHODS], ['SendStreamingMessage', 'SubscribeToTask'])
  t.equal(PUSH_CONFIG_METHODS.size, 4)
})

t.test('a valid request', async (t) => {
  t.strictSame(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: sendParams }, agent, facts),
    { ok: true, request: { id: 1, method: 'SendMessage', params: sendParams } })
  t.strictSame(checkRequest({ jsonrpc: '2.0', id: 'a', method: 'GetExtendedAgentCard' },
    { ...agent, capabilities: { ...agent.capabilities, extendedAgentCard: true } }, facts),
  { ok: true, request: { id: 'a', method: 'GetExtendedAgentCard', params: {} } })
  const notification = checkRequest({ jsonrpc: '2.0', method: 'GetTask', params: { id: 't' } }, agent, facts)
  t.strictSame(notification, { ok: true, request: { id: null, method: 'GetTask', params: { id: 't' } } }, 'no id: answered with id null')
  t.strictSame(checkRequest({ jsonrpc: '2.0', id: null, method: 'GetTask', params: { id: 't' } }, agent, facts).ok, true)
})

t.test('envelope errors are -32600 with field violations', async (t) => {
  const cases: Array<[unknown, unknown, string, string]> = [
    [[], null, 'request', 'an empty batch is not a request'],
    [[{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } }], null, 'request', 'batch requests are not supported'],
    [null, null, 'request', 'must be a JSON-RPC 2.0 request object'],
    ['text', null, 'request', 'must be a JSON-RPC 2.0 request object'],
    [42, null, 'request', 'must be a JSON-RPC 2.0 request object'],
    [{ jsonrpc: '1.0', id: 1, method: 'GetTask' }, 1, 'jsonrpc', 'must be "2.0"'],
    [{ id: 1, method: 'GetTask' }, 1, 'jsonrpc', 'must be "2.0"'],
    [{ jsonrpc: 2, id: 1, method: 'GetTask' }, 1, 'jsonrpc', 'must be "2.0"'],
    [{ jsonrpc: '2.0', id: 1 }, 1, 'method', 'is required'],
    [{ jsonrpc: '2.0', id: 1, method: 5 }, 1, 'method', 'must be a string'],
    [{ jsonrpc: '2.0', id: 1, method: '' }, 1, 'method', 'must not be empty'],
    [{ jsonrpc: '2.0', id: { a: 1 }, method: 'GetTask' }, null, 'id', 'must be a string, an integer or null'],
    [{ jsonrpc: '2.0', id: [1], method: 'GetTask' }, null, 'id', 'must be a string, an integer or null'],
    [{ jsonrpc: '2.0', id: true, method: 'GetTask' }, null, 'id', 'must be a string, an integer or null'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'GetTask' }, null, 'id', 'must be a string, an integer or null']
  ]
  for (const [body, id, field, description] of cases) {
    const response = errorOf(checkRequest(body, agent, facts))
    t.equal(response?.id, id, JSON.stringify(body))
    t.equal(response?.error.code, -32600, JSON.stringify(body))
    t.strictSame((response?.error.data?.[0] as { fieldViolations: unknown[] }).fieldViolations, [{ field, description }], JSON.stringify(body))
  }
  t.equal(errorOf(checkRequest([1], agent, facts))?.error.message, 'Batch requests are not supported')
  const several = errorOf(checkRequest({ jsonrpc: '1', id: {}, method: 1 }, agent, facts))
  t.equal((several?.error.data?.[0] as { fieldViolations: unknown[] }).fieldViolations.length, 3)
  t.strictSame(checkEnvelope({ jsonrpc: '2.0', id: 3, method: 'X', params: [1] }), { ok: true, id: 3, method: 'X', params: [1] })
})

t.test('order: envelope, version, method, params, extensions, capabilities', async (t) => {
  t.equal(errorOf(checkRequest({ jsonrpc: '1', method: 'message/send' }, agent, { version: '0.3', activated: [] }))?.error.code, -32600)
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'message/send' }, agent, { version: '0.3', activated: [] }))?.error.code, -32009)
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'message/send' }, agent, facts))?.error.code, -32601)
  const required = { ...agent, requiredExtensions: [REQUIRED] }
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }, required, facts))?.error.code, -32602)
  const missing = errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: sendParams }, required, facts))
  t.equal(missing?.error.code, -32008)
  t.strictSame(missing?.error.data, [{
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'EXTENSION_SUPPORT_REQUIRED',
    domain: 'a2a-protocol.org',
    metadata: { missingExtensions: REQUIRED }
  }])
  t.equal(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: sendParams }, required, { version: '1.0', activated: [REQUIRED] }).ok, true)
  const noStreaming = { ...agent, capabilities: { ...agent.capabilities, streaming: false }, requiredExtensions: [REQUIRED] }
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: sendParams }, noStreaming, facts))?.error.code, -32008)
})

t.test('capability gates', async (t) => {
  const off: AgentFacts = { capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] }
  const streaming = errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: sendParams }, off, facts))
  t.equal(streaming?.error.code, -32004)
  t.equal(streaming?.error.message, 'Streaming is not supported by this agent')
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: 't' } }, off, facts))?.error.code, -32004)
  for (const method of PUSH_CONFIG_METHODS) {
    const params = { taskId: 't', id: 'c', url: 'https://x' }
    t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method, params }, off, facts))?.error.code, -32003, method)
  }
  const card = errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' }, off, facts))
  t.equal(card?.error.code, -32004)
  t.equal(card?.error.message, 'This agent does not declare an extended agent card')
  const on: AgentFacts = { capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true }, requiredExtensions: [] }
  t.equal(checkRequest({ jsonrpc: '2.0', id: 1, method: 'GetTaskPushNotificationConfig', params: { taskId: 't', id: 'c' } }, on, facts).ok, true)
})

t.test('params are checked before anything looks anything up', async (t) => {
  const response = errorOf(checkRequest({ jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: 1 } }, agent, facts))
  t.strictSame(response, {
    jsonrpc: '2.0',
    id: 9,
    error: {
      code: -32602,
      message: 'Invalid parameters',
      data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'id', description: 'must be a string' }] }]
    }
  })
})

/** `{ key: { key: … value } }`, `levels` objects deep. */
function nested (levels: number, key = 'a', leaf: unknown = 'x'): unknown {
  let value: unknown = leaf
  for (let level = 0; level < levels; level++) value = { [key]: value }
  return value
}

t.test('nesting deeper than MAX_NESTING_DEPTH is -32602 naming where (inside params), -32600 elsewhere', async (t) => {
  const { MAX_NESTING_DEPTH } = await import('../../../packages/a2a-converse/src/protocol/nesting-depth.js')
  t.equal(MAX_NESTING_DEPTH, 64)
  const send = (message: Record<string, unknown>) =>
    checkRequest({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { ...sendParams.message, ...message } } }, agent, facts)
  // body 1, params 2, message 3, metadata 4: metadata may nest 61 objects deep (levels 4 to 64).
  t.equal(send({ metadata: nested(61) }).ok, true, 'exactly 64 levels pass')
  const deepMetadata = errorOf(send({ metadata: nested(62) }))
  t.equal(deepMetadata?.error.code, -32602)
  t.equal(deepMetadata?.id, 7)
  t.strictSame(deepMetadata?.error.data?.[0], {
    '@type': 'type.googleapis.com/google.rpc.BadRequest',
    fieldViolations: [{ field: `message.metadata${'.a'.repeat(61)}`, description: 'nests deeper than 64 levels' }]
  })
  for (const [where, message, field] of [
    ['metadata, 3,000 levels', { metadata: nested(3000) }, 'message.metadata.a.a'],
    ['parts[].data', { parts: [{ text: 'hi' }, { data: nested(3000) }] }, 'message.parts[1].data.a'],
    ['arrays count too', { metadata: { list: nested(3000, 'b', []) } }, 'message.metadata.list.b']
  ] as const) {
    const response = errorOf(send(message))
    t.equal(response?.error.code, -32602, where)
    const violation = (response?.error.data?.[0] as { fieldViolations: Array<{ field: string }> }).fieldViolations[0]
    t.ok(violation.field.startsWith(field), `${where}: ${violation.field.slice(0, 40)}…`)
  }
  const outside = errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' }, extra: [nested(3000)] }, agent, facts))
  t.equal(outside?.error.code, -32600, 'a member outside params')
  t.match((outside?.error.data?.[0] as { fieldViolations: Array<{ field: string }> }).fieldViolations[0].field, /^extra\[0\]\.a\.a/)
  t.equal(errorOf(checkRequest({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } }, agent, { ...facts, version: '0.3' }))?.error.code,
    -32009, 'the version is checked first')
})

t.test('a typed converse call with an empty or non-string toolName is -32602 naming metadata[URI].call.toolName', async (t) => {
  const URI = 'https://docs.radioso.ai/reference/a2a-converse-extension/v1'
  const active = { version: '1.0', activated: [URI] }
  const withCall = (call: unknown, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { ...sendParams.message, extensions: [URI], metadata: { [URI]: { call } }, ...extra } }
  })
  for (const [call, field, description] of [
    [{ toolName: '', arguments: {} }, 'call.toolName', 'must be a non-empty string'],
    [{ toolName: 42 }, 'call.toolName', 'must be a non-empty string'],
    [{ arguments: {} }, 'call.toolName', 'must be a non-empty string'],
    [null, 'call', 'must be an object with toolName and arguments'],
    ['book_table', 'call', 'must be an object with toolName and arguments'],
    [['book_table'], 'call', 'must be an object with toolName and arguments']
  ] as const) {
    const response = errorOf(checkRequest(withCall(call), agent, active))
    t.equal(response?.error.code, -32602, JSON.stringify(call))
    t.strictSame((response?.error.data?.[0] as { fieldViolations: unknown[] }).fieldViolations,
      [{ field: `message.metadata[${URI}].${field}`, description }])
    const streaming = errorOf(checkRequest({ ...withCall(call), method: 'SendStreamingMessage' }, agent, active))
    t.equal(streaming?.error.code, -32602, 'SendStreamingMessage too')
  }
  t.equal(checkRequest(withCall({ toolName: '' }), agent, facts).ok, true, 'not activated: no typed call, nothing to check')
  t.equal(checkRequest(withCall({ toolName: '' }, { extensions: [] }), agent, active).ok, true, 'URI not listed: no typed call')
  t.equal(checkRequest(withCall({ toolName: 'book_table' }), agent, active).ok, true, 'a well-formed call passes')
  t.equal(checkRequest({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't', message: { extensions: [URI], metadata: { [URI]: { call: null } } } } }, agent, active).ok,
    true, 'only SendMessage and SendStreamingMessage carry calls')
})
