/** Mounted under a prefix, and answered by a backend of the user's own. */
import t from 'tap'
import Fastify from 'fastify'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { messageExecutor } from '../../fixtures/a2a-executors.js'

const routines = [{
  name: 'Book a table',
  toolName: 'book_table',
  exposed: true,
  description: 'Book a table.',
  slots: [{ key: 'date', type: 'string' as const, required: true, description: 'The date.' }]
}]

t.test('both plugins under /v1: routes, the card\'s URLs and the tools move together', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' }, routines }], prefix: '/v1' })
  await app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }], prefix: '/v1' })
  const host = { host: 'gw.example' }
  const card = (await app.inject({ url: '/v1/a2a/demo/.well-known/agent-card.json', headers: host })).json()
  t.equal(card.supportedInterfaces[0].url, 'http://gw.example/v1/a2a/demo')
  const entry = card.capabilities.extensions.find((extension: { uri: string }) => extension.uri === CONVERSE_EXTENSION_URI)
  t.equal(entry.params.mcp.url, 'http://gw.example/v1/mcp/a/demo')
  t.same((await app.inject({ url: '/v1/.well-known/agent-card.json', headers: host })).json(), card, 'the default agent\'s card under the prefix')
  t.same((await app.inject('/v1/api/v1/mcp/converse/tools?agentId=demo')).json().tools, entry.params.tools)
  t.equal((await app.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 404, 'nothing left at the root')
  const sent = await app.inject({
    method: 'POST',
    url: new URL(card.supportedInterfaces[0].url).pathname,
    headers: { 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI },
    payload: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }
  })
  t.equal(sent.statusCode, 200)
  t.equal(sent.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  t.ok(sent.json().result.message, 'the endpoint answers at the card\'s URL')
  t.equal((await app.inject({ method: 'POST', url: '/a2a/demo', payload: {} })).statusCode, 404)
})

t.test('an agent answered by a backend instead of an executor', async (t) => {
  const backend: A2ABackend = {
    facts: { capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async (request, context) => ({ message: { messageId: 'b1', role: 'ROLE_AGENT', parts: [{ text: `${request.method} for ${context.agentId}` }] } }),
    stream: () => { throw new Error('not streaming') },
    toError: () => ({ code: -32603, message: 'Internal error' })
  }
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'up', card: { name: 'Up', description: 'u' } }] })
  await app.register(a2aEndpoint, { agents: [{ id: 'up', backend }] })
  const sent = await app.inject({
    method: 'POST',
    url: '/a2a/up',
    headers: { 'a2a-version': '1.0' },
    payload: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }
  })
  t.strictSame(sent.json().result.message.parts, [{ text: 'SendMessage for up' }])
})

t.test('rootAgentId: the agent also answers at POST <prefix>/', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }], prefix: '/v1' })
  await app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }], prefix: '/v1', rootAgentId: 'demo' })
  const payload = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }
  const headers = { 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI }
  const atRoot = await app.inject({ method: 'POST', url: '/v1', headers, payload })
  t.equal(atRoot.statusCode, 200)
  t.equal(atRoot.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  t.strictSame(atRoot.json().result.message.parts, [{ text: 'echo: hi' }])
  const invalid = await app.inject({ method: 'POST', url: '/v1', headers: { ...headers, 'content-type': 'application/json' }, payload: '{' })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().error.code, -32700, 'body errors at the root are JSON-RPC errors too')

  const bad = Fastify()
  t.teardown(() => bad.close())
  await bad.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }] })
  await t.rejects(async () => await bad.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }], rootAgentId: 'other' }),
    { name: 'InvalidOptionError', message: 'option "rootAgentId" must name one of the agents served here' })
})
