/**
 * The MCP door on both doors (Fastify `mcpEndpoint`, the Express router), mounted under a path, driven by every
 * client line (test/fixtures/mcp-clients.ts: the v2 client on 2026-07-28, the v1 client on 2025-11-25 and
 * 2025-03-26) with the URL the card names: replies of any executor (a Message, a task answering with an
 * artifact), the server card (validated against the vendored SEP-2127 schema, its media type, CORS, caching, and
 * agreeing with the live serverInfo and with `server/discover`), agents without an endpoint, and a parser mounted
 * before the Express router.
 */
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { connect as connectSocket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import express from 'express'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { CLIENT_LINES, connectMcp, lineName, MODERN_REVISION, type McpTestClient } from '../../fixtures/mcp-clients.js'
import { DOORS, serveDoor, URI } from '../../fixtures/doors.js'
import { messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { bookTable } from '../../fixtures/demo-routines.js'
import { TOOL_OUTPUT_SCHEMA } from '../../../packages/a2a-converse/src/mcp/tool-result.js'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { mcpEndpoint } from 'a2a-converse/mcp'
import { converseRouter } from 'a2a-converse/express'

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const schemaText = await readFile(new URL('../../fixtures/mcp-server-card/schema.json', import.meta.url), 'utf8')
const cardAjv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
cardAjv.addSchema(JSON.parse(schemaText), 'server-card')
const validateServerCard = cardAjv.getSchema('server-card#/$defs/ServerCard')!
const validateOutput = new Ajv({ strict: true, strictRequired: false }).compile(TOOL_OUTPUT_SCHEMA)

/** The 2026-07-28 client: what the tests that are not about client lines use. */
const connect = async (t: Test, url: string): Promise<McpTestClient> => await connectMcp(t, url, CLIENT_LINES[0])

const textOf = (result: Json): string => (result.content as Json[]).map((part) => part.type === 'text' ? part.text : '').join('\n')

/** A raw 2026-07-28 request, as the v2 client sends it (headers and the `_meta` envelope). */
function modernRequest (method: string, params: Json = {}, id: number | string = 1): { headers: Record<string, string>, body: string } {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {}
  }
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': method,
      // SEP-2243: a tools/call names its tool in a header too.
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {})
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, ...params._meta } } })
  }
}

const agents = [
  { id: 'echo', card: { name: 'Echo', description: 'Echoes what it is told.' }, executor: messageExecutor(), routines: [bookTable] },
  { id: 'worker', card: { name: 'Worker', description: 'Answers with a task and an artifact.' }, executor: taskExecutor() },
  { id: 'cardonly', card: { name: 'Card only', description: 'Declared, not served.' } }
]

