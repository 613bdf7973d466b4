/** The HTTP+JSON binding's tables: routes (§11.3, the proto's http rules) and the error mapping (§5.4, §11.6). */
import t from 'tap'
import { matchRoute } from '../../../packages/a2a-converse/src/bindings/http-json/routes.js'
import { restErrorBody, restStatusOf } from '../../../packages/a2a-converse/src/bindings/http-json/errors.js'
import {
  a2aError, capReached, contentTypeNotSupported, extendedAgentCardNotConfigured, extensionSupportRequired, internalError,
  invalidAgentResponse, invalidParams, invalidRequest, JsonRpcErrorCode, methodNotFound, parseError, pushNotificationNotSupported,
  rateLimited, taskNotCancelable, taskNotFound, tooManyStreams, unauthenticated, unsupportedOperation, versionNotSupported
} from '../../../packages/a2a-converse/src/protocol/errors.js'

/** What a route calls, or undefined when it is no call. */
function call (verb: string, path: string, input: { query?: Record<string, unknown>, body?: unknown } = {}): { method: string, params: unknown, status?: number } | undefined {
  const match = matchRoute(verb, path)
  if (match?.kind !== 'call') return undefined
  return { method: match.method, params: match.params({ query: input.query ?? {}, body: input.body }), status: match.status }
}

t.test('every route of §11.3 and the method it calls', async (t) => {
  const message = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }
  t.strictSame(call('POST', '/message:send', { body: message }), { method: 'SendMessage', params: message, status: undefined })
  t.strictSame(call('post', '/message:stream', { body: message }), { method: 'SendStreamingMessage', params: message, status: undefined }, 'verbs in any case')
  t.strictSame(call('GET', '/tasks/t-1', { query: { historyLength: '3', other: 'x' } }), { method: 'GetTask', params: { historyLength: 3, id: 't-1' }, status: undefined })
  t.strictSame(call('GET', '/tasks', {
    query: { contextId: 'c', status: 'TASK_STATE_WORKING', pageSize: '10', pageToken: 'p', historyLength: '-1', statusTimestampAfter: '2026-01-01T00:00:00Z', includeArtifacts: 'true', tenant: 'ignored' }
  }), {
    method: 'ListTasks',
    params: { contextId: 'c', status: 'TASK_STATE_WORKING', pageSize: 10, pageToken: 'p', historyLength: -1, statusTimestampAfter: '2026-01-01T00:00:00Z', includeArtifacts: true },
    status: undefined
  })
  t.strictSame(call('GET', '/tasks', { query: { includeArtifacts: 'false' } })?.params, { includeArtifacts: false })
  t.strictSame(call('GET', '/tasks', { query: { pageSize: 'ten', includeArtifacts: 'yes', historyLength: ['1', '2'] } })?.params,
    { pageSize: 'ten', historyLength: ['1', '2'], includeArtifacts: 'yes' }, 'values that do not read as the field\'s type are passed on for the params check')
  t.strictSame(call('POST', '/tasks/t-1:cancel'), { method: 'CancelTask', params: { id: 't-1' }, status: undefined })
  t.strictSame(call('POST', '/tasks/t-1:cancel', { body: { metadata: { a: 1 }, id: 'other' } })?.params, { metadata: { a: 1 }, id: 't-1' }, 'the path\'s id wins')
  t.strictSame(call('POST', '/tasks/t-1:cancel', { body: [1] })?.params, [1], 'a body that is not an object is left for the params check')
  t.strictSame(call('GET', '/tasks/t-1:subscribe'), { method: 'SubscribeToTask', params: { id: 't-1' }, status: undefined })
  t.strictSame(call('POST', '/tasks/t-1:subscribe')?.method, 'SubscribeToTask')
  t.strictSame(call('GET', '/tasks/a:b'), { method: 'GetTask', params: { id: 'a:b' }, status: undefined }, 'a colon in an id is the id\'s')
  t.strictSame(call('GET', '/tasks/a%2Fb%3Acancel'), { method: 'GetTask', params: { id: 'a/b:cancel' }, status: undefined }, 'segments are decoded once, after splitting')
  t.strictSame(call('POST', '/tasks/t-1/pushNotificationConfigs', { body: { url: 'u' } }),
    { method: 'CreateTaskPushNotificationConfig', params: { url: 'u', taskId: 't-1' }, status: 201 })
  t.strictSame(call('POST', '/tasks/t-1/pushNotificationConfigs'), { method: 'CreateTaskPushNotificationConfig', params: { taskId: 't-1' }, status: 201 })
  t.strictSame(call('GET', '/tasks/t-1/pushNotificationConfigs', { query: { pageSize: '2' } }),
    { method: 'ListTaskPushNotificationConfigs', params: { pageSize: 2, taskId: 't-1' }, status: undefined })
  t.strictSame(call('GET', '/tasks/t-1/pushNotificationConfigs/c-1'), { method: 'GetTaskPushNotificationConfig', params: { taskId: 't-1', id: 'c-1' }, status: undefined })
  t.strictSame(call('DELETE', '/tasks/t-1/pushNotificationConfigs/c-1'), { method: 'DeleteTaskPushNotificationConfig', params: { taskId: 't-1', id: 'c-1' }, status: 204 })
  t.strictSame(call('GET', '/extendedAgentCard'), { method: 'GetExtendedAgentCard', params: {}, status: undefined })
})

