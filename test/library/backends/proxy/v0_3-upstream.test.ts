/**
 * Proxy mode in front of an A2A 0.3 agent (test/fixtures/upstream-agent-v03.ts, built with @a2a-js/sdk 0.3.14):
 * its card says 0.3, so the gateway speaks 0.3 to it (0.3 method names, no A2A-Version, X-A2A-Extensions) while a
 * 1.0 client (the official @a2a-js/sdk 1.3 client) and a 0.3 client get their own versions, the envelope added as
 * for any agent.
 */
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { SendMessageRequest, TaskState, type Message, type Task } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { ClientFactory as V03ClientFactory, ServiceParameters as V03ServiceParameters, withA2AExtensions as v03Extensions } from 'a2a-sdk-v03/client'
import { Agent } from 'undici'
import { startV03Upstream } from '../../../fixtures/upstream-agent-v03.js'
import { parseUpstreamCard } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-card-parse.js'
import { upstreamBackend } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-backend.js'
import { startGateway, URI } from '../../../fixtures/gateway-helpers.js'

const OTHER = 'https://example.com/ext/trace/v1'
const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI, OTHER)) }

function message (text: string, extra: Record<string, unknown> = {}) {
  return SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } })
}

function textOf (value: Message | undefined): string {
  return (value?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

async function proxied (t: Test) {
  const upstream = await startV03Upstream()
  t.teardown(() => upstream.close())
  const gateway = await startGateway(t, {}, { agents: [{ id: 'legacy', upstream: { url: upstream.base } }] })
  return { upstream, gateway }
}

t.test('the gateway serves a 1.0 card for a 0.3 upstream, the upstream\'s own endpoint fields dropped', async (t) => {
  const { gateway } = await proxied(t)
  const card = await (await fetch(`${gateway.base}/a2a/legacy/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(card.name, 'Legacy shop')
  t.same(card.supportedInterfaces.map((entry: any) => [entry.url, entry.protocolBinding, entry.protocolVersion]), [
    [`${gateway.base}/a2a/legacy`, 'JSONRPC', '1.0'], [`${gateway.base}/a2a/legacy/rest`, 'HTTP+JSON', '1.0'],
    [`${gateway.base}/a2a/legacy`, 'JSONRPC', '0.3'], [`${gateway.base}/a2a/legacy/rest`, 'HTTP+JSON', '0.3']
  ])
  t.equal(card.url, undefined, 'a 1.0 card')
  const v03 = await (await fetch(`${gateway.base}/a2a/legacy/v0.3/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(v03.url, `${gateway.base}/a2a/legacy`, 'the 0.3 url is the gateway\'s, not the upstream\'s')
})

t.test('a 1.0 client in front of a 0.3 upstream: send, stream, get, an input-required task continued', async (t) => {
  const { upstream, gateway } = await proxied(t)
  const client = await new ClientFactory().createFromUrl(`${gateway.base}/a2a/legacy/.well-known/agent-card.json`, '')
  const reply = await client.sendMessage(message('hello'), withConverse) as Message
  t.equal(textOf(reply), 'echo: hello')
  t.match(reply.metadata?.[URI], { author: 'agent', answerCoverage: { availability: 'not_recorded' } }, 'the envelope, as for any agent')
  const forwarded = upstream.seen.at(-1)!
  t.equal(forwarded.method, 'message/send', 'the upstream is spoken to in 0.3')
  t.equal(forwarded.headers['a2a-version'], undefined)
  t.equal(forwarded.headers['x-a2a-extensions'], OTHER, 'other extensions in the 0.3 header, the converse URI not')
  const plain = await client.sendMessage(message('no header')) as Message
  t.equal(plain.metadata?.[URI], undefined)
  t.equal(upstream.seen.at(-1)!.headers['x-a2a-extensions'], undefined)

  const frames: Array<{ $case: string, value: any }> = []
  for await (const event of client.sendMessageStream(message('task stream me'), withConverse)) if (event.payload !== undefined) frames.push(event.payload)
  t.same(frames.map((frame) => frame.$case), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  t.equal(upstream.seen.at(-1)!.method, 'message/stream')
  t.match(frames[2].value.artifact.metadata[URI], { author: 'agent' })
  t.equal(textOf(frames[2].value.artifact), 'result of task stream me')
  t.equal(frames[3].value.status.state, TaskState.TASK_STATE_COMPLETED)

  const asked = await client.sendMessage(message('ask me'), withConverse) as Task
  t.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.match(asked.status?.message?.metadata?.[URI], { author: 'agent' })
  const got = await client.getTask({ id: asked.id, historyLength: 5 } as any, withConverse)
  t.equal(got.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.equal(upstream.seen.at(-1)!.method, 'tasks/get')
  const done = await client.sendMessage(message('size M', { taskId: asked.id, contextId: asked.contextId }), withConverse) as Task
  t.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(textOf(done.status?.message), 'done: size M')
  await t.rejects(client.getTask({ id: randomUUID() } as any), { message: /not found/i }, 'the upstream\'s -32001 passed on')
})

t.test('a 0.3 client in front of a 0.3 upstream: translated twice, the envelope on 0.3 shapes', async (t) => {
  const { gateway } = await proxied(t)
  const client = await new V03ClientFactory().createFromUrl(`${gateway.base}/a2a/legacy/v0.3/.well-known/agent-card.json`, '')
  const active = { serviceParameters: V03ServiceParameters.create(v03Extensions(URI)) }
  const task = await client.sendMessage({ message: { kind: 'message', messageId: randomUUID(), contextId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'task twice' }] } }, active) as any
  t.match(task, { kind: 'task', status: { state: 'completed' }, artifacts: [{ parts: [{ kind: 'text', text: 'result of task twice' }] }] })
  t.match(task.artifacts[0].metadata[URI], { author: 'agent' })
})

t.test('ListTasks: the gateway lists what it recorded, each task read from the 0.3 upstream with tasks/get', async (t) => {
  const { upstream, gateway } = await proxied(t)
  const client = await new ClientFactory().createFromUrl(`${gateway.base}/a2a/legacy/.well-known/agent-card.json`, '')
  const asked = await client.sendMessage(message('ask again'), withConverse) as Task
  const listed = await client.listTasks({ contextId: asked.contextId } as any, withConverse)
  t.same(listed.tasks.map((task) => [task.id, task.status?.state]), [[asked.id, TaskState.TASK_STATE_INPUT_REQUIRED]])
  t.equal(upstream.seen.at(-1)!.method, 'tasks/get')
})

t.test('a method 0.3 does not have never goes upstream: -32004 naming why', async (t) => {
  const upstream = await startV03Upstream()
  t.teardown(() => upstream.close())
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  const cardUrl = `${upstream.base}/.well-known/agent-card.json`
  const card = parseUpstreamCard('legacy', cardUrl, await (await fetch(cardUrl)).text())
  t.equal(card.protocolVersion, '0.3')
  const backend = upstreamBackend({ agentId: 'legacy', card: () => card, dispatcher, timeoutMs: 1000, streamIdleTimeoutMs: 1000, maxResponseBytes: 65536 })
  const context = { agentId: 'legacy', requestedExtensions: [], activated: [], version: '1.0', headers: {}, signal: new AbortController().signal }
  const rpc = { id: 1, method: 'ListTasks' as const, params: {} }
  const error = await backend.call(rpc, context).then(() => undefined, (caught: unknown) => caught)
  t.match(backend.toError(error, rpc), { code: -32004, message: /A2A 0\.3/ })
  t.strictSame(upstream.seen, [], 'nothing sent')
})

t.test('0.3 cards: the JSON-RPC url from additionalInterfaces, and cards that are neither', async (t) => {
  const base = { name: 'L', protocolVersion: '0.3.0', capabilities: {} }
  const viaAdditional = parseUpstreamCard('l', 'http://u.example/.well-known/agent-card.json',
    JSON.stringify({ ...base, url: 'http://u.example/rest', preferredTransport: 'HTTP+JSON', additionalInterfaces: [null, { transport: 'GRPC', url: 'x' }, { transport: 'JSONRPC', url: '/rpc' }] }))
  t.strictSame([viaAdditional.endpoint, viaAdditional.protocolVersion], ['http://u.example/rpc', '0.3'])
  const bare = parseUpstreamCard('l', 'http://u.example/.well-known/agent-card.json', JSON.stringify({ ...base, url: 'http://u.example/a2a', additionalInterfaces: 'x' }))
  t.strictSame([bare.endpoint, bare.protocolVersion], ['http://u.example/a2a', '0.3'], 'no preferredTransport: JSON-RPC, 0.3\'s default')
  t.equal(bare.served.url, undefined, 'the upstream\'s endpoint fields are not served')
  for (const card of [{ ...base, url: 'http://u.example/rest', preferredTransport: 'HTTP+JSON' }, { ...base, protocolVersion: 3 }, { ...base, protocolVersion: '0.2.5', url: 'http://u.example/rpc' }, { name: 'L' }]) {
    t.throws(() => parseUpstreamCard('l', 'http://u.example/c', JSON.stringify(card)), { message: /has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1\.0, nor a 0\.3 JSON-RPC url/ })
  }
})
