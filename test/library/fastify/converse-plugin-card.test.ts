import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { converse, type ConversePluginOptions } from '../../../packages/a2a-converse/src/fastify/converse-plugin.js'
import { ASK_AGENT_SKILL } from '../../../packages/a2a-converse/src/core/card.js'
import { RoutineDeclarationError } from '../../../packages/a2a-converse/src/core/errors.js'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { CONVERSE_EXTENSION_DESCRIPTION, CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

const OTHER = { uri: 'https://example.com/ext/other/v1', required: false }
const ROUTINES: RoutineDeclaration[] = [
  {
    name: 'Book a table',
    toolName: 'book_table',
    description: 'Book a table for a date and party size.',
    exposed: true,
    slots: [
      { key: 'date', type: 'string', required: true, description: 'The date' },
      { key: 'partySize', type: 'integer', required: true, description: 'How many people' },
      { key: 'note', type: 'string', description: 'Anything else' }
    ]
  },
  { name: 'Refund', toolName: 'refund', description: 'Internal refund.', exposed: false, slots: [] },
  {
    name: 'Order status',
    toolName: 'order_status',
    description: 'Where is my order?',
    exposed: true,
    slots: [{ key: 'orderId', type: 'string', required: true, description: 'The order number' }, { key: 'express', type: 'boolean' }]
  }
]
const AGENTS: ConversePluginOptions['agents'] = [
  {
    id: 'demo',
    card: {
      name: 'Demo',
      description: 'A demo agent',
      capabilities: { streaming: true, extensions: [OTHER] },
      skills: [{ id: 'faq', name: 'FAQ', description: 'Answers questions', tags: ['faq'] }]
    },
    routines: ROUTINES
  },
  { id: 'bare', card: { name: 'Bare', description: 'No routines' } },
  { id: 'hidden', card: { name: 'Hidden', description: 'Nothing exposed', version: '2.0.0' }, routines: [ROUTINES[1]] }
]

async function build (t: Test, options: Partial<ConversePluginOptions> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: AGENTS, ...options })
  return app
}

function converseEntry (card: any) {
  return card.capabilities.extensions.find((entry: any) => entry.uri === URI)
}

t.test('the augmented card: extension entry, tools, skills', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: 'agents.example.com' } })
  t.equal(res.statusCode, 200)
  const card = res.json()
  t.equal(card.name, 'Demo')
  t.equal(card.description, 'A demo agent')
  t.equal(card.version, '1.0.0', 'default version')
  t.same(card.supportedInterfaces, [
    { url: 'http://agents.example.com/a2a/demo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://agents.example.com/a2a/demo/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }
  ])
  t.equal(card.capabilities.streaming, true, 'the card\'s own capabilities kept')
  t.same(card.capabilities.extensions[0], OTHER, 'other extensions kept')
  t.equal(card.capabilities.extensions.filter((entry: any) => entry.uri === URI).length, 1, 'the URI listed once')
  const entry = converseEntry(card)
  t.same(Object.keys(entry), ['uri', 'description', 'required', 'params'])
  t.equal(entry.description, CONVERSE_EXTENSION_DESCRIPTION)
  t.equal(entry.required, false)
  t.same(entry.params.mcp, {
    url: 'http://agents.example.com/mcp/a/demo',
    serverCardUrl: 'http://agents.example.com/mcp/a/demo/server-card'
  })
  t.equal(entry.params.mcp.serverCardUrl, `${entry.params.mcp.url as string}/server-card`)
  t.same(entry.params.tools, [
    {
      toolName: 'book_table',
      description: 'Book a table for a date and party size.',
      inputSchema: {
        type: 'object',
        properties: {
          date: { type: 'string', description: 'The date' },
          partySize: { type: 'integer', description: 'How many people' },
          note: { type: 'string', description: 'Anything else' }
        },
        required: ['date', 'partySize'],
        additionalProperties: false
      }
    },
    {
      toolName: 'order_status',
      description: 'Where is my order?',
      inputSchema: {
        type: 'object',
        properties: { orderId: { type: 'string', description: 'The order number' }, express: { type: 'boolean' } },
        required: ['orderId'],
        additionalProperties: false
      }
    }
  ], 'one per exposed routine, in declaration order')
  t.same(card.skills.map((skill: any) => skill.id), ['ask_agent', 'book_table', 'order_status', 'faq'])
  t.same(card.skills[0], ASK_AGENT_SKILL)
  t.same(card.skills.slice(1, 3).map((skill: any) => skill.id), entry.params.tools.map((tool: any) => tool.toolName),
    'a skill per exposed routine, id = toolName')
})

