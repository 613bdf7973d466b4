/**
 * Issue 45's "Done when" on the embedded database: one instance, a restart in between. Published, an agent is served
 * at once (JSON-RPC with the envelope, MCP) and still after the restart; replaced, its new routine is on the card and
 * in MCP tools/list; closed, an anonymous call is refused; unpublished, 404 — each as the operator API replies.
 */
import t from 'tap'
import { join } from 'node:path'
import { connectMcp, CLIENT_LINES } from '../fixtures/mcp-clients.js'
import { OPERATOR_KEY } from '../fixtures/conversation-gateway.js'
import { operator, shop, tracking } from '../fixtures/live-agents.js'
import { startGateway, URI, userMessage } from '../fixtures/gateway-helpers.js'

type Json = any

// Embedded starts take seconds each on a busy 2-core machine.
t.setTimeout(240_000)

/** A walk-in's JSON-RPC SendMessage with the extension: HTTP status and body. */
async function send (base: string, text: string): Promise<{ status: number, body: Json }> {
  const response = await fetch(`${base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage(text) } })
  })
  return { status: response.status, body: await response.json() }
}

const cardOf = async (base: string) => await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)
const toolsOnCard = (card: Json): string[] => card.capabilities.extensions.find((entry: Json) => entry.uri === URI).params.tools.map((tool: Json) => tool.toolName)

t.test('embedded: publish, restart, replace, close, unpublish — each served as the operator API replies', async (t) => {
  const env = { STATE: 'embedded', DATA_DIR: join(t.testdir(), 'data'), OPERATOR_API_KEY: OPERATOR_KEY, A2A_API_KEYS: 'key-a:secret-key-a-0123456789', A2A_AUTH: 'walk-in' }
  const first = await startGateway(t, env)
  t.equal((await operator(first.base, 'POST', '', shop)).status, 201)
  const answered = await send(first.base, 'Can I return an item for a refund?')
  t.match(JSON.stringify(answered.body.result), /30 days/, 'served at once')
  t.match(answered.body.result.message.metadata[URI], { answerCoverage: { coverage: 'answered' } }, 'with the envelope')
  await first.app.close()

  const second = await startGateway(t, env)
  t.equal((await cardOf(second.base)).status, 200, 'still served after the restart')
  const mcp = await connectMcp(t, `${second.base}/mcp/a/shop`, CLIENT_LINES[0])
  t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent', 'order_status'])

  t.equal((await operator(second.base, 'PUT', '/shop', { ...shop, routines: [...shop.routines, tracking] }, { 'if-match': '"1"' })).status, 200)
  t.same(toolsOnCard(await (await cardOf(second.base)).json()), ['order_status', 'track_parcel'], 'the new routine on the card')
  t.same((await mcp.listTools()).tools.map((tool) => tool.name), ['ask_agent', 'order_status', 'track_parcel'], 'and in MCP tools/list, on the same connection')

  t.equal((await operator(second.base, 'POST', '/shop/close')).status, 200)
  t.equal((await send(second.base, 'hello')).status, 401, 'closed: an anonymous call is refused')
  t.equal((await operator(second.base, 'POST', '/shop/open')).status, 200)
  t.equal((await send(second.base, 'hello')).status, 200, 'open again')

  t.equal((await operator(second.base, 'DELETE', '/shop')).status, 204)
  t.equal((await cardOf(second.base)).status, 404, 'unpublished: the card 404')
  t.equal((await send(second.base, 'hello')).status, 404, 'and the endpoint')
  await second.app.close()

  const third = await startGateway(t, env)
  t.equal((await cardOf(third.base)).status, 404, 'still gone after a restart')
})
