/**
 * What the MCP door does per revision, on both doors: `server/discover` (2026-07-28) agreeing with the server card;
 * a routine waiting for input as an `input_required` result on 2026-07-28 for a client that declares elicitation
 * (answered, declined, a requestState that is not the door's), today's tool result elsewhere; and the W3C trace
 * context of a request's `_meta` reaching the A2A call as its headers, on every path (fast path, the SDK's stateless
 * handling, an older revision).
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { A2ABackend, BackendContext } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { DOORS, serveDoor } from '../../fixtures/doors.js'
import { inputRequiredExecutor, messageExecutor } from '../../fixtures/a2a-executors.js'
import { CLIENT_LINES, connectMcp, lineName, MODERN_REVISION } from '../../fixtures/mcp-clients.js'
import { MODERN_PROTOCOL_VERSIONS, SERVED_PROTOCOL_VERSIONS } from '../../../packages/a2a-converse/src/mcp/server-card.js'
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'

type Json = Record<string, any>

const ENVELOPE = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} }
})

/** POSTs one 2026-07-28 request as the v2 client would (headers and envelope); the JSON-RPC reply and status. */
async function modern (url: string, method: string, params: Json = {}): Promise<{ status: number, body: Json }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {})
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { ...ENVELOPE, ...params._meta } } })
  })
  return { status: response.status, body: await response.json() as Json }
}

const agents = [
  { id: 'orders', card: { name: 'Orders', description: 'Finds orders.', version: '2.1.0' }, executor: inputRequiredExecutor() },
  { id: 'echo', card: { name: 'Echo', description: 'Echoes.' }, executor: messageExecutor() }
]