t.test('tools route returns the very same descriptors as the card', async (t) => {
  const app = await build(t)
  for (const agentId of ['demo', 'bare', 'hidden']) {
    const card = (await app.inject(`/a2a/${agentId}/.well-known/agent-card.json`)).json()
    const tools = await app.inject(`/api/v1/mcp/converse/tools?agentId=${agentId}`)
    t.equal(tools.statusCode, 200)
    t.same(Object.keys(tools.json()), ['tools'])
    t.same(tools.json().tools, converseEntry(card).params.tools, `${agentId}: card params.tools deep-equals the tools route`)
  }
  const resolved = app.converse.agents.get('demo')
  const cardObject = app.converse.cardFor('demo', { protocol: 'http', host: 'x' } as any) as any
  t.equal(converseEntry(cardObject).params.tools, resolved?.tools, 'same objects, same order')
  t.same((await app.inject('/api/v1/mcp/converse/tools')).json().tools, resolved?.tools.map((tool) => ({ ...tool })),
    'no agentId: the default (first) agent')
})

t.test('no exposed routine: tools [] and only ask_agent', async (t) => {
  const app = await build(t)
  for (const agentId of ['bare', 'hidden']) {
    const card = (await app.inject(`/a2a/${agentId}/.well-known/agent-card.json`)).json()
    t.same(converseEntry(card).params.tools, [])
    t.same(card.skills, [ASK_AGENT_SKILL])
    t.same((await app.inject(`/api/v1/mcp/converse/tools?agentId=${agentId}`)).json(), { tools: [] })
  }
  t.equal((await app.inject('/a2a/hidden/.well-known/agent-card.json')).json().version, '2.0.0', 'the card\'s own version kept')
})