for (const name of DOORS) {
  for (const line of CLIENT_LINES) {
    t.test(`${name}, ${lineName(line)}: the MCP door under /v1, reached through the card's URL`, async (t) => {
      const door = await serveDoor(t, name, { agents, mount: '/v1' })
      const card = await (await fetch(`${door.base}/a2a/echo/.well-known/agent-card.json`)).json() as Json
      const mcp = card.capabilities.extensions.find((entry: Json) => entry.uri === URI).params.mcp
      t.equal(mcp.url, `${door.base}/mcp/a/echo`)
      t.equal(mcp.serverCardUrl, `${mcp.url}/server-card`)

      const client = await connectMcp(t, mcp.url, line)
      t.equal(client.revision, line.revision, 'the connection runs on the revision of the line')
      const { tools } = await client.listTools()
      t.same(tools.map((tool) => tool.name), ['ask_agent', 'book_table'])
      t.same(tools[1].inputSchema, card.capabilities.extensions.find((entry: Json) => entry.uri === URI).params.tools[0].inputSchema, 'a routine tool\'s inputSchema is the card\'s, exactly')
      const echoed = await client.callTool({ name: 'ask_agent', arguments: { message: 'hi there' } })
      t.equal(textOf(echoed), 'echo: hi there')
      t.ok(validateOutput(echoed.structuredContent))
      t.type((echoed.structuredContent as Json).contextId, 'string')
      const missing = await client.callTool({ name: 'ask_agent' })
      t.equal(missing.isError, true, 'no arguments at all: a tool error naming message')
      t.match(textOf(missing), /message must be a non-empty string/)

      // A task answering with an artifact and no status message: the artifact is the answer.
      const worker = await connectMcp(t, `${door.base}/mcp/a/worker`, line)
      const done = await worker.callTool({ name: 'ask_agent', arguments: { message: 'the report' } })
      t.equal(textOf(done), 'done: the report')
      t.match(done.structuredContent, { state: 'TASK_STATE_COMPLETED', answerCoverage: { availability: 'not_recorded' } })
      t.type((done.structuredContent as Json).taskId, 'string')

      // The server card: the draft's schema, media type, CORS and caching; and the live serverInfo agrees with it.
      const response = await fetch(mcp.serverCardUrl, { headers: { accept: 'application/mcp-server-card+json' } })
      t.equal(response.status, 200)
      t.match(response.headers.get('content-type'), /^application\/mcp-server-card\+json/)
      t.equal(response.headers.get('access-control-allow-origin'), '*')
      t.equal(response.headers.get('access-control-allow-methods'), 'GET')
      t.equal(response.headers.get('cache-control'), 'private, max-age=300', 'built from the request\'s Host (no publicUrl): private')
      const serverCard = await response.json() as Json
      t.ok(validateServerCard(serverCard), `valid against the SEP-2127 schema: ${JSON.stringify(validateServerCard.errors)}`)
      t.same(serverCard, {
        $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
        name: '1.0.0.127/echo',
        title: 'Echo',
        description: 'Echoes what it is told.',
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url: mcp.url, supportedProtocolVersions: serverCard.remotes[0].supportedProtocolVersions }]
      })
      t.ok(serverCard.remotes[0].supportedProtocolVersions.includes(line.revision), 'the card names the revision the client speaks')
      t.match(client.serverVersion(), { name: serverCard.name, title: serverCard.title, version: serverCard.version })
      const preflight = await fetch(mcp.serverCardUrl, { method: 'OPTIONS' })
      t.equal(preflight.status, 204)
      t.equal(preflight.headers.get('access-control-allow-origin'), '*')

      // An agent with a card and no endpoint has no MCP server either.
      const cardOnly = await fetch(`${door.base}/mcp/a/cardonly`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      t.equal(cardOnly.status, 404)
      t.equal((await fetch(`${door.base}/mcp/a/cardonly/server-card`)).status, 404)
    })
  }
}

/** A backend whose calls wait until their request is aborted, and say when they started and when the abort came. */
function abortRecordingBackend () {
  let markStarted!: () => void
  let markAborted!: () => void
  const started = new Promise<void>((resolve) => { markStarted = resolve })
  const aborted = new Promise<void>((resolve) => { markAborted = resolve })
  const backend: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async (_request, context) => await new Promise((_resolve, reject) => {
      context.signal.addEventListener('abort', () => { markAborted(); reject(new Error('aborted')) }, { once: true })
      markStarted()
    }),
    async * stream () {},
    toError: () => ({ code: -32603, message: 'Internal error' })
  }
  return { backend, started, aborted }
}

