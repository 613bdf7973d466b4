/**
 * The 0.3 HTTP+JSON binding (the `/v1/…` paths) over the service, with a backend the test writes that echoes the
 * 1.0 call it got: every route to its 1.0 method and params, 0.3 proto-JSON bodies both ways, errors as the 0.3
 * REST body, a stream failing after its first event, and the routes that are not there.
 */
import t from 'tap'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { createBoundA2AService } from '../../../packages/a2a-converse/src/bindings/index.js'
import type { HttpJsonRequest } from '../../../packages/a2a-converse/src/bindings/http-json/binding.js'
import type { StreamReply } from '../../../packages/a2a-converse/src/bindings/jsonrpc/binding.js'
import { createConverseExtension } from '../../../packages/a2a-converse/src/core/converse-extension.js'
import { staticEnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

const extension = createConverseExtension({
  agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }],
  provider: staticEnvelopeProvider({ author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } } as never)
})
const calls: Array<{ method: string, params: any }> = []
const task = {
  id: 't1',
  contextId: 'c1',
  status: { state: 'TASK_STATE_CANCELED', message: { messageId: 's', role: 'ROLE_AGENT', parts: [{ text: 'bye' }] } },
  artifacts: [{ artifactId: 'a', parts: [{ raw: 'aGk=', mediaType: 'text/plain', filename: 'f' }, { url: 'https://x.example/f' }, { data: 5 }, { data: { k: 1 } }] }],
  history: [{ messageId: 'u', role: 'ROLE_USER', parts: [{ text: 'q' }], extensions: [] }]
}
const push = { taskId: 't1', id: 'p1', url: 'https://hooks.example/x', token: 'tok' }
const backend: A2ABackend = {
  facts: { capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true }, requiredExtensions: [] },
  call: async (rpc) => {
    calls.push({ method: rpc.method, params: rpc.params })
    switch (rpc.method) {
      case 'SendMessage': return (rpc.params as any).message.parts[0].text === 'task' ? { task } : { message: { messageId: 'r', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } }
      case 'GetTask': return { ...task, status: { state: 3 } }
      case 'CancelTask': return task
      case 'ListTaskPushNotificationConfigs': return { configs: [push] }
      case 'DeleteTaskPushNotificationConfig': return {}
      case 'GetExtendedAgentCard': return { name: 'Demo', supportedInterfaces: [{ url: 'https://g.example/a2a/demo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }
      default: return push
    }
  },
  stream: async function * (rpc) {
    calls.push({ method: rpc.method, params: rpc.params })
    yield { task: { ...task, status: { state: 'TASK_STATE_WORKING' } } }
    yield { statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_INPUT_REQUIRED' } } }
    yield { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'x' }] }, lastChunk: true } }
    yield { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } }
    throw new Error('gone')
  },
  toError: () => ({ code: -32603, message: 'Internal error' })
}
const service = createBoundA2AService({ extension, backends: new Map([['demo', backend]]) })

function request (httpMethod: string, path: string, body?: unknown, extra: Partial<HttpJsonRequest> = {}): HttpJsonRequest {
  return {
    agentId: 'demo',
    httpMethod,
    path,
    headers: {},
    query: {},
    body: body === undefined ? { kind: 'absent' } : { kind: 'json', value: body },
    signal: new AbortController().signal,
    ...extra
  }
}

const send = {
  message: {
    messageId: 'm1',
    role: 'ROLE_USER',
    content: [{ text: 'task' }, { file: { fileWithBytes: 'aGk=', mimeType: 'text/plain' } }, { file: { fileWithUri: 'https://x.example/f' } }, { data: { data: { a: 1 } } }],
    metadata: { [URI]: { author: 'human' } }
  },
  configuration: { blocking: true, historyLength: 1, acceptedOutputModes: ['text/plain'], pushNotification: { url: 'https://hooks.example/x', authentication: { schemes: ['Bearer'] } } },
  metadata: { m: 1 }
}

