/**
 * The split's promise, kept: a fixed set of requests — every A2A method on JSON-RPC, HTTP+JSON and gRPC, 0.3 by
 * translation, the cards, errors of each kind, a stream, the MCP door — replayed against the gateway (Fastify) and the
 * Express example, both BUILT (`tsc -b`, run from dist/ as `npm start` runs them), and compared with the replies the
 * tree before the split (0931c0a) gave to the same requests, recorded in replies.json. Ids, timestamps and ports are
 * normalised (each distinct generated value becomes <1>, <2>, … in order of appearance), so a difference is a
 * difference in behaviour.
 *
 * To record again (after a change in behaviour that is meant): build the tree to record from and run
 * `DIFFERENTIAL_RECORD=<that tree's root> npx tap --disable-coverage test/suites/differential/replies.test.ts`.
 */
import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { GetTaskRequest, ListTasksRequest, SendMessageRequest, CancelTaskRequest } from '@a2a-js/sdk'
import { configSchema } from '../../../src/gateway/config.js'
import { ROOT } from '../../fixtures/gateway-process.js'
import { freePort } from '../../fixtures/gateway-helpers.js'
import { holdLibraryBuild } from '../../fixtures/library-build-lock.js'
import { rawGrpcClient } from '../../fixtures/grpc.js'

// Building the app (incremental: seconds when dist/ is current) and two processes started from it.
t.setTimeout(300_000)

const run = promisify(execFile)
const URI = 'https://docs.radioso.ai/reference/a2a-converse-extension/v1'
const RECORDED = join(ROOT, 'test', 'suites', 'differential', 'replies.json')
const recordFrom = process.env.DIFFERENTIAL_RECORD

interface Targets { fastify: string, express: string, grpc: string }
type Exchange = [string, unknown]

/** Starts `node <file>` in `root` with the gateway's own variables only; resolves once it answers on env.PORT. */
async function start (t: Test, root: string, file: string, env: Record<string, string>): Promise<void> {
  const base: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(configSchema.properties)) delete base[key]
  const child = spawn(process.execPath, [file], { cwd: root, env: { ...base, HOST: '127.0.0.1', STATE: 'memory', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.teardown(async () => { child.kill('SIGKILL'); await exited })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const port = env.PORT
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`${file} exited: ${output}`)
    const ready = await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`).then((response) => response.ok, () => false)
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${file} did not listen: ${output}`)
}

/** The built gateway and Express example of `root`, on fixed ports of this run. */
async function serve (t: Test, root: string): Promise<Targets> {
  const [fastify, express, grpc] = await Promise.all([freePort(), freePort(), freePort()])
  await Promise.all([
    start(t, root, 'dist/src/gateway/main.js', { PORT: String(fastify), GRPC_PORT: String(grpc), PUBLIC_GRPC_URL: `127.0.0.1:${grpc}` }),
    start(t, root, 'dist/examples/express-gateway.js', { PORT: String(express) })
  ])
  return { fastify: `http://127.0.0.1:${fastify}`, express: `http://127.0.0.1:${express}`, grpc: `127.0.0.1:${grpc}` }
}

const V1 = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI }

