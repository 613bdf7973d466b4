/**
 * Conformance, both doors: the cards and the tools route are the same on each door (routes, bodies, 404s),
 * the tools route returns the card's `params.tools`, and mounted under /v1 (Fastify `prefix` on both plugins,
 * Express mount path) the routes, the card's supportedInterfaces URL and the MCP URLs all move together.
 */
import t from 'tap'
import { SendMessageRequest, type Message } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { staticEnvelopeProvider } from 'a2a-converse'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, get, serveDoor, URI, userMessage, type Door, type DoorAgent } from '../../fixtures/doors.js'

const ROUTINES: RoutineDeclaration[] = [
  {
    name: 'Book a table',
    toolName: 'book_table',
    description: 'Book a table for a date and party size.',
    exposed: true,
    slots: [
      { key: 'date', type: 'string', required: true, description: 'The date' },
      { key: 'partySize', type: 'integer', required: true, description: 'How many people' }
    ]
  },
  { name: 'Refund', toolName: 'refund', description: 'Internal refund.', exposed: false, slots: [] }
]
const AGENTS: DoorAgent[] = [
  {
    id: 'demo',
    card: { name: 'Demo', description: 'A demo agent', capabilities: { streaming: true, extensions: [{ uri: 'https://example.com/ext/other/v1' }] } },
    routines: ROUTINES,
    executor: messageExecutor()
  },
  { id: 'bare', card: { name: 'Bare', description: 'No routines' } },
  { id: 'hidden', card: { name: 'Hidden', description: 'Nothing exposed', version: '2.0.0' }, routines: [ROUTINES[1]], executor: messageExecutor() }
]
const PATHS = [
  '/.well-known/agent-card.json',
  ...AGENTS.map((agent) => `/a2a/${agent.id}/.well-known/agent-card.json`),
  '/a2a/ghost/.well-known/agent-card.json',
  '/api/v1/mcp/converse/tools',
  ...AGENTS.map((agent) => `/api/v1/mcp/converse/tools?agentId=${agent.id}`),
  `/api/v1/mcp/converse/tools?agentId=${'g'.repeat(500)}`
]

function converseEntry (card: any) {
  return card.capabilities.extensions.find((entry: any) => entry.uri === URI)
}

/** Every card and tools reply, with the door's origin written as ORIGIN. */
async function snapshot (door: Door) {
  return await Promise.all(PATHS.map(async (path) => {
    const reply = await get(door, path)
    return [path, reply.status, reply.headers.get('content-type'), JSON.parse(reply.text.replaceAll(door.origin, 'ORIGIN'))]
  }))
}

t.test('cards and tools: the same on both doors, and the tools route is the card\'s params.tools', async (t) => {
  const doors = await Promise.all(DOORS.map((name) => serveDoor(t, name, { agents: AGENTS })))
  const [fastify, express] = await Promise.all(doors.map(snapshot))
  t.strictSame(express, fastify)
  for (const door of doors) {
    for (const agent of AGENTS) {
      const card = (await get(door, `/a2a/${agent.id}/.well-known/agent-card.json`)).json
      t.equal(card.supportedInterfaces[0].url, `${door.origin}/a2a/${agent.id}`)
      t.strictSame(converseEntry(card).params.mcp.url, `${door.origin}/mcp/a/${agent.id}`)
      t.strictSame((await get(door, `/api/v1/mcp/converse/tools?agentId=${agent.id}`)).json.tools, converseEntry(card).params.tools,
        `${door.name} ${agent.id}: tools route = card params.tools`)
    }
    t.strictSame((await get(door, '/.well-known/agent-card.json')).json, (await get(door, '/a2a/demo/.well-known/agent-card.json')).json,
      'the default card is the first agent\'s')
    t.equal((await get(door, '/a2a/ghost/.well-known/agent-card.json')).status, 404)
    t.equal((await get(door, `/api/v1/mcp/converse/tools?agentId=${'g'.repeat(500)}`)).json.message, `unknown agent "${'g'.repeat(128)}"`)
    t.equal((await call(door, 'SendMessage', { message: userMessage('x') }, { agent: 'bare' })).status, 404,
      'an agent without executor has a card but no endpoint')
  }
})