t.test('every route: the 1.0 call it makes and the 0.3 body it answers', async (t) => {
  const sent = await service.handleHttpJson(request('POST', '/v1/message:send', send, { headers: { 'x-a2a-extensions': URI } })) as any
  t.strictSame(calls.at(-1), {
    method: 'SendMessage',
    params: {
      message: {
        messageId: 'm1',
        role: 'ROLE_USER',
        parts: [{ text: 'task' }, { raw: 'aGk=', mediaType: 'text/plain' }, { url: 'https://x.example/f' }, { data: { a: 1 } }],
        metadata: { [URI]: { author: 'human' } }
      },
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 1, taskPushNotificationConfig: { url: 'https://hooks.example/x', authentication: { scheme: 'Bearer' } }, returnImmediately: false },
      metadata: { m: 1 }
    }
  })
  t.equal(sent.status, 200)
  t.equal(sent.headers['X-A2A-Extensions'], URI)
  t.match(sent.body.task, {
    id: 't1',
    status: { state: 'TASK_STATE_CANCELLED', message: { messageId: 's', role: 'ROLE_AGENT', content: [{ text: 'bye' }] } },
    artifacts: [{ artifactId: 'a', parts: [{ file: { fileWithBytes: 'aGk=', mimeType: 'text/plain' } }, { file: { fileWithUri: 'https://x.example/f' } }, { data: { data: { value: 5 } }, metadata: { data_part_compat: true } }, { data: { data: { k: 1 } } }] }],
    history: [{ messageId: 'u', role: 'ROLE_USER', content: [{ text: 'q' }] }]
  })
  t.ok(sent.body.task.status.message.metadata[URI], 'the envelope on the status message')
  const message = await service.handleHttpJson(request('POST', '/v1/message:send', { request: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })) as any
  t.strictSame(calls.at(-1)!.params, { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }, '`request` and `parts` accepted too')
  const oddConfiguration = await service.handleHttpJson(request('POST', '/v1/message:send', { message: send.message, configuration: 'x' })) as any
  t.strictSame([oddConfiguration.status, oddConfiguration.body.data[0].fieldViolations[0].field], [400, 'configuration'], 'values are the 1.0 check\'s')
  t.strictSame(message.body, { message: { messageId: 'r', role: 'ROLE_AGENT', content: [{ text: 'hi' }] } })

  const got = await service.handleHttpJson(request('GET', '/v1/tasks/t%2F1', undefined, { query: { historyLength: '4' } })) as any
  t.strictSame(calls.at(-1), { method: 'GetTask', params: { id: 't/1', historyLength: 4 } })
  t.equal(got.body.status.state, 'TASK_STATE_COMPLETED', 'a state by number')
  await service.handleHttpJson(request('GET', '/v1/tasks/t1'))
  t.strictSame(calls.at(-1)!.params, { id: 't1' })
  const oddHistory = await service.handleHttpJson(request('GET', '/v1/tasks/t1', undefined, { query: { historyLength: 'x' } })) as any
  t.strictSame([oddHistory.status, oddHistory.body.code], [400, -32602], 'a bad historyLength: the 1.0 params check answers')
  await service.handleHttpJson(request('POST', '/v1/tasks/t1:cancel'))
  t.strictSame(calls.at(-1), { method: 'CancelTask', params: { id: 't1' } })

  const created = await service.handleHttpJson(request('POST', '/v1/tasks/t1/pushNotificationConfigs', { name: 'tasks/t1/pushNotificationConfigs/p1', pushNotificationConfig: { id: 'p1', url: 'https://hooks.example/x', token: 'tok' } })) as any
  t.strictSame(calls.at(-1), { method: 'CreateTaskPushNotificationConfig', params: { id: 'p1', url: 'https://hooks.example/x', token: 'tok', taskId: 't1' } })
  t.strictSame(created.body, { name: 'tasks/t1/pushNotificationConfigs/p1', pushNotificationConfig: { url: 'https://hooks.example/x', id: 'p1', token: 'tok' } })
  await service.handleHttpJson(request('POST', '/v1/message:send', { message: { messageId: 'm3', role: 'ROLE_USER', content: [{ text: 'hi' }] }, configuration: { blocking: 'yes' } }))
  await service.handleHttpJson(request('POST', '/v1/message:send', { message: { messageId: 'm4', role: 'ROLE_USER', content: 'none' }, configuration: {} }))
  const odd = await service.handleHttpJson(request('POST', '/v1/message:send', { message: 'm', configuration: { blocking: 'yes' } })) as any
  t.strictSame(odd.body.data[0].fieldViolations.map((v: any) => v.field), ['message', 'configuration.returnImmediately'], 'odd values reach the 1.0 check as they came')
  const junk = await service.handleHttpJson(request('POST', '/v1/tasks/t1/pushNotificationConfigs', 'junk')) as any
  t.strictSame([junk.status, junk.body.code], [400, -32602], 'a body that is no config: the 1.0 check answers what is missing')
  const listed = await service.handleHttpJson(request('GET', '/v1/tasks/t1/pushNotificationConfigs')) as any
  t.strictSame(calls.at(-1), { method: 'ListTaskPushNotificationConfigs', params: { taskId: 't1' } })
  t.equal(listed.body.configs[0].name, 'tasks/t1/pushNotificationConfigs/p1')
  await service.handleHttpJson(request('GET', '/v1/tasks/t1/pushNotificationConfigs/p1'))
  t.strictSame(calls.at(-1), { method: 'GetTaskPushNotificationConfig', params: { taskId: 't1', id: 'p1' } })
  const deleted = await service.handleHttpJson(request('DELETE', '/v1/tasks/t1/pushNotificationConfigs/p1')) as any
  t.strictSame(calls.at(-1), { method: 'DeleteTaskPushNotificationConfig', params: { taskId: 't1', id: 'p1' } })
  t.strictSame([deleted.status, deleted.body], [204, undefined])
  const card = await service.handleHttpJson(request('GET', '/v1/card')) as any
  t.match(card.body, { name: 'Demo', protocolVersion: '0.3.0', url: 'https://g.example/a2a/demo', preferredTransport: 'JSONRPC' })
})

