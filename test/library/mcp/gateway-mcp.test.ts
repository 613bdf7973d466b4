/**
 * The MCP door of a real listening gateway (demo agent), driven by the official MCP client (`Client` +
 * `StreamableHTTPClientTransport`) connected with the URL the agent card names: tools and their schemas, ask_agent's
 * envelope, a routine through input-required to completed, conversations crossing between the MCP and A2A doors,
 * human takeover, and bad input.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { Ajv } from 'ajv'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { rpc, startGateway, URI, userMessage } from '../../fixtures/gateway-helpers.js'
import { TOOL_OUTPUT_SCHEMA } from '../../../packages/a2a-converse/src/mcp/tool-result.js'

type Json = Record<string, any>

const KEY = 'operator-key-for-the-mcp-door-test'
const AUTH = { authorization: `Bearer ${KEY}` }
const validateOutput = new Ajv({ strict: true, strictRequired: false, allErrors: true }).compile(TOOL_OUTPUT_SCHEMA)

async function connect (t: Test, url: string): Promise<Client> {
  const client = new Client({ name: 'a2a-converse-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())
  return client
}

async function cardOf (base: string, agent = 'demo'): Promise<Json> {
  return await (await fetch(`${base}/a2a/${agent}/.well-known/agent-card.json`)).json() as Json
}

function converseEntry (card: Json): Json {
  return card.capabilities.extensions.find((entry: Json) => entry.uri === URI)
}

const textOf = (result: CallToolResult): string => result.content.map((part) => part.type === 'text' ? part.text : '').join('\n')

async function a2aSend (base: string, text: string, extra: Json = {}): Promise<Json> {
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: rpc('SendMessage', { message: userMessage(text, extra) })
  })
  const body = await response.json() as Json
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error))
  return body.result
}

t.test('connect with the card URL; tools and schemas are the card\'s and the tools route\'s', async (t) => {
  const { base } = await startGateway(t)
  const card = await cardOf(base)
  const mcpUrl = converseEntry(card).params.mcp.url
  t.equal(mcpUrl, `${base}/mcp/a/demo`)
  const client = await connect(t, mcpUrl)
  t.match(client.getServerVersion(), { name: '0.0.127/demo', title: card.name, version: card.version })
  t.ok(client.getServerCapabilities()?.tools, 'the server announces tools')

  const { tools } = await client.listTools()
  t.same(tools.map((tool) => tool.name), ['ask_agent', ...converseEntry(card).params.tools.map((tool: Json) => tool.toolName)])
  const route = await (await fetch(`${base}/api/v1/mcp/converse/tools?agentId=demo`)).json() as Json
  for (const declared of converseEntry(card).params.tools) {
    const served = tools.find((tool) => tool.name === declared.toolName)!
    t.strictSame(served.inputSchema, declared.inputSchema, `${declared.toolName}: inputSchema is the card's`)
    t.strictSame(served.inputSchema, route.tools.find((tool: Json) => tool.toolName === declared.toolName).inputSchema,
      `${declared.toolName}: inputSchema is the tools route's`)
    t.equal(served.description, declared.description)
    t.strictSame(served.outputSchema, JSON.parse(JSON.stringify(TOOL_OUTPUT_SCHEMA)))
  }
  const ask = tools[0]
  t.same(ask.inputSchema.required, ['message'])
  t.strictSame(ask.outputSchema, JSON.parse(JSON.stringify(TOOL_OUTPUT_SCHEMA)))
})

t.test('ask_agent: the returns answer with its envelope, validated by the client against the output schema', async (t) => {
  const { base } = await startGateway(t)
  const client = await connect(t, `${base}/mcp/a/demo`)
  const result = await client.callTool({ name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } }) as CallToolResult
  t.notOk(result.isError)
  t.match(textOf(result), /30 days/)
  const output = result.structuredContent as Json
  t.ok(validateOutput(output), 'structuredContent validates against the declared output schema')
  t.match(output, {
    author: 'agent',
    answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
    ownership: { state: 'ai_owned', suppressed: false }
  })
  t.ok(output.citations.some((citation: Json) => citation.title === 'Returns policy'), 'cites "Returns policy"')
  t.type(output.contextId, 'string')
  t.equal(output.taskId, undefined, 'a Message reply has no task')
  t.equal(output.state, undefined)
})

t.test('book_table through input-required to completed, then the same conversation over A2A', async (t) => {
  const { base } = await startGateway(t)
  const client = await connect(t, `${base}/mcp/a/demo`)
  const first = await client.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table' } }) as CallToolResult
  const started = first.structuredContent as Json
  t.equal(started.state, 'TASK_STATE_INPUT_REQUIRED')
  t.match(started.routine, { toolName: 'book_table', status: 'waiting_for_input' })
  t.same(started.routine.pendingInput.map((slot: Json) => slot.key), ['date', 'partySize', 'notes'])

  const second = await client.callTool({
    name: 'ask_agent', arguments: { message: 'date=2026-12-24, partySize=four', taskId: started.taskId }
  }) as CallToolResult
  const waiting = second.structuredContent as Json
  t.equal(waiting.taskId, started.taskId, 'the taskId carries the routine on')
  t.equal(waiting.state, 'TASK_STATE_INPUT_REQUIRED')
  t.match(textOf(second), /partySize must be an integer/)

  const third = await client.callTool({ name: 'ask_agent', arguments: { message: '4', taskId: started.taskId } }) as CallToolResult
  const done = third.structuredContent as Json
  t.equal(done.state, 'TASK_STATE_COMPLETED')
  t.match(done.routine, { toolName: 'book_table', status: 'completed' })
  t.ok(validateOutput(done))

  // The conversation continues at the A2A door with the contextId MCP returned: same agent, same state.
  const task = await a2aSend(base, 'I would like to book a table', { contextId: done.contextId })
  t.equal(task.task.contextId, done.contextId)
  t.equal(task.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  // And back: the MCP door continues the task A2A opened.
  const back = await client.callTool({
    name: 'ask_agent', arguments: { message: 'date=2026-12-31, partySize=2', contextId: done.contextId }
  }) as CallToolResult
  t.equal((back.structuredContent as Json).contextId, done.contextId)
  t.equal((back.structuredContent as Json).state, 'TASK_STATE_COMPLETED', 'the routine A2A started completes over MCP')
})

t.test('a routine tool is the typed routine call: started, not_started as a readable tool error', async (t) => {
  const { base } = await startGateway(t)
  const client = await connect(t, `${base}/mcp/a/demo`)
  const booked = await client.callTool({ name: 'book_table', arguments: { date: '2026-12-31', partySize: 2 } }) as CallToolResult
  t.notOk(booked.isError)
  t.match(booked.structuredContent, { invocation: { toolName: 'book_table', outcome: 'started' }, routine: { status: 'completed' } })

  const refused = await client.callTool({ name: 'book_table', arguments: { date: '2026-12-31', partySize: 'two' } }) as CallToolResult
  t.equal(refused.isError, true, 'arguments failing the schema are a tool error')
  t.match(refused.structuredContent, { invocation: { toolName: 'book_table', outcome: 'not_started' } })
  t.match(textOf(refused), /partySize/)

  await t.rejects(client.callTool({ name: 'nope', arguments: {} }), { code: -32602, message: /Unknown tool: nope/ })
  const empty = await client.callTool({ name: 'ask_agent', arguments: { message: '' } }) as CallToolResult
  t.equal(empty.isError, true)
  t.match(textOf(empty), /message must be a non-empty string/)
  const badId = await client.callTool({ name: 'ask_agent', arguments: { message: 'hi', taskId: 7 } }) as CallToolResult
  t.match(textOf(badId), /taskId must be a non-empty string/)
})

t.test('a routine tool continues a conversation named in _meta: reentered, then a second routine in it', async (t) => {
  const { base } = await startGateway(t)
  const client = await connect(t, `${base}/mcp/a/demo`)
  const opened = (await client.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table' } }) as CallToolResult).structuredContent as Json
  t.match(opened.routine, { toolName: 'book_table', status: 'waiting_for_input' })
  const meta = { 'ai.radioso/conversation': { contextId: opened.contextId } }

  const booked = await client.callTool({ name: 'book_table', arguments: { date: '2026-12-24', partySize: 3 }, _meta: meta }) as CallToolResult
  t.notOk(booked.isError)
  t.match(booked.structuredContent, { invocation: { toolName: 'book_table', outcome: 'reentered' }, routine: { status: 'completed' }, contextId: opened.contextId })

  const refund = await client.callTool({ name: 'request_refund', arguments: { orderId: 'A-1042' }, _meta: meta }) as CallToolResult
  t.notOk(refund.isError)
  t.match(refund.structuredContent, {
    invocation: { toolName: 'request_refund', outcome: 'started' },
    routine: { status: 'waiting_for_approval' },
    contextId: opened.contextId,
    state: 'TASK_STATE_INPUT_REQUIRED'
  })
  const approved = await client.callTool({ name: 'ask_agent', arguments: { message: 'yes', taskId: (refund.structuredContent as Json).taskId } }) as CallToolResult
  t.match(approved.structuredContent, { routine: { toolName: 'request_refund', status: 'completed' }, state: 'TASK_STATE_COMPLETED' })

  const bad = await client.callTool({ name: 'book_table', arguments: {}, _meta: { 'ai.radioso/conversation': 'c-1' } }) as CallToolResult
  t.equal(bad.isError, true)
  t.match(textOf(bad), 'Invalid arguments for book_table: _meta["ai.radioso/conversation"].must be an object')
  const badId = await client.callTool({ name: 'book_table', arguments: {}, _meta: { 'ai.radioso/conversation': { taskId: '' } } }) as CallToolResult
  t.match(textOf(badId), '_meta["ai.radioso/conversation"].taskId must be a non-empty string')
})

t.test('a retry over MCP: the same messageId gets the first reply back, other content is a tool error, nothing runs twice', async (t) => {
  const { base } = await startGateway(t)
  const client = await connect(t, `${base}/mcp/a/demo`)
  const contextId = randomUUID()
  const asked = { message: 'How long do I have to return an order?', contextId, messageId: randomUUID() }
  const first = await client.callTool({ name: 'ask_agent', arguments: asked }) as CallToolResult
  t.notOk(first.isError)
  t.strictSame(await client.callTool({ name: 'ask_agent', arguments: asked }), first, 'ask_agent: the first reply, as it was')
  const changed = await client.callTool({ name: 'ask_agent', arguments: { ...asked, message: 'Where is my parcel?' } }) as CallToolResult
  t.equal(changed.isError, true, 'the same messageId with other content')
  t.match(textOf(changed), /-32602.*messageId/s)

  const meta = { 'ai.radioso/conversation': { contextId, messageId: randomUUID() } }
  const booking = { name: 'book_table', arguments: { date: '2026-12-31', partySize: 2 }, _meta: meta }
  const booked = await client.callTool(booking) as CallToolResult
  t.match(booked.structuredContent, { invocation: { outcome: 'started' }, routine: { status: 'completed' } })
  t.strictSame(await client.callTool(booking), booked, 'a routine tool retried through _meta: the first reply')
  const listed = await (await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: rpc('ListTasks', { contextId })
  })).json() as Json
  t.equal(listed.result.totalSize, 1, 'one booking: nothing ran twice')
})

t.test('A2A errors are tool errors naming the code; human takeover over MCP', async (t) => {
  const { base } = await startGateway(t, { OPERATOR_API_KEY: KEY })
  const client = await connect(t, `${base}/mcp/a/demo`)
  const unknownTask = await client.callTool({ name: 'ask_agent', arguments: { message: 'hello', taskId: 'no-such-task' } }) as CallToolResult
  t.equal(unknownTask.isError, true)
  t.match(textOf(unknownTask), /^A2A error -32001: /)

  const opened = (await client.callTool({ name: 'ask_agent', arguments: { message: 'Where is my parcel?' } }) as CallToolResult).structuredContent as Json
  const takeover = await fetch(`${base}/api/v1/agents/demo/conversations/${opened.contextId}/takeover`, { method: 'POST', headers: AUTH })
  t.equal(takeover.status, 200)
  const held = await client.callTool({ name: 'ask_agent', arguments: { message: 'Can a person help me?', contextId: opened.contextId } }) as CallToolResult
  t.match(held.structuredContent, { ownership: { state: 'human_owned', suppressed: true }, state: 'TASK_STATE_WORKING' })
  t.ok(validateOutput(held.structuredContent))

  const reply = await fetch(`${base}/api/v1/agents/demo/conversations/${opened.contextId}/messages`, {
    method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Hi, Sam here.' })
  })
  t.equal(reply.status, 201)
  // The person's reply is the task's status message now: an A2A GetTask shows it with author human.
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: rpc('GetTask', { id: (held.structuredContent as Json).taskId })
  })
  const task = (await response.json() as Json).result
  t.match(task.status.message.metadata[URI], { author: 'human' })
})

t.test('bad input: unknown agent, GET and DELETE, malformed JSON-RPC, oversized body', async (t) => {
  const { base } = await startGateway(t, { BODY_LIMIT: '2048' })
  const post = (body: string, path = 'demo', headers: Json = {}) => fetch(`${base}/mcp/a/${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body
  })
  const unknown = await post('{}', 'nobody')
  t.equal(unknown.status, 404)
  t.match(await unknown.json(), { statusCode: 404, message: 'unknown agent "nobody"' })
  t.equal((await fetch(`${base}/mcp/a/nobody/server-card`)).status, 404)

  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(`${base}/mcp/a/demo`, { method })
    t.equal(response.status, 405, `${method} is not allowed (stateless)`)
    t.equal(response.headers.get('allow'), 'POST')
    t.match(await response.json(), { jsonrpc: '2.0', error: { code: -32000 }, id: null })
  }
  const plain = await post('hello', 'demo', { 'content-type': 'text/plain' })
  t.equal(plain.status, 415, 'another media type: the transport refuses it')
  t.match(await plain.json(), { error: { code: -32000, message: /Content-Type must be application\/json/ } })
  const notJson = await post('{not json')
  t.equal(notJson.status, 400)
  t.match(await notJson.json(), { error: { code: -32700 } })
  const notRpc = await post('{"hello":"world"}')
  t.equal(notRpc.status, 400)
  t.match(await notRpc.json(), { error: { code: -32600, message: 'Bad Request: the request body is not a valid JSON-RPC message' } }, 'the SDK\'s classification answers')
  const tooLarge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(4096) } }))
  t.equal(tooLarge.status, 413)
  t.match(await tooLarge.json(), { jsonrpc: '2.0', error: { code: -32000, message: 'Payload Too Large: Request body must not exceed 2048 bytes' }, id: null })
  const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'demo', { 'x-request-id': 'mcp-req-1' })
  t.equal(response.status, 200)
  t.equal(response.headers.get('x-request-id'), 'mcp-req-1', 'the gateway\'s request id survives the hijack')
})