for (const name of DOORS) {
  t.test(`${name}: server/discover answers what the server card says`, async (t) => {
    const door = await serveDoor(t, name, { agents })
    const url = `${door.base}/mcp/a/orders`
    const card = await (await fetch(`${url}/server-card`)).json() as Json
    const { status, body } = await modern(url, 'server/discover')
    t.equal(status, 200)
    const discovered = body.result
    t.same(discovered.supportedVersions, [...MODERN_PROTOCOL_VERSIONS], 'the SDK serves exactly the modern revisions the card names')
    t.same(card.remotes[0].supportedProtocolVersions, [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS])
    t.same(SERVED_PROTOCOL_VERSIONS, card.remotes[0].supportedProtocolVersions)
    // The server names itself in every 2026-07-28 result's _meta: the card's identity.
    t.match(discovered._meta['io.modelcontextprotocol/serverInfo'], { name: card.name, title: card.title, version: card.version, description: card.description })
    t.ok(discovered.capabilities.tools, 'tools are announced')
  })

  t.test(`${name}: a routine waiting for input is input_required on 2026-07-28; the client's answer continues the task`, async (t) => {
    const door = await serveDoor(t, name, { agents })
    const asked: Json[] = []
    const client = await connectMcp(t, `${door.base}/mcp/a/orders`, CLIENT_LINES[0], {
      onElicit: (params) => {
        asked.push(params)
        return { action: 'accept', content: { reply: 'A-17' } }
      }
    })
    const result = await client.callTool({ name: 'ask_agent', arguments: { message: 'where is my order?' } })
    t.equal(asked.length, 1, 'the client was asked once')
    t.match(asked[0], { mode: 'form', message: 'Which order?', requestedSchema: { type: 'object', required: ['reply'], properties: { reply: { type: 'string' } } } })
    t.equal(result.content[0].text, 'order A-17 found', 'the answer went to the task, which completed')
    t.match(result.structuredContent, { state: 'TASK_STATE_COMPLETED', taskId: String, contextId: String })
  })

  t.test(`${name}: declined, the call answers with the task as it stands (waiting)`, async (t) => {
    const door = await serveDoor(t, name, { agents })
    const client = await connectMcp(t, `${door.base}/mcp/a/orders`, CLIENT_LINES[0], { onElicit: () => ({ action: 'decline' }) })
    const result = await client.callTool({ name: 'ask_agent', arguments: { message: 'where is my order?' } })
    t.equal(result.isError, false)
    t.equal(result.content[0].text, 'Which order?')
    t.match(result.structuredContent, { state: 'TASK_STATE_INPUT_REQUIRED', taskId: String })
    // The task goes on at ask_agent with its id, as on the older revisions.
    const next = await client.callTool({ name: 'ask_agent', arguments: { message: 'B-2', taskId: result.structuredContent.taskId } })
    t.equal(next.content[0].text, 'order B-2 found')
  })

  for (const line of CLIENT_LINES) {
    t.test(`${name}, ${lineName(line)}, no elicitation declared: the tool result says input is required`, async (t) => {
      const door = await serveDoor(t, name, { agents })
      const client = await connectMcp(t, `${door.base}/mcp/a/orders`, line)
      const result = await client.callTool({ name: 'ask_agent', arguments: { message: 'where is my order?' } })
      t.equal(result.content[0].text, 'Which order?')
      t.match(result.structuredContent, { state: 'TASK_STATE_INPUT_REQUIRED', taskId: String, contextId: String })
    })
  }

  t.test(`${name}: the raw rounds; a requestState the door did not issue is -32602`, async (t) => {
    const door = await serveDoor(t, name, { agents })
    const url = `${door.base}/mcp/a/orders`
    const first = await modern(url, 'tools/call', { name: 'ask_agent', arguments: { message: 'where?' } })
    t.match(first.body.result, { resultType: 'input_required', inputRequests: { reply: { method: 'elicitation/create' } }, requestState: String })
    const state = JSON.parse(first.body.result.requestState as string)
    t.match(state, { contextId: String, taskId: String })
    const again = { name: 'ask_agent', arguments: { message: 'where?' }, requestState: first.body.result.requestState }
    const done = await modern(url, 'tools/call', { ...again, inputResponses: { reply: { action: 'accept', content: { reply: 'C-3' } } } })
    t.match(done.body.result, { content: [{ text: 'order C-3 found' }], structuredContent: { state: 'TASK_STATE_COMPLETED', taskId: state.taskId } })
    const forgeries = ['not json', 'null', '{"contextId":"x"}', JSON.stringify({ contextId: 'x', taskId: 'y'.repeat(300) }), 'z'.repeat(600)]
    for (const forged of forgeries) {
      const refused = await modern(url, 'tools/call', { ...again, requestState: forged, inputResponses: { reply: { action: 'accept', content: { reply: 'x' } } } })
      t.match(refused.body.error, { code: -32602, message: 'Invalid or expired requestState' }, forged.slice(0, 20))
    }
    // A well-formed state naming a task that does not exist: the A2A service's answer, as a tool error.
    const unknown = await modern(url, 'tools/call', { ...again, requestState: JSON.stringify({ contextId: state.contextId, taskId: randomUUID() }), inputResponses: { reply: { action: 'accept', content: { reply: 'x' } } } })
    t.match(unknown.body.result, { isError: true, content: [{ text: /^A2A error -32001/ }] })
    // Without an answer: the task as it stands.
    const unanswered = await modern(url, 'tools/call', { ...again, requestState: JSON.stringify({ contextId: state.contextId, taskId: randomUUID() }) })
    t.match(unanswered.body.result, { isError: true, content: [{ text: /^A2A error -32001/ }] })
  })
}

for (const name of DOORS) {
  t.test(`${name}: a client declaring URL elicitation only is not asked a form; a task waiting without a question gets one`, async (t) => {
    const door = await serveDoor(t, name, {
      agents: [...agents, { id: 'mute', card: { name: 'Mute', description: 'Waits without a word.' }, backend: waitingBackend() }]
    })
    const urlOnly = await modern(`${door.base}/mcp/a/orders`, 'tools/call', {
      name: 'ask_agent', arguments: { message: 'where?' }, _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } }
    })
    t.match(urlOnly.body.result, { content: [{ text: 'Which order?' }], structuredContent: { state: 'TASK_STATE_INPUT_REQUIRED' } })
    const form = await modern(`${door.base}/mcp/a/orders`, 'tools/call', {
      name: 'ask_agent', arguments: { message: 'where?' }, _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {}, url: {} } } }
    })
    t.match(form.body.result, { resultType: 'input_required' }, 'form mode declared: asked')
    const mute = await modern(`${door.base}/mcp/a/mute`, 'tools/call', { name: 'ask_agent', arguments: { message: 'hello?' } })
    t.match(mute.body.result, { resultType: 'input_required', inputRequests: { reply: { params: { message: 'The agent is waiting for your input.' } } } })
  })
}