t.test('streams: message:stream and tasks/{id}:subscribe, 0.3 events, `final`, an error frame', async (t) => {
  for (const [method, path] of [['POST', '/v1/message:stream'], ['GET', '/v1/tasks/t1:subscribe'], ['POST', '/v1/tasks/t1:subscribe']]) {
    const reply = await service.handleHttpJson(request(method, path, method === 'POST' && path.includes('message') ? send : undefined)) as StreamReply
    t.equal(reply.kind, 'stream', path)
    const frames: string[] = []
    for await (const frame of reply.frames) frames.push(frame)
    const events = frames.slice(0, 4).map((frame) => JSON.parse(frame.slice('data: '.length)))
    t.match(events, [
      { task: { id: 't1', status: { state: 'TASK_STATE_WORKING' } } },
      { statusUpdate: { taskId: 't1', status: { state: 'TASK_STATE_INPUT_REQUIRED' }, final: true } },
      { artifactUpdate: { taskId: 't1', artifact: { artifactId: 'a', parts: [{ text: 'x' }] }, lastChunk: true } },
      { message: { messageId: 'm', content: [] } }
    ], path)
    t.equal(frames[4], 'event: error\ndata: {"code":-32603,"message":"Internal error"}\n\n')
  }
  t.strictSame(calls.at(-1), { method: 'SubscribeToTask', params: { id: 't1' } })
})

t.test('errors: the 0.3 REST body with the 1.0 binding\'s status; routes that are not there', async (t) => {
  const badPart = await service.handleHttpJson(request('POST', '/v1/message:send', { message: { messageId: 'm', role: 'ROLE_USER', content: [{ file: {} }, { nothing: 1 }, 'x'] } })) as any
  t.equal(badPart.status, 400)
  t.strictSame(badPart.body.data[0].fieldViolations.map((v: any) => v.field), ['message.content[0]', 'message.content[1]'])
  t.equal(badPart.body.code, -32602)
  const notJson = await service.handleHttpJson({ ...request('POST', '/v1/message:send'), body: { kind: 'invalid_json' } }) as any
  t.strictSame([notJson.status, notJson.body], [400, { code: -32700, message: 'Invalid JSON payload' }])
  const oddBody = await service.handleHttpJson(request('POST', '/v1/message:send', [1])) as any
  t.strictSame([oddBody.status, oddBody.body.code], [400, -32602])
  for (const [method, path] of [['GET', '/v1/message:send'], ['GET', '/v1/nope'], ['GET', '/v1/tasks/'], ['PUT', '/v1/tasks/t1'], ['GET', '/v1/tasks/t1/other'],
    ['PUT', '/v1/tasks/t1/pushNotificationConfigs'], ['GET', '/v1/tasks/t1/pushNotificationConfigs/'], ['POST', '/v1/tasks/t1/pushNotificationConfigs/p1'], ['GET', '/v1/tasks/t1/pushNotificationConfigs/p1/x']]) {
    const reply = await service.handleHttpJson(request(method, path)) as any
    t.strictSame([reply.status, reply.body.code], [404, -32601], `${method} ${path}`)
  }
  const undecodable = await service.handleHttpJson(request('GET', '/v1/tasks/%E0%A4%A')) as any
  t.strictSame([undecodable.status, undecodable.body.code], [400, -32602])
  const oneOnly = createBoundA2AService({ extension, backends: new Map([['demo', backend]]), versions: ['1.0'] })
  const refused = await oneOnly.handleHttpJson(request('POST', '/v1/message:send', send)) as any
  t.match([refused.status, refused.body], [400, { error: { code: 400, status: 'UNIMPLEMENTED' } }], 'with 1.0 only, the 1.0 binding answers (-32009, no A2A-Version)')
})

t.test('a stream event that cannot be serialized ends the stream with -32603, logged', async (t) => {
  const lines: string[] = []
  const log = { info: () => {}, warn: () => {}, error: (_object: object, message: string) => { lines.push(message) } }
  const unserializable: A2ABackend = {
    ...backend,
    stream: async function * () {
      yield { task: { ...task, status: { state: 'TASK_STATE_WORKING' } } }
      yield { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [], metadata: { big: 1n } } }
      yield { message: { messageId: 'never', role: 'ROLE_AGENT', parts: [] } }
    }
  }
  const own = createBoundA2AService({ extension, backends: new Map([['demo', unserializable]]) })
  const reply = await own.handleHttpJson(request('POST', '/v1/message:stream', send, { log })) as StreamReply
  const frames: string[] = []
  for await (const frame of reply.frames) frames.push(frame)
  t.equal(frames.length, 2)
  t.equal(frames[1], 'event: error\ndata: {"code":-32603,"message":"Internal error"}\n\n')
  t.strictSame(lines, ['A2A stream event cannot be serialized'])
})