/** An HTTP exchange: status, the headers that carry meaning, the body (JSON, SSE events, or text). */
async function http (base: string, path: string, init: { headers?: Record<string, string>, body?: unknown } = {}): Promise<unknown> {
  const response = await fetch(`${base}${path}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: init.headers ?? (init.body === undefined ? {} : V1),
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
  })
  const type = response.headers.get('content-type') ?? ''
  const text = await response.text()
  let body: unknown = text
  if (type.includes('json')) body = JSON.parse(text)
  else if (type.includes('event-stream')) {
    body = text.split('\n\n').filter((event) => event.trim() !== '').map((event) => {
      const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n')
      return data === '' ? event : JSON.parse(data)
    })
  }
  return { status: response.status, type: type.split(';')[0], extensions: response.headers.get('a2a-extensions'), body }
}

const rpc = (method: string, params: unknown, id = 1) => ({ jsonrpc: '2.0', id, method, params })
const message = (messageId: string, text: string, extra: Record<string, unknown> = {}) => ({ message: { messageId, role: 'ROLE_USER', parts: [{ text }], ...extra } })

/** The requests, in order, against one HTTP door (`door` names it in the record). */
async function httpDoor (door: string, base: string): Promise<Exchange[]> {
  const out: Exchange[] = []
  const add = async (name: string, exchange: Promise<unknown>) => { out.push([`${door} ${name}`, await exchange]) }
  await add('card', http(base, '/a2a/demo/.well-known/agent-card.json'))
  await add('card 0.3', http(base, '/a2a/demo/v0.3/.well-known/agent-card.json'))
  await add('card unknown agent', http(base, '/a2a/nobody/.well-known/agent-card.json'))
  await add('tools', http(base, '/api/v1/mcp/converse/tools'))
  await add('SendMessage knowledge', http(base, '/a2a/demo', { body: rpc('SendMessage', message(`${door}-k1`, 'How long do I have to return an order?')) }))
  await add('SendMessage without the extension', http(base, '/a2a/demo', { headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: rpc('SendMessage', message(`${door}-k2`, 'How long do I have to return an order?')) }))
  await add('SendMessage retried', http(base, '/a2a/demo', { body: rpc('SendMessage', message(`${door}-k1`, 'How long do I have to return an order?')) }))
  await add('SendMessage out of scope', http(base, '/a2a/demo', { body: rpc('SendMessage', message(`${door}-k3`, 'What is the capital of France?')) }))
  const routine = await http(base, '/a2a/demo', { body: rpc('SendMessage', message(`${door}-r1`, 'I want to book a table')) }) as { body: { result?: { task?: { id: string, contextId: string } } } }
  out.push([`${door} SendMessage routine`, routine])
  const task = routine.body.result?.task
  await add('GetTask', http(base, '/a2a/demo', { body: rpc('GetTask', { id: task?.id }) }))
  await add('ListTasks', http(base, '/a2a/demo', { body: rpc('ListTasks', { contextId: task?.contextId }) }))
  await add('SendMessage routine step', http(base, '/a2a/demo', { body: rpc('SendMessage', message(`${door}-r2`, 'date=2030-05-01, time=19:00, party_size=4', { taskId: task?.id, contextId: task?.contextId })) }))
  await add('CancelTask', http(base, '/a2a/demo', { body: rpc('CancelTask', { id: task?.id }) }))
  await add('CancelTask again', http(base, '/a2a/demo', { body: rpc('CancelTask', { id: task?.id }) }))
  await add('SendStreamingMessage', http(base, '/a2a/demo', { body: rpc('SendStreamingMessage', message(`${door}-s1`, 'What is the warranty on a laptop?')) }))
  await add('SubscribeToTask finished', http(base, '/a2a/demo', { body: rpc('SubscribeToTask', { id: task?.id }) }))
  await add('GetTask unknown', http(base, '/a2a/demo', { body: rpc('GetTask', { id: 'no-such-task' }) }))
  await add('push config create', http(base, '/a2a/demo', { body: rpc('CreateTaskPushNotificationConfig', { taskId: task?.id, url: 'http://10.0.0.1/hook' }) }))
  await add('push config list', http(base, '/a2a/demo', { body: rpc('ListTaskPushNotificationConfigs', { taskId: task?.id }) }))
  await add('push config get unknown', http(base, '/a2a/demo', { body: rpc('GetTaskPushNotificationConfig', { taskId: task?.id, id: 'none' }) }))
  await add('push config delete unknown', http(base, '/a2a/demo', { body: rpc('DeleteTaskPushNotificationConfig', { taskId: task?.id, id: 'none' }) }))
  await add('GetExtendedAgentCard', http(base, '/a2a/demo', { body: rpc('GetExtendedAgentCard', {}) }))
  await add('unknown method', http(base, '/a2a/demo', { body: rpc('NoSuchMethod', {}) }))
  await add('invalid params', http(base, '/a2a/demo', { body: rpc('SendMessage', { message: { role: 'ROLE_USER' } }) }))
  await add('version 2.0', http(base, '/a2a/demo', { headers: { ...V1, 'a2a-version': '2.0' }, body: rpc('GetTask', { id: 'x' }) }))
  await add('not JSON', http(base, '/a2a/demo', { body: '{"jsonrpc":' }))
  await add('not an object', http(base, '/a2a/demo', { body: '[1]' }))
  await add('unknown agent', http(base, '/a2a/nobody', { body: rpc('GetTask', { id: 'x' }) }))
  await add('0.3 message/send', http(base, '/a2a/demo', {
    headers: { 'content-type': 'application/json', 'x-a2a-extensions': URI },
    body: rpc('message/send', { message: { kind: 'message', messageId: `${door}-03`, role: 'user', parts: [{ kind: 'text', text: 'How long do I have to return an order?' }] } })
  }))
  await add('HTTP+JSON send', http(base, '/a2a/demo/rest/message:send', { body: message(`${door}-h1`, 'How long do I have to return an order?') }))
  await add('HTTP+JSON get', http(base, `/a2a/demo/rest/tasks/${task?.id ?? 'x'}`, { headers: { 'a2a-version': '1.0' } }))
  await add('HTTP+JSON list', http(base, `/a2a/demo/rest/tasks?contextId=${task?.contextId ?? ''}`, { headers: { 'a2a-version': '1.0' } }))
  await add('HTTP+JSON unknown task', http(base, '/a2a/demo/rest/tasks/no-such-task', { headers: { 'a2a-version': '1.0' } }))
  await add('HTTP+JSON unknown route', http(base, '/a2a/demo/rest/nothing', { headers: { 'a2a-version': '1.0' } }))
  const mcp = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
  await add('MCP server card', http(base, '/mcp/a/demo/server-card'))
  await add('MCP initialize', http(base, '/mcp/a/demo', { headers: mcp, body: rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'differential', version: '1' } }) }))
  await add('MCP tools/list', http(base, '/mcp/a/demo', { headers: mcp, body: rpc('tools/list', {}, 2) }))
  await add('MCP tools/call', http(base, '/mcp/a/demo', { headers: mcp, body: rpc('tools/call', { name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } }, 3) }))
  await add('MCP unknown tool', http(base, '/mcp/a/demo', { headers: mcp, body: rpc('tools/call', { name: 'nothing', arguments: {} }, 4) }))
  return out
}

/** gRPC (the gateway's door), with the SDK's service definition. */
async function grpcDoor (t: Test, target: string): Promise<Exchange[]> {
  const raw = rawGrpcClient(t, target)
  const active = { 'a2a-version': '1.0', 'a2a-extensions': URI }
  const reply = (result: { error?: { code: number, details: string }, response?: unknown, metadata?: { get: (key: string) => unknown } }) => ({
    error: result.error === undefined ? undefined : { code: result.error.code, details: result.error.details },
    extensions: result.metadata?.get('a2a-extensions'),
    response: result.response === undefined ? undefined : JSON.parse(JSON.stringify(result.response))
  })
  const out: Exchange[] = []
  const ask = (messageId: string, text: string) => ({ ...SendMessageRequest.fromJSON(message(messageId, text)), tenant: 'demo' })
  out.push(['grpc sendMessage', reply(await raw.unary('sendMessage', ask('g-k1', 'How long do I have to return an order?'), active))])
  const routine = await raw.unary('sendMessage', ask('g-r1', 'I want to book a table'), active)
  out.push(['grpc sendMessage routine', reply(routine)])
  const id = (routine.response as { payload?: { value?: { id?: string } } } | undefined)?.payload?.value?.id ?? 'x'
  out.push(['grpc getTask', reply(await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id }), active))])
  out.push(['grpc listTasks', reply(await raw.unary('listTasks', ListTasksRequest.fromJSON({ tenant: 'demo', pageSize: 10 }), active))])
  out.push(['grpc cancelTask', reply(await raw.unary('cancelTask', CancelTaskRequest.fromJSON({ tenant: 'demo', id }), active))])
  out.push(['grpc getTask unknown', reply(await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: 'no-such-task' }), active))])
  const stream = await raw.stream('sendStreamingMessage', ask('g-s1', 'What is the warranty on a laptop?'), active)
  out.push(['grpc sendStreamingMessage', { messages: JSON.parse(JSON.stringify(stream.messages)), error: stream.error?.code }])
  return out
}

/**
 * Generated values (UUIDs, timestamps, ports, ids the runtime mints) become <n> by order of first appearance; the
 * rest is compared as it is.
 */
function normalise (value: unknown): unknown {
  const seen = new Map<string, string>()
  const GENERATED = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|127\.0\.0\.1:\d+|"seconds":"\d+"/g
  const text = JSON.stringify(value).replace(GENERATED, (found) => {
    if (!seen.has(found)) seen.set(found, `<${seen.size + 1}>`)
    return seen.get(found) as string
  })
  return JSON.parse(text)
}

async function replay (t: Test, root: string): Promise<unknown> {
  const targets = await serve(t, root)
  return normalise([...await httpDoor('fastify', targets.fastify), ...await httpDoor('express', targets.express), ...await grpcDoor(t, targets.grpc)])
}

if (recordFrom !== undefined) {
  t.test(`records the replies of ${recordFrom}`, async (t) => {
    writeFileSync(RECORDED, JSON.stringify(await replay(t, recordFrom), null, 1) + '\n')
    t.pass('recorded')
  })
} else {
  t.test('the built gateway and Express example answer as the tree before the split did', async (t) => {
    // Its build and its processes use packages/a2a-converse/dist, which the package suite's `npm pack` rebuilds.
    await holdLibraryBuild(t)
    await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'tsconfig.build.json'], { cwd: ROOT, timeout: 240_000 })
    const recorded = JSON.parse(readFileSync(RECORDED, 'utf8')) as Exchange[]
    const replies = await replay(t, ROOT) as Exchange[]
    t.same(replies.map(([name]) => name), recorded.map(([name]) => name), 'the same requests')
    for (const [index, [name, reply]] of replies.entries()) t.same(reply, recorded[index]?.[1], name)
  })
}
