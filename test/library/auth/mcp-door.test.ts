/**
 * The MCP door takes the same credentials and keeps the same isolation as the A2A door (a gateway requiring API
 * keys and JWTs, the official MCP client): without a valid credential every MCP request is 401 with the A2A door's
 * challenge and body; a caller's conversation and tasks are its own whichever door it uses, and nobody else's —
 * on every client line (the v2 client on 2026-07-28, the v1 client on 2025-11-25 and 2025-03-26).
 */
import t, { type Test } from 'tap'
import { CLIENT_LINES, connectMcp, lineName, MODERN_REVISION, type ClientLine, type McpTestClient } from '../../fixtures/mcp-clients.js'
import express from 'express'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAuthenticator } from '../../../packages/a2a-converse/src/auth/authenticator.js'
import { converseRouter } from 'a2a-converse/express'
import { ALICE_KEY, API_KEYS, AUDIENCE, BOB_KEY, call, identityProvider, ISSUER } from '../../fixtures/auth.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'

type Json = Record<string, any>

const provider = await identityProvider(t)
const { base } = await startGateway(t, {
  A2A_API_KEYS: API_KEYS, A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE
})

async function connect (t: Test, url: string, credential?: string, line: ClientLine = CLIENT_LINES[0]): Promise<McpTestClient> {
  const headers: Record<string, string> = credential === undefined ? {} : { authorization: `Bearer ${credential}` }
  return await connectMcp(t, url, line, { headers })
}

/** The 401 as each client line reports it: the v1 client's error code, the v2 client's HTTP status. */
const UNAUTHORIZED = (line: ClientLine) => line.revision === MODERN_REVISION ? { message: /401/ } : { code: 401 }

for (const line of CLIENT_LINES) {
  t.test(`${lineName(line)}: without a valid credential the client cannot even connect`, async (t) => {
    await t.rejects(connect(t, `${base}/mcp/a/demo`, undefined, line), UNAUTHORIZED(line))
    await t.rejects(connect(t, `${base}/mcp/a/demo`, 'not-a-key-of-anyone-at-all', line), UNAUTHORIZED(line))
    await t.rejects(connect(t, `${base}/mcp/a/demo`, await provider.token('carol', { aud: 'other' }), line), UNAUTHORIZED(line), 'a token for another audience')
  })
}

t.test('without a valid credential the MCP door refuses every request: 401, the A2A door\'s challenge and body', async (t) => {
  const legacy = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }
  const modern = {
    ...legacy,
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {}
      }
    }
  }
  for (const [body, version] of [[legacy, '2025-11-25'], [modern, MODERN_REVISION]] as const) {
    const response = await fetch(`${base}/mcp/a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version, 'mcp-method': 'tools/list' },
      body: JSON.stringify(body)
    })
    t.equal(response.status, 401, version)
    t.equal(response.headers.get('www-authenticate'), 'Bearer realm="a2a"')
    t.match(await response.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, data: [{ reason: 'UNAUTHENTICATED' }] } })
  }
})

for (const line of CLIENT_LINES) {
  t.test(`${lineName(line)}: a caller's conversation is its own at both doors; another caller cannot reach it`, async (t) => {
    const alice = await connect(t, `${base}/mcp/a/demo`, ALICE_KEY, line)
    const started = (await alice.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table' } })).structuredContent as Json
    t.equal(started.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal((await call(base, 'GetTask', { id: started.taskId }, ALICE_KEY)).body.result.id, started.taskId, 'Alice sees her MCP task at the A2A door')
    t.equal((await call(base, 'GetTask', { id: started.taskId }, BOB_KEY)).body.error.code, -32001, 'Bob does not')

    const bob = await connect(t, `${base}/mcp/a/demo`, BOB_KEY, line)
    const bobs = await bob.callTool({ name: 'ask_agent', arguments: { message: 'date=2026-12-24', taskId: started.taskId } })
    t.equal(bobs.isError, true, "Bob cannot continue Alice's task over MCP")
    t.match(JSON.stringify(bobs.content), /-32001|not found/i)
    const fresh = (await bob.callTool({ name: 'ask_agent', arguments: { message: 'What are your opening hours?', contextId: started.contextId } })).structuredContent as Json
    t.equal(fresh.contextId, started.contextId, "Alice's contextId is a fresh conversation of Bob's")
    t.not(fresh.state, 'TASK_STATE_INPUT_REQUIRED')

    const carol = await connect(t, `${base}/mcp/a/demo`, await provider.token('alice'), line)
    const continued = (await carol.callTool({ name: 'ask_agent', arguments: { message: 'date=2026-12-24', taskId: started.taskId } })).structuredContent as Json
    t.equal(continued.taskId, started.taskId, 'a token naming alice is Alice: her routine goes on')
    t.equal(continued.state, 'TASK_STATE_INPUT_REQUIRED')
  })
}

t.test('the Express router\'s MCP door authenticates the same way', async (t) => {
  const app = express()
  app.use(converseRouter({
    agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' }, executor: messageExecutor() }],
    authenticator: createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }] })
  }))
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/a/demo`
  await t.rejects(connect(t, url), UNAUTHORIZED(CLIENT_LINES[0]))
  const client = await connect(t, url, ALICE_KEY)
  const reply = await client.callTool({ name: 'ask_agent', arguments: { message: 'hi' } })
  t.match(JSON.stringify(reply.content), /echo: hi/)
})
