/**
 * Agents changed at runtime on the Fastify doors (converse.putAgent / removeAgent; docs/agents.md): a new agent is
 * served on every door (card, JSON-RPC, HTTP+JSON, gRPC over the endpoint's service, MCP, the tools route); a
 * replaced one serves its new version from the next call while a call in flight finishes on the old; its card's ETag
 * changes and a signed card is signed anew; a removed one is 404 everywhere (the default agent's well-known card too).
 * Bad options throw InvalidOptionError and change nothing.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { Message, SendMessageRequest } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor } from '@a2a-js/sdk/server'
import { serveGrpc } from 'a2a-converse/grpc'
import { converse, type ConversePluginOptions } from '../../../packages/a2a-converse/src/fastify/converse-plugin.js'
import { a2aEndpoint } from '../../../packages/a2a-converse/src/fastify/a2a-endpoint.js'
import { mcpEndpoint } from '../../../packages/a2a-converse/src/fastify/mcp-endpoint.js'
import { createSigningKey } from '../../../packages/a2a-converse/src/auth/signing-key.js'
import { createAuthenticator } from '../../../packages/a2a-converse/src/auth/authenticator.js'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { privatePem } from '../../fixtures/card-signing.js'
import { rawGrpcClient } from '../../fixtures/grpc.js'
import { connectMcp, CLIENT_LINES } from '../../fixtures/mcp-clients.js'

type Json = any

const V1 = { 'a2a-version': '1.0' }
const routine = (toolName: string) => ({ name: toolName, description: `Runs ${toolName}`, exposed: true, toolName, slots: [{ key: 'order', type: 'string' as const, description: 'the order', required: true }] })

/** Answers `<label>: <text>`, once `gate` (if any) opens: a call held in flight. */
function labelled (label: string, gate?: Promise<void>): AgentExecutor {
  return {
    async execute (context, bus) {
      await gate
      const text = context.userMessage.parts.map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
      bus.publish(AgentEvent.message(Message.fromJSON({ messageId: `${label}-${context.userMessage.messageId}`, contextId: context.contextId, role: 'ROLE_AGENT', parts: [{ text: `${label}: ${text}` }] })))
      bus.finished()
    },
    async cancelTask () {}
  }
}

interface Built { app: FastifyInstance, base: string }

async function build (t: Test, options: Partial<ConversePluginOptions> = {}): Promise<Built> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'The demo' } }], publicUrl: 'http://gateway.test', ...options })
  await app.register(a2aEndpoint, {
    agents: [{ id: 'demo', executor: messageExecutor(), access: 'walk-in' }],
    authenticator: createAuthenticator({ apiKeys: [{ callerId: 'alice', key: 'alice-key-0123456789abcdef' }] })
  })
  await app.register(mcpEndpoint)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

function send (app: FastifyInstance, agent: string, text: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `/a2a/${agent}`,
    headers: { 'content-type': 'application/json', ...V1, 'a2a-extensions': URI, ...headers },
    payload: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } } }
  })
}

const replyText = (response: { json: () => Json }): string => response.json().result?.message?.parts?.[0]?.text

