/**
 * The 0.3 JSON-RPC binding over the service, with a backend the test writes: unknown agents, wire errors before
 * translation, both extension headers (lists included), and a stream that fails after its first event.
 */
import t from 'tap'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { createBoundA2AService } from '../../../packages/a2a-converse/src/bindings/index.js'
import type { A2AServiceRequest, JsonReply, StreamReply } from '../../../packages/a2a-converse/src/bindings/jsonrpc/binding.js'
import { createConverseExtension } from '../../../packages/a2a-converse/src/core/converse-extension.js'
import { staticEnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

const extension = createConverseExtension({
  agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }],
  provider: staticEnvelopeProvider({ author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } } as never)
})
const task = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } }
const streaming: A2ABackend = {
  facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
  call: async () => ({ message: { messageId: 'a1', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } }),
  stream: async function * () {
    yield { task }
    throw new Error('upstream gone')
  },
  toError: () => ({ code: -32603, message: 'Internal error' })
}
const service = createBoundA2AService({ extension, backends: new Map([['demo', streaming]]) })
const message = { kind: 'message', messageId: 'u1', role: 'user', parts: [{ kind: 'text', text: 'q' }] }

function request (method: string, extra: Partial<A2AServiceRequest> = {}): A2AServiceRequest {
  return { agentId: 'demo', headers: {}, body: { kind: 'json', value: { jsonrpc: '2.0', id: 7, method, params: { message } } }, signal: new AbortController().signal, ...extra }
}

t.test('unknown agent: 404 before anything is read', async (t) => {
  const reply = await service.handle(request('message/send', { agentId: 'ghost' })) as JsonReply
  t.equal(reply.status, 404)
})

t.test('wire errors are answered before translation, as in 1.0', async (t) => {
  const reply = await service.handle(request('message/send', { body: { kind: 'invalid_json' } })) as JsonReply
  t.strictSame([reply.status, (reply.body as any).error.code], [400, -32700])
  const unknown = await service.handle(request('tasks/list')) as JsonReply
  t.strictSame([unknown.status, (unknown.body as any).error.code, (unknown.body as any).id], [200, -32601, 7], 'a name 0.3 does not have')
})

t.test('extension headers: lists, both headers, the echo', async (t) => {
  const reply = await service.handle(request('message/send', { headers: { 'x-a2a-extensions': ['https://example.com/x', URI] } })) as JsonReply
  t.equal(reply.headers['X-A2A-Extensions'], URI)
  t.equal(reply.headers['A2A-Extensions'], undefined)
  t.ok((reply.body as any).result.metadata[URI], 'activated through the 0.3 header')
})

t.test('a stream failing after its first event ends with an error frame', async (t) => {
  const reply = await service.handle(request('message/stream', { headers: { 'a2a-version': '0.3.0' } })) as StreamReply
  t.equal(reply.kind, 'stream')
  const frames: string[] = []
  for await (const frame of reply.frames) frames.push(frame)
  t.equal(frames.length, 2)
  t.match(JSON.parse(frames[0].slice('data: '.length)), { id: 7, result: { kind: 'task', id: 't1', status: { state: 'working' } } })
  t.match(frames[1], /^event: error\ndata: .*"code":-32603/)
})

t.test('a version neither binding speaks: -32009 names both', async (t) => {
  const reply = await service.handle(request('SendMessage', { headers: { 'a2a-version': '2.0' } })) as JsonReply
  t.match((reply.body as any).error, { code: -32009, data: [{ metadata: { requestedVersion: '2.0', supportedVersions: '0.3,1.0' } }] })
  const ok = await service.handle({ ...request('SendMessage', { headers: { 'a2a-version': '1.0' } }), body: { kind: 'json', value: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } } } }) as JsonReply
  t.ok((ok.body as any).result, '1.0 as before')
  const oneOnly = createBoundA2AService({ extension, backends: new Map([['demo', streaming]]), versions: ['1.0'] })
  const refused = await oneOnly.handle(request('message/send')) as JsonReply
  t.match((refused.body as any).error, { code: -32009, data: [{ metadata: { requestedVersion: '0.3', supportedVersions: '1.0' } }] })
})