t.test('unknown agents: 404 naming the agent', async (t) => {
  const app = await build(t)
  const card = await app.inject('/a2a/ghost/.well-known/agent-card.json')
  t.equal(card.statusCode, 404)
  t.same(card.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "ghost"' })
  const tools = await app.inject('/api/v1/mcp/converse/tools?agentId=ghost')
  t.equal(tools.statusCode, 404)
  t.equal(tools.json().message, 'unknown agent "ghost"')
  const long = await app.inject(`/api/v1/mcp/converse/tools?agentId=${'g'.repeat(500)}`)
  t.equal(long.json().message, `unknown agent "${'g'.repeat(128)}"`, 'the echoed id is bounded')
  t.equal(app.converse.cardFor('ghost', {} as any), undefined)
})

t.test('default agent card at /.well-known/agent-card.json, unless switched off', async (t) => {
  const app = await build(t)
  const res = await app.inject('/.well-known/agent-card.json')
  t.equal(res.json().name, 'Demo')
  t.same(res.json(), (await app.inject('/a2a/demo/.well-known/agent-card.json')).json())

  const off = await build(t, { defaultAgentCard: false })
  t.equal((await off.inject('/.well-known/agent-card.json')).statusCode, 404)
  const on = await build(t, { defaultAgentCard: true })
  t.equal((await on.inject('/.well-known/agent-card.json')).statusCode, 200)
})

t.test('grpcUrl: the cards list a GRPC interface, the agent as its tenant', async (t) => {
  const app = await build(t, { grpcUrl: 'grpc.example.com:443' })
  const card = (await app.inject('/a2a/demo/.well-known/agent-card.json')).json()
  t.same(card.supportedInterfaces.map((entry: Record<string, string>) => entry.protocolBinding), ['JSONRPC', 'HTTP+JSON', 'GRPC'])
  t.same(card.supportedInterfaces[2], { url: 'grpc.example.com:443', protocolBinding: 'GRPC', tenant: 'demo', protocolVersion: '1.0' })
  const without = (await (await build(t)).inject('/a2a/demo/.well-known/agent-card.json')).json()
  t.equal(without.supportedInterfaces.length, 2, 'none listed by default')
})

t.test('public URLs: from options (strings or functions) or the request', async (t) => {
  const fixed = await build(t, { publicUrl: 'https://api.radioso.ai///', mcpPublicUrl: 'https://mcp.radioso.ai' })
  const card = (await fixed.inject('/a2a/demo/.well-known/agent-card.json')).json()
  t.equal(card.supportedInterfaces[0].url, 'https://api.radioso.ai/a2a/demo', 'trailing slashes removed')
  t.same(converseEntry(card).params.mcp, { url: 'https://mcp.radioso.ai/mcp/a/demo', serverCardUrl: 'https://mcp.radioso.ai/mcp/a/demo/server-card' })

  const sameBase = await build(t, { publicUrl: 'http://localhost:3000' })
  t.same(converseEntry((await sameBase.inject('/a2a/demo/.well-known/agent-card.json')).json()).params.mcp.url,
    'http://localhost:3000/mcp/a/demo', 'mcpPublicUrl defaults to publicUrl')

  const fromFunction = await build(t, { publicUrl: (request) => `https://${request.headers['x-tenant'] as string}.example.com` })
  const tenant = (await fromFunction.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { 'x-tenant': 'acme' } })).json()
  t.equal(tenant.supportedInterfaces[0].url, 'https://acme.example.com/a2a/demo')
  t.equal(converseEntry(tenant).params.mcp.url, 'https://acme.example.com/mcp/a/demo')

  const own = await build(t, {
    agents: [{ id: 'own', card: { name: 'Own', description: 'd', supportedInterfaces: [{ url: 'https://own.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] } }]
  })
  t.same((await own.inject('/a2a/own/.well-known/agent-card.json')).json().supportedInterfaces,
    [{ url: 'https://own.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], 'a card\'s own interfaces kept')
})

t.test('cards are cached per base URL, and bounded', async (t) => {
  const app = await build(t)
  const agent = app.converse.agents.get('demo')
  const a = agent?.cardFor({ publicUrl: 'http://a', mcpPublicUrl: 'http://m' })
  t.equal(agent?.cardFor({ publicUrl: 'http://a', mcpPublicUrl: 'http://m' }), a, 'same bases: the cached card')
  t.not(agent?.cardFor({ publicUrl: 'http://b', mcpPublicUrl: 'http://m' }), a)
  for (let i = 0; i < 40; i++) {
    const res = await app.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: `host${i}.example` } })
    t.equal(res.json().supportedInterfaces[0].url, `http://host${i}.example/a2a/demo`, `host ${i}`)
  }
  const late = agent?.cardFor({ publicUrl: 'http://late', mcpPublicUrl: 'http://m' })
  t.not(agent?.cardFor({ publicUrl: 'http://late', mcpPublicUrl: 'http://m' }), late, 'past the cache limit: built each time')
  t.same(agent?.cardFor({ publicUrl: 'http://late', mcpPublicUrl: 'http://m' }), late, 'but the same content')
})

t.test('routine declaration errors at registration name the routine and the field', async (t) => {
  const cases: Array<[RoutineDeclaration[] | unknown, string, string]> = [
    [[ROUTINES[0], { ...ROUTINES[2], toolName: 'book_table' }], 'Order status', 'toolName'],
    [[{ ...ROUTINES[0], toolName: 'book a table' }], 'Book a table', 'toolName'],
    [[{ ...ROUTINES[0], slots: [{ key: 'when', type: 'datetime' }] }], 'Book a table', 'slots.when.type'],
    [[{ ...ROUTINES[0], slots: [{ key: 'when', type: 'string', required: true }] }], 'Book a table', 'slots.when.description'],
    [[{ name: 'x', description: 'd', exposed: true, slots: [] }], 'x', 'toolName'],
    ['not-an-array', '(all)', 'routines']
  ]
  for (const [routines, routine, field] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(converse, { agents: [{ id: 'a', card: { name: 'A', description: 'd' }, routines: routines as RoutineDeclaration[] }] }) },
      { name: 'RoutineDeclarationError', routine, field }, `${routine}: ${field}`)
  }
  const app = Fastify()
  t.teardown(() => app.close())
  try {
    await app.register(converse, { agents: [{ id: 'a', card: { name: 'A', description: 'd' }, routines: [{ ...ROUTINES[0], slots: [{ key: 'when', type: 'string', required: true }] }] }] })
    t.fail('should throw')
  } catch (error) {
    t.ok(error instanceof RoutineDeclarationError)
    t.equal((error as Error).message, 'routine "Book a table": slots.when.description is required for a required slot')
  }
})

t.test('plugin option errors name the option', async (t) => {
  const card = { name: 'A', description: 'd' }
  const cases: Array<[unknown, string]> = [
    [{}, 'agents'],
    [{ agents: [] }, 'agents'],
    [{ agents: 'demo' }, 'agents'],
    [{ agents: [null] }, 'agents[0]'],
    [{ agents: [{ card }] }, 'agents[0].id'],
    [{ agents: [{ id: 'has space', card }] }, 'agents[0].id'],
    [{ agents: [{ id: 'x'.repeat(129), card }] }, 'agents[0].id'],
    [{ agents: [{ id: 'a', card }, { id: 'a', card }] }, 'agents[1].id'],
    [{ agents: [{ id: 'a' }] }, 'agents[0].card'],
    [{ agents: [{ id: 'a', card: { name: 'A' } }] }, 'agents[0].card'],
    [{ agents: [{ id: 'a', card: null }] }, 'agents[0].card'],
    [{ agents: [{ id: 'a', card: { description: 'd' } }] }, 'agents[0].card'],
    [{ agents: [{ id: 'a', card }], provider: null }, 'provider'],
    [{ agents: [{ id: 'a', card }], provider: {} }, 'provider'],
    [{ agents: [{ id: 'a', card }], provider: () => ({}) }, 'provider'],
    [{ agents: [{ id: 'a', card }], providerTimeoutMs: 0 }, 'providerTimeoutMs'],
    [{ agents: [{ id: 'a', card }], providerTimeoutMs: 1.5 }, 'providerTimeoutMs'],
    [{ agents: [{ id: 'a', card }], providerTimeoutMs: 60_001 }, 'providerTimeoutMs'],
    [{ agents: [{ id: 'a', card }], providerTimeoutMs: '100' }, 'providerTimeoutMs'],
    [{ agents: [{ id: 'a', card }], publicUrl: 'ftp://x' }, 'publicUrl'],
    [{ agents: [{ id: 'a', card }], publicUrl: 'example.com' }, 'publicUrl'],
    [{ agents: [{ id: 'a', card }], publicUrl: 'https:///x' }, 'publicUrl'],
    [{ agents: [{ id: 'a', card }], publicUrl: 42 }, 'publicUrl'],
    [{ agents: [{ id: 'a', card }], mcpPublicUrl: '' }, 'mcpPublicUrl'],
    [{ agents: [{ id: 'a', card }], defaultAgentCard: 'no' }, 'defaultAgentCard'],
    [{ agents: [{ id: 'a', card }], grpcUrl: '' }, 'grpcUrl'],
    [{ agents: [{ id: 'a', card }], grpcUrl: 50051 }, 'grpcUrl']
  ]
  for (const [options, option] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(converse, options as ConversePluginOptions) },
      { name: 'InvalidOptionError', code: 'A2A_CONVERSE_INVALID_OPTION', option, message: new RegExp(`^option "${option.replace(/[[\]]/g, '\\$&')}" `) },
      `${JSON.stringify(options)?.slice(0, 80)} → ${option}`)
  }
  for (const options of [undefined, null]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(converse, options as any) }, { name: 'InvalidOptionError', option: 'agents' }, `${String(options)} options`)
  }
  // Fastify turns absent options into {}, but a string or an options function can still hand over a non-object.
  for (const options of ['agents', () => null]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(async () => { await app.register(converse, options as any) }, { name: 'InvalidOptionError', option: 'options' }, typeof options)
  }
})

t.test('valid options are accepted', async (t) => {
  const app = await build(t, { providerTimeoutMs: 60_000, publicUrl: 'http://127.0.0.1:3000', defaultAgentCard: true })
  t.equal(app.converse.defaultAgentId, 'demo')
  t.same([...app.converse.agents.keys()], ['demo', 'bare', 'hidden'])
  t.same([...(app.converse.agents.get('demo')?.declared ?? [])], [OTHER.uri, URI], 'declared: the card\'s extensions plus converse')
  t.equal(typeof app.converse.decorator.decorateResult, 'function')
  const one = await build(t, { providerTimeoutMs: 1 })
  t.ok(one.hasDecorator('converse'))
})
