/**
 * How a SendMessage reply becomes an MCP tool result, for replies the demo agent never gives: a task with neither a
 * status message nor an artifact, a reply without ids, an envelope that fails its schema, data parts; and server
 * identities from unusual cards and hosts. Every structuredContent validates against the declared output schema.
 */
import t from 'tap'
import { Ajv } from 'ajv'
import { TOOL_OUTPUT_SCHEMA, toolResultOf } from '../../../packages/a2a-converse/src/mcp/tool-result.js'
import { serverIdentity } from '../../../packages/a2a-converse/src/mcp/server-card.js'
import { invalidParams, taskNotFound } from '../../../packages/a2a-converse/src/protocol/errors.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

const validate = new Ajv({ strict: true, strictRequired: false }).compile(TOOL_OUTPUT_SCHEMA)
const ok = (result: unknown) => ({ jsonrpc: '2.0' as const, id: 1, result })

t.test('a task with no status message and no artifact: no envelope was recorded', async (t) => {
  const result = toolResultOf(ok({ task: { id: 't-1', contextId: 'c-1', status: { state: 'TASK_STATE_WORKING' } } }))
  t.same(result, {
    isError: false,
    content: [],
    structuredContent: { answerCoverage: { availability: 'not_recorded' }, contextId: 'c-1', taskId: 't-1', state: 'TASK_STATE_WORKING' }
  })
  t.ok(validate(result.structuredContent))
})

t.test('a message without ids, a malformed envelope, data parts', async (t) => {
  const result = toolResultOf(ok({
    message: { parts: [{ data: { booked: true } }, { text: 'Booked.' }], metadata: { [URI]: { answerCoverage: { availability: 'nope' } } } }
  }))
  t.same(result.content, [{ type: 'text', text: 'Booked.' }, { type: 'text', text: '{"booked":true}' }])
  t.same(result.structuredContent, { answerCoverage: { availability: 'not_recorded' } }, 'an invalid envelope is not passed on')
  t.ok(validate(result.structuredContent))
  const bare = toolResultOf(ok({ message: {} }))
  t.same(bare.content, [])
  t.ok(validate(bare.structuredContent))
})

t.test('a JSON-RPC error is a tool error naming the A2A code', async (t) => {
  t.same(toolResultOf({ jsonrpc: '2.0', id: 1, error: { code: -32004, message: 'Task is in a terminal state' } }), {
    isError: true, content: [{ type: 'text', text: 'A2A error -32004: Task is in a terminal state' }]
  })
})

t.test('a -32602 tool error names each field and what is wrong with it; other details add nothing', async (t) => {
  const bad = invalidParams([{ field: 'message.contextId', description: 'must be a UUID' }, { field: 'a', description: 'b' }])
  const error = { ...bad, data: [...taskNotFound('x').data ?? [], ...bad.data ?? []] }
  t.same(toolResultOf({ jsonrpc: '2.0', id: 1, error }).content, [
    { type: 'text', text: 'A2A error -32602: Invalid parameters (message.contextId: must be a UUID; a: b)' }
  ])
  t.same(toolResultOf({ jsonrpc: '2.0', id: 1, error: taskNotFound('x') }).content, [{ type: 'text', text: 'A2A error -32001: Task not found' }])
})

t.test('server identity: names the schema accepts from any host, title and description within 100 characters', async (t) => {
  const card = (name: string, description: string, url: string) => ({
    name,
    description,
    version: '2.0.0',
    capabilities: { extensions: [{ uri: 'urn:other' }, { uri: URI, params: { mcp: { url } } }] }
  })
  t.same(serverIdentity(card('Shop', 'Sells things.', 'https://mcp.example.com/mcp/a/shop')), {
    name: 'com.example.mcp/shop', title: 'Shop', version: '2.0.0', description: 'Sells things.'
  })
  const long = serverIdentity(card('', ' '.repeat(3), 'http://[::1]:8080/v1/mcp/a/a-b_c'))
  t.equal(long.name, '---1-/a-b_c', 'an IPv6 literal becomes hyphens')
  t.equal(long.title, 'a-b_c', 'an empty name falls back to the agent id')
  t.equal(long.description, 'a-b_c', 'an empty description falls back to the title')
  t.equal(serverIdentity(card('Dots', 'd', 'http://.../mcp/a/x')).name, 'localhost/x', 'a host of no labels')
  const wordy = serverIdentity(card('x'.repeat(150), 'y'.repeat(150), `http://${'h'.repeat(63)}.${'i'.repeat(63)}.${'j'.repeat(63)}.example/mcp/a/${'a'.repeat(128)}`))
  t.equal(wordy.title.length, 100)
  t.equal(wordy.description.length, 100)
  t.ok(wordy.name.length <= 200 && wordy.name.endsWith(`/${'a'.repeat(128)}`))
})