t.test('express: a door seen under many public hosts keeps at most 64 pinned servers per era; the rest get the SDK\'s own handling, the same reply', async (t) => {
  const door = await serveDoor(t, 'express', { agents })
  const { port } = new URL(door.origin)
  const post = async (host: string, headers: Record<string, string>, body: string) => await new Promise<{ status: number, text: string }>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/mcp/a/echo', method: 'POST', headers: { host, 'content-type': 'application/json', ...headers } }, (response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => resolve({ status: response.statusCode as number, text }))
    })
    request.on('error', reject)
    request.end(body)
  })
  const replies = new Set<string>()
  const legacyReplies = new Set<string>()
  for (let index = 0; index < 70; index++) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } })
    const reply = await post(`h${index}.example`, { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'tools/list' }, body)
    t.equal(reply.status, 200)
    const result = JSON.parse(reply.text).result as Json
    t.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, `example.h${index}/echo`, 'each host its own identity')
    replies.add(JSON.stringify(result.tools))
    // The older revisions' fast path keeps its own pinned servers (an SSE reply of one event).
    const legacy = await post(`h${index}.example`, { 'mcp-protocol-version': '2025-11-25', accept: 'application/json, text/event-stream' },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))
    t.equal(legacy.status, 200)
    legacyReplies.add(legacy.text)
  }
  t.equal(replies.size, 1, 'every host got the same tools')
  t.equal(legacyReplies.size, 1, 'every host got the same legacy reply')
  t.match([...legacyReplies][0], /^event: message\ndata: \{"result":\{"tools":\[/)
})

/** A backend whose tasks wait for input without a status message (no question to show). */
function waitingBackend (): A2ABackend {
  return {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async () => ({ task: { id: randomUUID(), contextId: randomUUID(), status: { state: 'TASK_STATE_INPUT_REQUIRED' } } }),
    async * stream () {},
    toError: () => ({ code: -32603, message: 'Internal error' })
  }
}

/** A backend answering every SendMessage with a Message and recording the headers its calls carried. */
function headerRecordingBackend () {
  const seen: Array<BackendContext['headers']> = []
  const backend: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async (request, context) => {
      seen.push(context.headers)
      const message = (request.params as Json).message
      return { message: { messageId: `r-${message.messageId as string}`, role: 'ROLE_AGENT', contextId: 'ctx', parts: [{ text: 'ok' }] } }
    },
    async * stream () {},
    toError: () => ({ code: -32603, message: 'Internal error' })
  }
  return { backend, seen }
}

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

for (const name of DOORS) {
  for (const directToolCalls of [true, false]) {
    t.test(`${name}${directToolCalls ? '' : ' (no fast path)'}: _meta trace context reaches the A2A call as its headers`, async (t) => {
      const recording = headerRecordingBackend()
      const door = await serveDoor(t, name, { directToolCalls, agents: [{ id: 'traced', card: { name: 'Traced', description: 'Records.' }, backend: recording.backend }] })
      const url = `${door.base}/mcp/a/traced`
      const cases: Array<[string, Json, Json]> = [
        ['both', { traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' }, { traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' }],
        ['a traceparent alone', { traceparent: TRACEPARENT }, { traceparent: TRACEPARENT }],
        ['a malformed traceparent: neither', { traceparent: '00-xyz', tracestate: 'vendor=abc' }, {}],
        ['an all-zero trace id: neither', { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` }, {}],
        ['a tracestate over 512 characters: the traceparent only', { traceparent: TRACEPARENT, tracestate: 'a='.padEnd(600, 'x') }, { traceparent: TRACEPARENT }],
        ['none', {}, {}]
      ]
      for (const [what, meta, expected] of cases) {
        const { body } = await modern(url, 'tools/call', { name: 'ask_agent', arguments: { message: 'hi' }, _meta: meta })
        t.equal(body.result.content[0].text, 'ok', what)
        const headers = recording.seen.at(-1) as Json
        t.same({ traceparent: headers.traceparent, tracestate: headers.tracestate }, { traceparent: undefined, tracestate: undefined, ...expected }, what)
      }
    })
  }

  t.test(`${name}, v1 client on 2025-11-25: _meta trace context reaches the A2A call too`, async (t) => {
    const recording = headerRecordingBackend()
    const door = await serveDoor(t, name, { agents: [{ id: 'traced', card: { name: 'Traced', description: 'Records.' }, backend: recording.backend }] })
    const client = await connectMcp(t, `${door.base}/mcp/a/traced`, CLIENT_LINES[1])
    await client.callTool({ name: 'ask_agent', arguments: { message: 'hi' }, _meta: { traceparent: TRACEPARENT, tracestate: 'k=v' } })
    t.match(recording.seen.at(-1), { traceparent: TRACEPARENT, tracestate: 'k=v' })
  })
}
