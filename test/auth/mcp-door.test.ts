/**
 * The MCP door takes the same credentials and keeps the same isolation as the A2A door (a gateway requiring API
 * keys and JWTs, the official MCP client): without a valid credential every MCP request is 401 with the A2A door's
 * challenge and body; a caller's conversation and tasks are its own whichever door it uses, and nobody else's.
 */
import t, { type Test } from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import express from 'express'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAuthenticator } from '../../src/auth/authenticator.js'
import { converseRouter } from '../../src/express.js'
import { ALICE_KEY, API_KEYS, AUDIENCE, BOB_KEY, call, identityProvider, ISSUER } from '../fixtures/auth.js'
import { messageExecutor } from '../fixtures/a2a-executors.js'
import { startGateway } from '../fixtures/gateway-helpers.js'

type Json = Record<string, any>

const provider = await identityProvider(t)
const { base } = await startGateway(t, {
  A2A_API_KEYS: API_KEYS, A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE
})

async function connect (t: Test, url: string, credential?: string): Promise<Client> {
  const client = new Client({ name: 'a2a-converse-auth-test', version: '1.0.0' })
  const headers: Record<string, string> = credential === undefined ? {} : { authorization: `Bearer ${credential}` }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  t.teardown(() => client.close())
  return client
}

t.test('without a valid credential the MCP door refuses every request: 401, the A2A door\'s challenge and body', async (t) => {
  await t.rejects(connect(t, `${base}/mcp/a/demo`), { code: 401 }, 'the official client cannot even initialize')
  await t.rejects(connect(t, `${base}/mcp/a/demo`, 'not-a-key-of-anyone-at-all'), { code: 401 })
  await t.rejects(connect(t, `${base}/mcp/a/demo`, await provider.token('carol', { aud: 'other' })), { code: 401 }, 'a token for another audience')
  const response = await fetch(`${base}/mcp/a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  })
  t.equal(response.status, 401)
  t.equal(response.headers.get('www-authenticate'), 'Bearer realm="a2a"')
  t.match(await response.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, data: [{ reason: 'UNAUTHENTICATED' }] } })
})

t.test('a caller\'s conversation is its own at both doors; another caller cannot reach it', async (t) => {
  const alice = await connect(t, `${base}/mcp/a/demo`, ALICE_KEY)
  const started = (await alice.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table' } }) as CallToolResult)
    .structuredContent as Json
  t.equal(started.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal((await call(base, 'GetTask', { id: started.taskId }, ALICE_KEY)).body.result.id, started.taskId, 'Alice sees her MCP task at the A2A door')
  t.equal((await call(base, 'GetTask', { id: started.taskId }, BOB_KEY)).body.error.code, -32001, 'Bob does not')

  const bob = await connect(t, `${base}/mcp/a/demo`, BOB_KEY)
  const bobs = await bob.callTool({ name: 'ask_agent', arguments: { message: 'date=2026-12-24', taskId: started.taskId } }) as CallToolResult
  t.equal(bobs.isError, true, "Bob cannot continue Alice's task over MCP")
  t.match(JSON.stringify(bobs.content), /-32001|not found/i)
  const fresh = (await bob.callTool({ name: 'ask_agent', arguments: { message: 'What are your opening hours?', contextId: started.contextId } }) as CallToolResult)
    .structuredContent as Json
  t.equal(fresh.contextId, started.contextId, "Alice's contextId is a fresh conversation of Bob's")
  t.not(fresh.state, 'TASK_STATE_INPUT_REQUIRED')

  const carol = await connect(t, `${base}/mcp/a/demo`, await provider.token('alice'))
  const continued = (await carol.callTool({ name: 'ask_agent', arguments: { message: 'date=2026-12-24', taskId: started.taskId } }) as CallToolResult)
    .structuredContent as Json
  t.equal(continued.taskId, started.taskId, 'a token naming alice is Alice: her routine goes on')
  t.equal(continued.state, 'TASK_STATE_INPUT_REQUIRED')
})

t.test('the Express router\'s MCP door authenticates the same way', async (t) => {
  const app = express()
  app.use(converseRouter({
    agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' }, executor: messageExecutor() }],
    authenticator: createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }] })
  }))
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/a/demo`
  await t.rejects(connect(t, url), { code: 401 })
  const client = await connect(t, url, ALICE_KEY)
  const reply = await client.callTool({ name: 'ask_agent', arguments: { message: 'hi' } }) as CallToolResult
  t.match(JSON.stringify(reply.content), /echo: hi/)
})