t.test('a {tenant} segment in front of any route becomes the params\' tenant', async (t) => {
  t.strictSame(call('GET', '/acme/tasks/t-1'), { method: 'GetTask', params: { id: 't-1', tenant: 'acme' }, status: undefined })
  t.strictSame(call('POST', '/acme/message:send', { body: { message: {}, tenant: 'other' } })?.params, { message: {}, tenant: 'acme' })
  t.strictSame(call('POST', '/acme/message:send')?.params, { tenant: 'acme' })
  t.strictSame(call('POST', '/acme/message:send', { body: 'text' })?.params, 'text')
  t.strictSame(call('GET', '/acme/extendedAgentCard')?.params, { tenant: 'acme' })
  t.strictSame(matchRoute('GET', '/acme/nowhere'), { kind: 'not_found' })
  t.strictSame(matchRoute('PUT', '/acme/tasks'), { kind: 'method_not_allowed', allow: 'GET' })
})

t.test('no route, no such method, a path that cannot be decoded', async (t) => {
  for (const path of ['', '/', '/nowhere', '/tasks/t-1/other', '/other/t-1', '/other/t-1/pushNotificationConfigs', '/tasks/t-1/pushNotificationConfigs/c/d/e', '/a/b/c/d/e/f']) {
    t.strictSame(matchRoute('GET', path), { kind: 'not_found' }, `GET ${path}`)
  }
  t.strictSame(matchRoute('GET', '/other/t-1/pushNotificationConfigs/c'), { kind: 'not_found' })
  t.strictSame(matchRoute('GET', '/tasks/t-1/other/c'), { kind: 'not_found' })
  t.strictSame(matchRoute('GET', '/message:send'), { kind: 'method_not_allowed', allow: 'POST' })
  t.strictSame(matchRoute('DELETE', '/tasks/t-1:subscribe'), { kind: 'method_not_allowed', allow: 'GET, POST' })
  t.strictSame(matchRoute('PUT', '/tasks/t-1/pushNotificationConfigs'), { kind: 'method_not_allowed', allow: 'GET, POST' })
  t.strictSame(matchRoute('POST', '/tasks/t-1/pushNotificationConfigs/c'), { kind: 'method_not_allowed', allow: 'DELETE, GET' })
  t.equal(matchRoute('GET', '/tasks/%E0%A4%A'), undefined)
})

t.test('the error mapping: §5.4 statuses, AIP-193 bodies with the error\'s details', async (t) => {
  const table: Array<[string, ReturnType<typeof internalError>, number, string]> = [
    ['parse error', parseError(), 400, 'INVALID_ARGUMENT'],
    ['invalid request', invalidRequest([{ field: 'request', description: 'x' }]), 400, 'INVALID_ARGUMENT'],
    ['method not found', methodNotFound('X'), 404, 'NOT_FOUND'],
    ['invalid params', invalidParams([{ field: 'id', description: 'is required' }]), 400, 'INVALID_ARGUMENT'],
    ['internal', internalError(), 500, 'INTERNAL'],
    ['task not found', taskNotFound('t'), 404, 'NOT_FOUND'],
    ['task not cancelable', taskNotCancelable('t'), 409, 'FAILED_PRECONDITION'],
    ['push not supported', pushNotificationNotSupported(), 400, 'UNIMPLEMENTED'],
    ['unsupported operation', unsupportedOperation(), 400, 'UNIMPLEMENTED'],
    ['content type', contentTypeNotSupported('text/plain'), 415, 'INVALID_ARGUMENT'],
    ['invalid agent response', invalidAgentResponse(), 502, 'INTERNAL'],
    ['extended card not configured', extendedAgentCardNotConfigured(), 400, 'FAILED_PRECONDITION'],
    ['extension required', extensionSupportRequired(['u']), 400, 'FAILED_PRECONDITION'],
    ['version', versionNotSupported('0.3', ['1.0']), 400, 'UNIMPLEMENTED'],
    ['a bound on kept work', capReached('tasks', 3, 'too many'), 429, 'RESOURCE_EXHAUSTED'],
    ['an upstream\'s own code', a2aError(-32050, 'UPSTREAM_UNAVAILABLE', 'down'), 500, 'INTERNAL']
  ]
  for (const [what, error, status, name] of table) {
    t.equal(restStatusOf(error), status, `${what}: HTTP ${status}`)
    t.strictSame(restErrorBody(error, status), { error: { code: status, status: name, message: error.message, details: error.data ?? [] } }, `${what}: ${name}`)
  }
  t.equal(JsonRpcErrorCode.ServerError, -32000)
  for (const [error, status, name] of [[unauthenticated(), 401, 'UNAUTHENTICATED'], [rateLimited(5), 429, 'RESOURCE_EXHAUSTED'], [tooManyStreams(1, 5), 429, 'RESOURCE_EXHAUSTED'],
    [internalError('authentication is unavailable'), 503, 'UNAVAILABLE'], [invalidRequest([], 'too large'), 413, 'INVALID_ARGUMENT'], [taskNotFound(), 418, 'UNKNOWN']] as const) {
    t.equal(restStatusOf(error, status), status, 'the status the service chose is kept')
    t.equal(restErrorBody(error, status).error.status, name, `HTTP ${status}: ${name}`)
  }
})