for (const name of DOORS) {
  for (const [modern, directToolCalls] of [[true, true], [true, false], [false, true], [false, false]]) {
    const what = `${modern ? MODERN_REVISION : '2025-11-25'}${directToolCalls ? '' : ' (no fast path)'}`
    t.test(`${name}, ${what}: a client gone mid-call aborts its A2A call; the door answers the next one`, async (t) => {
      const waiting = abortRecordingBackend()
      const door = await serveDoor(t, name, {
        directToolCalls,
        agents: [{ id: 'hang', card: { name: 'Hang', description: 'Never answers.' }, backend: waiting.backend }, agents[0]]
      })
      const controller = new AbortController()
      const legacy = {
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_agent', arguments: { message: 'wait' } } })
      }
      const request = modern ? modernRequest('tools/call', { name: 'ask_agent', arguments: { message: 'wait' } }) : legacy
      const call = fetch(`${door.base}/mcp/a/hang`, { method: 'POST', ...request, signal: controller.signal })
        .then(async (response) => await response.text())
      await waiting.started
      controller.abort()
      await t.rejects(call, { name: 'AbortError' })
      // Without the door's cancellation the backend would wait for ever (and the test for its timeout).
      await waiting.aborted
      t.pass('the A2A call the tool call made was aborted')
      const client = await connect(t, `${door.base}/mcp/a/echo`)
      const echoed = await client.callTool({ name: 'ask_agent', arguments: { message: 'still here' } })
      t.equal(textOf(echoed), 'echo: still here')
    })
  }
}

t.test('express: a client gone before its whole body was sent gets nothing; the router goes on', async (t) => {
  const door = await serveDoor(t, 'express', { agents: [agents[0]] })
  const { port } = new URL(door.origin)
  const socket = connectSocket(Number(port), '127.0.0.1')
  await once(socket, 'connect')
  socket.write('POST /mcp/a/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"')
  await new Promise((resolve) => setTimeout(resolve, 50))
  socket.destroy()
  const client = await connect(t, `${door.base}/mcp/a/echo`)
  t.equal(textOf(await client.callTool({ name: 'ask_agent', arguments: { message: 'next' } })), 'echo: next')
})

t.test('fastify: a body cut short (the client half-closed) gets Fastify\'s own 400; the door goes on', async (t) => {
  const door = await serveDoor(t, 'fastify', { agents: [agents[0]] })
  const socket = connectSocket(Number(new URL(door.origin).port), '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
  socket.end('POST /mcp/a/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"')
  await once(socket, 'close')
  t.match(received, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(received, /\r\n\r\n\{"error":"Bad Request","message":"Client Error","statusCode":400\}$/)
  const client = await connect(t, `${door.base}/mcp/a/echo`)
  t.equal(textOf(await client.callTool({ name: 'ask_agent', arguments: { message: 'next' } })), 'echo: next')
})

t.test('express: a JSON parser mounted before the router has read the body; the door takes its value', async (t) => {
  const router = converseRouter({ agents: [agents[0]] })
  const app = express()
  app.use(express.json())
  app.use(router)
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(async () => {
    await router.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const client = await connect(t, `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/a/echo`)
  const echoed = await client.callTool({ name: 'ask_agent', arguments: { message: 'parsed' } })
  t.equal(textOf(echoed), 'echo: parsed')
})

t.test('a routine whose toolName is ask_agent cannot be served over MCP: the registration names it', async (t) => {
  const clash = { ...bookTable, name: 'clash', toolName: 'ask_agent' }
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'echo', card: agents[0].card, routines: [clash] }] })
  await app.register(a2aEndpoint, { agents: [{ id: 'echo', executor: messageExecutor() }] })
  await t.rejects(async () => { await app.register(mcpEndpoint) }, { code: 'A2A_CONVERSE_INVALID_OPTION', message: /toolName "ask_agent" is the MCP door's own tool/ })
  t.throws(() => converseRouter({ agents: [{ ...agents[0], routines: [clash] }] }), { message: /toolName "ask_agent"/ })
  const bad = Fastify()
  t.teardown(() => bad.close())
  await bad.register(converse, { agents: [{ id: 'echo', card: agents[0].card }] })
  await bad.register(a2aEndpoint, { agents: [{ id: 'echo', executor: messageExecutor() }] })
  await t.rejects(async () => { await bad.register(mcpEndpoint, { bodyLimit: 0 }) }, { message: /option "bodyLimit" must be a positive integer/ })
})
