/**
 * Walk-ins are strangers (docs/identities.md, issue 23): a caller without a credential, on an agent that takes
 * walk-ins, has no scope of its own. It reaches what it holds an unguessable handle to — a task id or a UUID
 * contextId — and nothing else: ListTasks needs the conversation's contextId, and a contextId that is not a UUID
 * ("alice-private" can be guessed) is refused with -32602 at every door (A2A 1.0 §3.4.1: refused, never replaced).
 * A caller with a credential keeps any contextId.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk'
import { ALICE_KEY, API_KEYS, call, sdkClient } from '../../fixtures/auth.js'
import { rpc, startGateway, userMessage } from '../../fixtures/gateway-helpers.js'

type Json = Record<string, any>

const { base } = await startGateway(t)

async function send (text: string, extra: Json = {}): Promise<Json> {
  const { body } = await call(base, 'SendMessage', { message: userMessage(text, extra) })
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error))
  return body.result
}

/** A walk-in's task waiting for input, in a conversation the server started. */
async function walkInTask (): Promise<Json> {
  return (await send('book a table')).task
}

async function mcpClient (t: Test): Promise<Client> {
  const client = new Client({ name: 'a2a-converse-walk-in-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/a/demo`)))
  t.teardown(() => client.close())
  return client
}

const NOT_A_UUID = 'a walk-in\'s contextId must be a UUID (omit it and the server issues one)'

t.test('ListTasks without contextId: -32602 naming contextId, and nothing of any walk-in\'s task in any field', async (t) => {
  const task = await walkInTask()
  const { status, body } = await call(base, 'ListTasks', {})
  t.equal(status, 200)
  t.equal(body.error?.code, -32602)
  t.match(body.error.data, [{ fieldViolations: [{ field: 'contextId', description: /one conversation: give its contextId/ }] }])
  t.equal(body.result, undefined)
  const text = JSON.stringify(body)
  for (const secret of [task.id, task.contextId, 'book a table', 'TASK_STATE']) t.notOk(text.includes(secret), `no ${secret} in the answer`)
  const paged = await call(base, 'ListTasks', { pageSize: 100, status: 'TASK_STATE_INPUT_REQUIRED' })
  t.equal(paged.body.error?.code, -32602, 'other filters do not stand in for the contextId')
})

t.test('ListTasks with a contextId: only that conversation\'s tasks, counted alone; a UUID nobody holds lists nothing', async (t) => {
  const mine = await walkInTask()
  const other = await walkInTask()
  t.not(mine.contextId, other.contextId, 'each walk-in gets a conversation of its own')
  const listed = (await call(base, 'ListTasks', { contextId: mine.contextId })).body.result
  t.same(listed.tasks.map((task: Json) => task.id), [mine.id], 'the holder of the contextId lists its task')
  t.equal(listed.totalSize, 1, 'totalSize counts only that conversation')
  t.notOk(JSON.stringify(listed).includes(other.id))
  const nobodys = (await call(base, 'ListTasks', { contextId: randomUUID() })).body.result
  t.same([nobodys.tasks, nobodys.totalSize], [[], 0], 'a UUID no conversation has lists nothing')
})

t.test('a contextId that is not a UUID is refused (-32602) on SendMessage, SendStreamingMessage and ListTasks', async (t) => {
  const sent = await call(base, 'SendMessage', { message: userMessage('hello', { contextId: 'alice-private' }) })
  t.match(sent.body.error, { code: -32602, data: [{ fieldViolations: [{ field: 'message.contextId', description: NOT_A_UUID }] }] })
  const listed = await call(base, 'ListTasks', { contextId: 'alice-private' })
  t.match(listed.body.error, { code: -32602, data: [{ fieldViolations: [{ field: 'contextId', description: NOT_A_UUID }] }] })
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: rpc('SendStreamingMessage', { message: userMessage('hello', { contextId: 'alice-private' }) })
  })
  t.equal(response.status, 200)
  t.match(await response.json(), { error: { code: -32602, data: [{ fieldViolations: [{ field: 'message.contextId' }] }] } },
    'a JSON answer before any stream opens')
  t.equal((await call(base, 'ListTasks', { contextId: `${randomUUID()}x` })).body.error?.code, -32602, 'a UUID with a tail is no UUID')
  const upper = randomUUID().toUpperCase()
  t.equal((await send('hello', { contextId: upper })).message.contextId, upper, 'upper-case hex is a UUID too')
})

