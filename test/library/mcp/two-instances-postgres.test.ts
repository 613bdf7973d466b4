/**
 * Two gateways on one PostgreSQL database behind a round-robin "load balancer" (the MCP client's fetch sends each
 * HTTP request to the other instance in turn): one MCP session (initialize, tools/list, tool calls) spreads over
 * both, because the door is stateless, and a routine started on one instance is carried on by the other — over MCP
 * and over A2A alike. Runs when TEST_DATABASE_URL is set.
 */
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { rpc, startGateway, URI, userMessage } from '../../fixtures/gateway-helpers.js'
import { testSchema } from '../../fixtures/test-schema.js'

type Json = Record<string, any>

const url = process.env.TEST_DATABASE_URL

t.test('one MCP session over two instances on PostgreSQL', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  const schema = testSchema(t, url as string)
  const env = { DATABASE_URL: url as string, DATABASE_SCHEMA: schema }
  const a = await startGateway(t, env)
  const b = await startGateway(t, env)

  // The balancer: every HTTP request goes to the next instance; the client only knows instance a's URL.
  const hits: string[] = []
  let turn = 0
  const balanced: typeof fetch = async (input, init) => {
    const target = [a.base, b.base][turn++ % 2]
    hits.push(target)
    return await fetch(String(input).replace(a.base, target), init)
  }
  const client = new Client({ name: 'balanced', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${a.base}/mcp/a/demo`), { fetch: balanced }))
  t.teardown(() => client.close())

  const { tools } = await client.listTools()
  t.ok(tools.some((tool) => tool.name === 'book_table'))
  const first = (await client.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table' } }) as CallToolResult).structuredContent as Json
  t.equal(first.state, 'TASK_STATE_INPUT_REQUIRED')
  const second = (await client.callTool({ name: 'ask_agent', arguments: { message: 'date=2026-12-24', taskId: first.taskId } }) as CallToolResult).structuredContent as Json
  t.equal(second.taskId, first.taskId, 'the other instance found the task')
  t.same(second.routine.pendingInput.map((slot: Json) => slot.key), ['partySize', 'notes'], 'and the date the first took')
  t.ok(hits.includes(a.base) && hits.includes(b.base), 'requests landed on both instances')

  // The same task finishes over A2A, on whichever instance.
  for (const base of [a.base, b.base]) {
    const response = await fetch(`${base}/a2a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      body: rpc('GetTask', { id: first.taskId })
    })
    t.equal((await response.json() as Json).result.status.state, 'TASK_STATE_INPUT_REQUIRED', 'both instances see the task')
  }
  const done = await fetch(`${b.base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: rpc('SendMessage', { message: userMessage('4', { taskId: first.taskId }) })
  })
  t.equal((await done.json() as Json).result.task.status.state, 'TASK_STATE_COMPLETED')
  const after = (await client.callTool({ name: 'ask_agent', arguments: { message: 'hello again', contextId: first.contextId } }) as CallToolResult).structuredContent as Json
  t.equal(after.contextId, first.contextId, 'the conversation goes on over MCP after A2A finished the routine')
})