t.test('public URLs from options and the request\'s host, the same on both doors', async (t) => {
  for (const name of DOORS) {
    const fixed = await serveDoor(t, name, { agents: AGENTS, publicUrl: 'https://api.example.com//' })
    const card = (await get(fixed, '/a2a/demo/.well-known/agent-card.json')).json
    t.equal(card.supportedInterfaces[0].url, 'https://api.example.com/a2a/demo', name)
    t.equal(converseEntry(card).params.mcp.url, 'https://api.example.com/mcp/a/demo', name)
    const byHost = await serveDoor(t, name, { agents: AGENTS })
    const { request } = await import('node:http')
    const hosted = await new Promise<any>((resolve, reject) => {
      request(`${byHost.origin}/a2a/demo/.well-known/agent-card.json`, { headers: { host: 'shop.example:8443' } }, (res) => {
        let text = ''
        res.on('data', (chunk) => { text += chunk })
        res.on('end', () => resolve(JSON.parse(text)))
      }).on('error', reject).end()
    })
    t.equal(hosted.supportedInterfaces[0].url, 'http://shop.example:8443/a2a/demo', `${name}: the request's host and port`)
  }
})

t.test('both doors under /v1: routes, card URL and MCP URLs move together', async (t) => {
  const doors = await Promise.all(DOORS.map((name) => serveDoor(t, name, {
    agents: AGENTS, mount: '/v1', provider: staticEnvelopeProvider(ENVELOPE as never), userRoute: { SendMessage: { message: { messageId: 'u', role: 'ROLE_AGENT', parts: [{ text: 'mine' }] } } }
  })))
  const [fastify, express] = await Promise.all(doors.map(snapshot))
  t.strictSame(express, fastify, 'the same replies under /v1')
  for (const door of doors) {
    t.equal(door.base, `${door.origin}/v1`)
    const card = (await get(door, '/a2a/demo/.well-known/agent-card.json')).json
    t.equal(card.supportedInterfaces[0].url, `${door.origin}/v1/a2a/demo`, `${door.name}: the card's interface URL`)
    t.strictSame(converseEntry(card).params.mcp, { url: `${door.origin}/v1/mcp/a/demo`, serverCardUrl: `${door.origin}/v1/mcp/a/demo/server-card` })
    t.equal((await get(door, '/.well-known/agent-card.json')).json.name, 'Demo')
    t.equal((await get(door, '/api/v1/mcp/converse/tools')).json.tools.length, 1, 'the exposed routine')
    const sent = await call(door, 'SendMessage', { message: userMessage('x') }, { active: true })
    t.equal(sent.json.result.message.parts[0].text, 'echo: x', 'the endpoint under /v1')
    const mine = await call(door, 'SendMessage', { message: userMessage('x') }, { active: true, path: '/rpc/demo' })
    t.match(mine.json.result.message, { parts: [{ text: 'mine' }], metadata: { [URI]: { answerCoverage: ENVELOPE.answerCoverage } } }, 'the user route under /v1')
    for (const path of ['/.well-known/agent-card.json', '/a2a/demo/.well-known/agent-card.json', '/api/v1/mcp/converse/tools']) {
      t.equal((await fetch(door.origin + path)).status, 404, `${door.name}: nothing left at ${path}`)
    }
    t.equal((await fetch(`${door.origin}/a2a/demo`, { method: 'POST' })).status, 404)

    const client = await new ClientFactory().createFromUrl(door.origin, '/v1/.well-known/agent-card.json')
    const reply = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('sdk') }),
      { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }) as Message
    t.match(reply.metadata?.[URI], { answerCoverage: ENVELOPE.answerCoverage }, `${door.name}: the SDK client follows the card to /v1`)
  }
})
