/**
 * Issue 45's "Done when", end to end on PostgreSQL: two gateway instances on one database. An agent published on A
 * is called on B within 1 s over A2A JSON-RPC, HTTP+JSON, gRPC (the official @a2a-js/sdk clients) and MCP (the
 * official client), with the envelope; replaced on A, its new routine appears in the card's `params.tools` and MCP
 * `tools/list` on both; closed, an anonymous call is refused on both; unpublished, 404 on both. B hears of each
 * change by NOTIFY (its periodic check set to an hour here); a third instance that hears nothing (a hub of its own)
 * catches up by its periodic check (AGENTS_SYNC_MS). Every wait polls with a deadline.
 */
import t from 'tap'
import { Message, SendMessageRequest, Task } from '@a2a-js/sdk'
import {
  ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, ServiceParameters, withA2AExtensions, type Client
} from '@a2a-js/sdk/client'
import { sdkGrpcClient, startGrpcGateway } from '../fixtures/grpc.js'
import { connectMcp, CLIENT_LINES } from '../fixtures/mcp-clients.js'
import { operator, shop, tracking } from '../fixtures/live-agents.js'
import { URI, userMessage } from '../fixtures/gateway-helpers.js'
import { testSchema } from '../fixtures/test-schema.js'
import { MemoryTaskEventHub } from '../../packages/a2a-converse/src/events/task-event-hub.js'

const url = process.env.TEST_DATABASE_URL

type Json = any

const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }

/** Polls `probe` until it is true; the time it took, or a failure past `ms`. */
async function within (ms: number, what: string, probe: () => Promise<boolean>): Promise<number> {
  const start = performance.now()
  for (;;) {
    if (await probe()) return performance.now() - start
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const cardOf = async (base: string, id = 'shop') => await fetch(`${base}/a2a/${id}/.well-known/agent-card.json`)
const toolsOnCard = (card: Json): string[] => (card.capabilities.extensions.find((entry: Json) => entry.uri === URI)?.params.tools ?? []).map((tool: Json) => tool.toolName)

async function sdkClients (base: string): Promise<Record<string, Client>> {
  const over = async (factory: JsonRpcTransportFactory | RestTransportFactory): Promise<Client> =>
    await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [factory] })).createFromUrl(`${base}/a2a/shop/`)
  return { 'JSON-RPC': await over(new JsonRpcTransportFactory()), 'HTTP+JSON': await over(new RestTransportFactory()), gRPC: await sdkGrpcClient(`${base}/a2a/shop/`) }
}