t.test('a new agent is served on every door; replaced, the next call gets the new version while one in flight finishes on the old', async (t) => {
  const { app, base } = await build(t)
  t.equal((await app.inject('/a2a/live/.well-known/agent-card.json')).statusCode, 404)
  let open!: () => void
  const gate = new Promise<void>((resolve) => { open = resolve })
  app.converse.putAgent({ id: 'live', card: { name: 'Live', description: 'Published at runtime' }, routines: [routine('order_status')], executor: labelled('v1', gate), access: 'walk-in' })
  const card = await app.inject('/a2a/live/.well-known/agent-card.json')
  t.equal(card.statusCode, 200)
  t.equal(card.json().name, 'Live')
  t.same((await app.inject('/api/v1/mcp/converse/tools?agentId=live')).json().tools.map((tool: Json) => tool.toolName), ['order_status'])

  const inFlight = send(app, 'live', 'first')
  // The call has read the agent (it waits in the v1 executor) before the replace.
  await new Promise((resolve) => setTimeout(resolve, 50))
  app.converse.putAgent({ id: 'live', card: { name: 'Live 2', description: 'Replaced' }, routines: [routine('order_status'), routine('track_parcel')], executor: labelled('v2'), access: 'walk-in' })
  t.equal(replyText(await send(app, 'live', 'second')), 'v2: second', 'the next call: the new version')
  open()
  t.equal(replyText(await inFlight), 'v1: first', 'the call in flight: the version it started with')

  const replaced = await app.inject('/a2a/live/.well-known/agent-card.json')
  t.equal(replaced.json().name, 'Live 2')
  t.not(replaced.headers.etag, card.headers.etag, 'a new card, a new ETag')
  const rest = await app.inject({ method: 'POST', url: '/a2a/live/rest/message:send', headers: { 'content-type': 'application/json', ...V1 }, payload: { message: { messageId: 'r1', role: 'ROLE_USER', parts: [{ text: 'rest' }] } } })
  t.match(JSON.stringify(rest.json()), /v2: rest/, 'HTTP+JSON')
  const v03 = await app.inject({ method: 'POST', url: '/a2a/live', headers: { 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'o1', role: 'user', parts: [{ kind: 'text', text: 'old' }] } } } })
  t.match(JSON.stringify(v03.json()), /v2: old/, 'A2A 0.3 (no A2A-Version), translated')

  const door = await serveGrpc({ service: app.converse.a2aServices.get('demo') as never, port: 0, host: '127.0.0.1' })
  t.teardown(() => door.close())
  const grpc = await rawGrpcClient(t, `127.0.0.1:${door.port}`).unary('sendMessage', SendMessageRequest.fromJSON({ tenant: 'live', message: { messageId: 'g1', role: 'ROLE_USER', parts: [{ text: 'grpc' }] } }), V1)
  t.match(JSON.stringify(grpc.response), /v2: grpc/, 'gRPC over the endpoint\'s service, by tenant')

  const mcp = await connectMcp(t, `${base}/mcp/a/live`, CLIENT_LINES[0])
  t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent', 'order_status', 'track_parcel'])
  app.converse.putAgent({ id: 'live', card: { name: 'Live 3', description: 'Fewer tools' }, executor: labelled('v3'), access: 'walk-in' })
  t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent'], 'the same MCP connection follows')
  const unknown = await mcp.callTool({ name: 'track_parcel', arguments: { order: '1' } }).catch((error: Error) => error)
  t.match(String((unknown as Json).message ?? JSON.stringify(unknown)), /Unknown tool|track_parcel/, 'a tool dropped by the replace is unknown')

  t.equal(app.converse.removeAgent('live'), true)
  t.equal(app.converse.removeAgent('live'), false, 'removed once')
  t.equal((await app.inject('/a2a/live/.well-known/agent-card.json')).statusCode, 404)
  t.equal((await send(app, 'live', 'gone')).statusCode, 404)
  t.equal((await app.inject('/api/v1/mcp/converse/tools?agentId=live')).statusCode, 404)
  t.equal((await fetch(`${base}/mcp/a/live`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404)
  t.equal(app.converse.a2aServices.has('live'), false)
})

t.test('access: an agent put as authenticated asks for a caller; put again as a walk-in, it does not', async (t) => {
  const { app } = await build(t)
  app.converse.putAgent({ id: 'shop', card: { name: 'Shop', description: 'Shop' }, executor: labelled('v1'), access: 'authenticated' })
  t.equal((await send(app, 'shop', 'hi')).statusCode, 401)
  t.equal((await send(app, 'shop', 'hi', { authorization: 'Bearer alice-key-0123456789abcdef' })).statusCode, 200)
  app.converse.putAgent({ id: 'shop', card: { name: 'Shop', description: 'Shop' }, executor: labelled('v2'), access: 'walk-in' })
  t.equal(replyText(await send(app, 'shop', 'hi')), 'v2: hi')
})

t.test('the default agent removed: its well-known card is 404 (no other agent takes its place)', async (t) => {
  const { app } = await build(t)
  app.converse.putAgent({ id: 'other', card: { name: 'Other', description: 'Other' }, executor: labelled('o'), access: 'walk-in' })
  t.equal(app.converse.removeAgent('demo'), true)
  t.equal((await app.inject('/.well-known/agent-card.json')).statusCode, 404)
  t.equal((await app.inject('/a2a/other/.well-known/agent-card.json')).statusCode, 200)
})