t.test('a walk-in continues what it holds: its contextId, its task id', async (t) => {
  const task = await walkInTask()
  const next = await send('date=2026-12-24 time=19:00 party=2', { contextId: task.contextId, taskId: task.id })
  t.equal(next.task.id, task.id)
  t.equal(next.task.contextId, task.contextId)
  const chosen = randomUUID()
  const first = await send('What are your opening hours?', { contextId: chosen })
  t.equal(first.message.contextId, chosen, 'a client-chosen UUID is a conversation of its own, kept')
})

t.test('the MCP door: ask_agent with a contextId that is not a UUID is a tool error naming message.contextId', async (t) => {
  const client = await mcpClient(t)
  const refused = await client.callTool({ name: 'ask_agent', arguments: { message: 'hello', contextId: 'alice-private' } }) as CallToolResult
  t.equal(refused.isError, true)
  t.match(JSON.stringify(refused.content), /-32602/)
  t.match(JSON.stringify(refused.content), /message\.contextId/)
  const started = (await client.callTool({ name: 'ask_agent', arguments: { message: 'What are your opening hours?' } }) as CallToolResult)
    .structuredContent as Json
  const continued = await client.callTool({ name: 'ask_agent', arguments: { message: 'And on Sunday?', contextId: started.contextId } }) as CallToolResult
  t.not(continued.isError, true, 'the contextId the server issued continues')
  t.equal((continued.structuredContent as Json).contextId, started.contextId)
})

t.test('the official @a2a-js/sdk client\'s walk-in flow works: it keeps the contextId the server returns', async (t) => {
  const client = await sdkClient(base)
  const first = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('book a table') }))
  const task = first as Task
  t.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  const second = await client.sendMessage(SendMessageRequest.fromJSON({
    message: userMessage('date=2026-12-24 time=19:00 party=2', { contextId: task.contextId, taskId: task.id })
  })) as Task
  t.equal(second.id, task.id)
  t.equal(second.contextId, task.contextId)
  const listed = await client.listTasks({ tenant: '', contextId: task.contextId, status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false })
  t.same(listed.tasks.map((listedTask) => listedTask.id), [task.id])
  await t.rejects(client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false }),
    /Invalid parameters/, 'without the contextId the client gets -32602')
})

t.test('a caller with a credential keeps any contextId, and lists its own tasks without one', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS })
  const { body } = await call(base, 'SendMessage', { message: userMessage('What are your opening hours?', { contextId: 'alice-private' }) }, ALICE_KEY)
  t.equal(body.result?.message.contextId, 'alice-private')
  t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).body.error, undefined)
})

t.test('an empty contextId sent raw (the official client drops it): counted as absent, on JSON-RPC and HTTP+JSON', async (t) => {
  const task = await walkInTask()
  // JSON-RPC, the body written here: ListTasks `contextId: ""` is no conversation, so -32602 naming contextId.
  const listed = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: '{"jsonrpc":"2.0","id":"raw-1","method":"ListTasks","params":{"contextId":"","pageSize":100}}'
  })
  t.equal(listed.status, 200)
  const body = await listed.json() as Json
  t.equal(body.error?.code, -32602)
  t.strictSame(body.error.data, [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'contextId', description: 'a walk-in lists the tasks of one conversation: give its contextId' }] }])
  t.notOk(JSON.stringify(body).includes(task.id), 'no task in the answer')
  // HTTP+JSON: `?contextId=` (empty) likewise, a 400 naming contextId.
  const rest = await fetch(`${base}/a2a/demo/rest/tasks?contextId=&pageSize=100`, { headers: { 'a2a-version': '1.0' } })
  t.equal(rest.status, 400)
  const restBody = await rest.text()
  t.match(JSON.parse(restBody), { error: { code: 400, status: 'INVALID_ARGUMENT' } })
  t.match(restBody, /"field":"contextId","description":"a walk-in lists the tasks of one conversation: give its contextId"/)
  t.notOk(restBody.includes(task.id), 'no task in the answer')
  // SendMessage with `message.contextId: ""`: absent too, so the server issues a conversation (a UUID) of its own.
  const sent = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'raw-2', method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', contextId: '', parts: [{ text: 'What are your opening hours?' }] } } })
  })
  const reply = (await sent.json() as Json).result?.message
  t.match(reply?.contextId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a contextId issued by the server')
})