/** A walk-in's JSON-RPC SendMessage to the agent, without credentials: its HTTP status. */
async function anonymousStatus (base: string): Promise<number> {
  const response = await fetch(`${base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hello') } })
  })
  await response.arrayBuffer()
  return response.status
}

if (url === undefined) {
  t.test('agents live on two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)' }, async () => {})
} else {
  t.setTimeout(240_000)
  const schema = testSchema(t, url)
  const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, OPERATOR_API_KEY: 'operator-key-0123456789', A2A_API_KEYS: 'key-a:secret-key-a-0123456789', A2A_AUTH: 'walk-in' }
  const a = await startGrpcGateway(t, env)
  // B hears of changes by NOTIFY only (its periodic check an hour away); C by its periodic check only (a hub of its own).
  const b = await startGrpcGateway(t, { ...env, AGENTS_SYNC_MS: '3600000' })
  const c = await startGrpcGateway(t, { ...env, AGENTS_SYNC_MS: '200' }, { events: new MemoryTaskEventHub() })

  t.test('published on A: served on B within 1 s, over JSON-RPC, HTTP+JSON, gRPC and MCP, with the envelope', async (t) => {
    t.equal((await cardOf(b.base)).status, 404, 'not there before')
    t.equal((await operator(a.base, 'POST', '', shop)).status, 201)
    t.equal((await cardOf(a.base)).status, 200, 'A serves it as it replies')
    const took = await within(1000, 'B serves the card', async () => (await cardOf(b.base)).status === 200)
    t.ok(took <= 1000, `B served it after ${Math.round(took)} ms`)
    for (const [binding, client] of Object.entries(await sdkClients(b.base))) {
      const reply = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('Can I return an item for a refund?') }), withConverse) as Message | Task
      const message = 'parts' in reply ? reply : reply.status?.message
      t.match(JSON.stringify(message?.parts), /30 days/, `${binding}: its documents answer`)
      t.match(message?.metadata?.[URI], { answerCoverage: { coverage: 'answered' } }, `${binding}: with the envelope`)
    }
    const mcp = await connectMcp(t, `${b.base}/mcp/a/shop`, CLIENT_LINES[0])
    t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent', 'order_status'])
    const answer = await mcp.callTool({ name: 'ask_agent', arguments: { message: 'Can I return an item for a refund?' } })
    t.match(JSON.stringify(answer.content), /30 days/, 'MCP: its documents answer')
    t.match(answer.structuredContent, { answerCoverage: { coverage: 'answered' } }, 'MCP: with the envelope')
    await within(5000, 'C serves it by its periodic check', async () => (await cardOf(c.base)).status === 200)
    t.match((await operator(b.base, 'GET', '/shop')).body, { version: 1, served: 1 }, "B's list says what it serves")
  })

  t.test('replaced on A: the new routine in params.tools and MCP tools/list on both; the card ETag changes', async (t) => {
    const before = await cardOf(b.base)
    const etag = before.headers.get('etag')
    const replaced = await operator(a.base, 'PUT', '/shop', { ...shop, routines: [...shop.routines, tracking] }, { 'if-match': '"1"' })
    t.equal(replaced.status, 200)
    for (const base of [a.base, b.base]) {
      await within(1000, `${base}: the new routine on the card`, async () => toolsOnCard(await (await cardOf(base)).json()).includes('track_parcel'))
      const mcp = await connectMcp(t, `${base}/mcp/a/shop`, CLIENT_LINES[1])
      t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent', 'order_status', 'track_parcel'], 'MCP tools/list follows')
      const tools = await (await fetch(`${base}/api/v1/mcp/converse/tools?agentId=shop`)).json() as Json
      t.same(tools.tools.map((tool: Json) => tool.toolName), ['order_status', 'track_parcel'], 'the tools route follows')
    }
    t.not((await cardOf(b.base)).headers.get('etag'), etag, 'a new card, a new ETag')
  })

  t.test('closed on A: an anonymous call is refused on both; opened again, served', async (t) => {
    t.equal(await anonymousStatus(b.base), 200, 'a walk-in is served before')
    t.equal((await operator(a.base, 'POST', '/shop/close')).status, 200)
    for (const base of [a.base, b.base, c.base]) await within(base === c.base ? 5000 : 1000, `${base}: refused`, async () => await anonymousStatus(base) === 401)
    const card = await (await cardOf(b.base)).json() as Json
    t.ok(card.securitySchemes !== undefined, 'the card names how to authenticate')
    t.equal((await operator(a.base, 'POST', '/shop/open')).status, 200)
    await within(1000, 'open again on B', async () => await anonymousStatus(b.base) === 200)
  })

  t.test('unpublished on A: 404 on both, on every door', async (t) => {
    t.equal((await operator(a.base, 'DELETE', '/shop')).status, 204)
    for (const base of [a.base, b.base]) {
      await within(1000, `${base}: the card 404`, async () => (await cardOf(base)).status === 404)
      t.equal(await anonymousStatus(base), 404, 'the JSON-RPC endpoint 404')
      t.equal((await fetch(`${base}/a2a/shop/rest/message:send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404, 'HTTP+JSON 404')
      t.equal((await fetch(`${base}/mcp/a/shop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404, 'MCP 404')
      t.equal((await fetch(`${base}/api/v1/mcp/converse/tools?agentId=shop`)).status, 404, 'the tools route 404')
    }
    await within(5000, 'C: 404 by its periodic check', async () => (await cardOf(c.base)).status === 404)
    t.match((await operator(b.base, 'GET', '')).body.agents.map((agent: Json) => agent.id), ['demo'])
  })
}