t.test('a signed card is signed anew when the agent changes', async (t) => {
  const { app } = await build(t, { cardSigning: createSigningKey({ privateKey: privatePem('ES256'), kid: 'k1' }) })
  app.converse.putAgent({ id: 'live', card: { name: 'One', description: 'd' }, executor: labelled('v1'), access: 'walk-in' })
  const first = (await app.inject('/a2a/live/.well-known/agent-card.json')).json()
  app.converse.putAgent({ id: 'live', card: { name: 'Two', description: 'd' }, executor: labelled('v2'), access: 'walk-in' })
  const second = (await app.inject('/a2a/live/.well-known/agent-card.json')).json()
  t.equal(second.name, 'Two')
  t.not(second.signatures[0].signature, first.signatures[0].signature)
})

t.test('bad options throw and change nothing; an agent whose routine takes ask_agent is not on the MCP door', async (t) => {
  const { app, base } = await build(t)
  app.converse.putAgent({ id: 'live', card: { name: 'Live', description: 'd' }, executor: labelled('v1'), access: 'walk-in' })
  t.throws(() => { app.converse.putAgent({ id: 'live', card: { name: 'Live 2', description: 'd' }, executor: {} as never, access: 'walk-in' }) }, InvalidOptionError)
  t.equal((await app.inject('/a2a/live/.well-known/agent-card.json')).json().name, 'Live', 'the version before stays')
  t.equal(replyText(await send(app, 'live', 'x')), 'v1: x')
  t.throws(() => { app.converse.putAgent({ id: 'fresh', card: { name: 'Fresh', description: 'd' }, executor: {} as never, access: 'walk-in' }) }, InvalidOptionError)
  t.equal((await app.inject('/a2a/fresh/.well-known/agent-card.json')).statusCode, 404, 'a new one is not declared')
  t.throws(() => { app.converse.putAgent({ id: 'bad id', card: { name: 'x', description: 'd' }, executor: labelled('x'), access: 'walk-in' }) }, InvalidOptionError)
  t.throws(() => { app.converse.extension.putAgent(null as never) }, InvalidOptionError)
  const service = app.converse.a2aServices.get('demo') as NonNullable<ReturnType<typeof app.converse.a2aServices.get>>
  t.throws(() => { service.putAgent('undeclared', {} as never) }, { name: 'InvalidOptionError', message: /not an agent declared/ })
  t.throws(() => { service.putAgent('live', {} as never, {} as never) }, { name: 'InvalidOptionError', message: /authenticator/ })
  t.equal(service.removeAgent('undeclared'), false)

  app.converse.putAgent({ id: 'clash', card: { name: 'Clash', description: 'd' }, routines: [routine('ask_agent')], executor: labelled('c'), access: 'walk-in' })
  t.equal((await send(app, 'clash', 'x')).statusCode, 200, 'served over A2A')
  t.equal((await fetch(`${base}/mcp/a/clash`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404, 'not on the MCP door')
})

t.test('putAgent needs an a2aEndpoint', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }] })
  await app.ready()
  t.throws(() => { app.converse.putAgent({ id: 'x', card: { name: 'X', description: 'd' }, executor: labelled('x'), access: 'walk-in' }) }, { name: 'InvalidOptionError', message: /a2aEndpoint/ })
  t.equal(app.converse.agents.has('x'), false)
  t.equal(app.converse.removeAgent('x'), false)
})

t.test('an agent removed while its MCP request was on its way (after the door looked): 404 as for any unknown agent', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }] })
  await app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }] })
  // Runs after the MCP door's own check (onRequest), before its handler.
  app.addHook('preHandler', async (request) => { if (request.url === '/mcp/a/brief') app.converse.removeAgent('brief') })
  await app.register(mcpEndpoint)
  app.converse.putAgent({ id: 'brief', card: { name: 'Brief', description: 'd' }, executor: labelled('b') })
  const response = await app.inject({
    method: 'POST',
    url: '/mcp/a/brief',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }
  })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "brief"' })
})
