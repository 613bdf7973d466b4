/**
 * Proxy mode when the upstream fails: down at start, refused, slow, garbage, a stream cut or gone quiet, a client
 * that leaves, an unusable card. Each is a JSON-RPC error with the documented code (docs/proxy.md), never the
 * upstream's address or stack; the gateway stays healthy.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { AgentDefinition } from '../../../../src/gateway/agent-definitions.js'
import { buildGateway } from '../../../../src/gateway/app.js'
import { loadConfig } from '../../../../src/gateway/config.js'
import { startRawUpstream, validCard } from '../../../fixtures/raw-upstream.js'
import { readSse } from '../../../fixtures/sse-reader.js'
import { startUpstream } from '../../../fixtures/upstream-agent.js'
import { freePort, startGateway, URI, userMessage } from '../../../fixtures/gateway-helpers.js'

const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI }

function send (text: string, method = 'SendMessage', extra: Record<string, unknown> = {}) {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: userMessage(text), ...extra } })
}

async function post (base: string, body: string, init: RequestInit = {}): Promise<Record<string, any>> {
  const response = await fetch(`${base}/a2a/shop`, { method: 'POST', headers: HEADERS, body, ...init })
  return await response.json() as Record<string, any>
}

/** The frames of a whole SSE reply. */
async function stream (base: string, body: string): Promise<Array<Record<string, any>>> {
  const response = await fetch(`${base}/a2a/shop`, { method: 'POST', headers: HEADERS, body })
  // An error known before the stream is a plain JSON-RPC reply: one "frame".
  if ((response.headers.get('content-type') ?? '').startsWith('application/json')) return [await response.json() as Record<string, any>]
  const reader = readSse(response)
  await reader.ended
  return reader.frames
}

async function gatewayFor (t: Test, url: string, upstream: Partial<NonNullable<AgentDefinition['upstream']>> = {}) {
  return await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url, ...upstream } }] })
}

function assertNoLeak (t: Test, error: Record<string, any>, base: string): void {
  t.notMatch(error.message, base.replace('http://', ''), 'the upstream\'s address is not in the error')
  t.notMatch(JSON.stringify(error), /\bat \S+ \(|node:internal/, 'no stack')
}

t.test('upstream down at start: the gateway starts, is not ready for it, answers -32050, then picks the card up', async (t) => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const { base } = await gatewayFor(t, url)
  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 503)
  t.match(await ready.json(), { status: 'unavailable', checks: { 'upstream:shop': 'failing' } })
  t.equal((await fetch(`${base}/health/live`)).status, 200, 'alive')
  const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(card.name, 'shop', 'until the card is read: the id names it')
  const reply = await post(base, send('hello'))
  t.match(reply.error, { code: -32050, message: /card has not been read yet/, data: [{ reason: 'UPSTREAM_UNAVAILABLE', metadata: { agentId: 'shop' } }] })

  const upstream = await startUpstream({ port })
  t.teardown(() => upstream.close())
  // Retried with a growing delay (500 ms, 1 s, …): ready within a few seconds.
  let status = 503
  for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
    await sleep(100)
    status = (await fetch(`${base}/health/ready`)).status
  }
  t.equal(status, 200, 'ready once the card was read')
  const read = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(read.name, 'Shop upstream', 'the upstream\'s card is served')
  t.equal(read.supportedInterfaces[0].url, `${base}/a2a/shop`)
  const answered = await post(base, send('hello again'))
  t.equal(answered.result.message.parts[0].text, 'echo: hello again')
})

t.test('refused after start: -32050 for calls and streams; the gateway stays healthy', async (t) => {
  const upstream = await startUpstream()
  const { base } = await gatewayFor(t, upstream.base)
  await upstream.close()
  const reply = await post(base, send('hello'))
  t.match(reply.error, { code: -32050, message: 'Upstream agent unavailable: cannot be reached' })
  assertNoLeak(t, reply.error, upstream.base)
  const frames = await stream(base, send('task', 'SendStreamingMessage'))
  t.equal(frames.length, 1)
  t.match(frames[0].error, { code: -32050 })
  t.equal((await fetch(`${base}/health/live`)).status, 200)
})

t.test('a slow upstream past the timeout: -32051', async (t) => {
  const upstream = await startUpstream({ slowMs: 5000 })
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { timeoutMs: 200 })
  const reply = await post(base, send('slow down'))
  t.match(reply.error, { code: -32051, message: 'Upstream agent timed out: no reply in time', data: [{ reason: 'UPSTREAM_TIMEOUT' }] })
  const frames = await stream(base, send('slow stream', 'SendStreamingMessage'))
  t.match(frames.at(-1)?.error, { code: -32051 }, 'a stream whose headers do not come in time')
})

t.test('garbage, HTML, a 5xx, an oversized body; a JSON-RPC error on a 500 reaches the caller as its code', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { maxResponseBytes: 1024 })
  const cases: Array<[string, (response: import('node:http').ServerResponse) => void, Record<string, unknown>]> = [
    ['not JSON', (response) => response.end('%%% garbage'), { code: -32006, message: 'Invalid upstream agent response: not JSON' }],
    ['JSON, not JSON-RPC', (response) => response.end('{"hello":1}'), { code: -32006, message: 'Invalid upstream agent response: not a JSON-RPC response' }],
    ['JSON-RPC without result', (response) => response.end('{"jsonrpc":"2.0","id":1}'), { code: -32006 }],
    ['HTML 502', (response) => { response.writeHead(502, { 'content-type': 'text/html' }); response.end('<h1>Bad gateway</h1>') },
      { code: -32050, message: 'Upstream agent unavailable: HTTP 502' }],
    ['JSON 503', (response) => { response.writeHead(503); response.end('{"down":true}') }, { code: -32050, message: 'Upstream agent unavailable: HTTP 503' }],
    ['oversized', (response) => response.end(`{"jsonrpc":"2.0","id":1,"result":{"x":"${'x'.repeat(4096)}"}}`),
      { code: -32006, message: 'Invalid upstream agent response: larger than 1024 bytes' }],
    ['a JSON-RPC error on a 500', (response) => { response.writeHead(500); response.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","data":[{"@type":"x"}]}}') },
      { code: -32603, message: 'Internal error', data: undefined }]
  ]
  for (const [name, write, expected] of cases) {
    upstream.handler = (_request, response) => write(response)
    const reply = await post(base, send('hello'))
    t.match(reply.error, expected, name)
    assertNoLeak(t, reply.error, upstream.base)
  }
  t.equal((await fetch(`${base}/health/live`)).status, 200)
})

t.test('broken streams: garbage frames, JSON where a stream was expected, an oversized event, an error event', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { maxResponseBytes: 1024 })
  const sse = (events: string) => (response: import('node:http').ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.end(events)
  }
  const ok = 'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}\r\n\r\n'
  const cases: Array<[string, (response: import('node:http').ServerResponse) => void, Record<string, unknown>, number]> = [
    ['a frame that is not JSON', sse(`${ok}: a comment\n\ndata: nope\n\n`), { code: -32006, message: 'Invalid upstream agent response: a stream event that is not JSON' }, 2],
    ['a frame that is not JSON-RPC', sse('data: {"x":1}\n\n'), { code: -32006, message: 'Invalid upstream agent response: a stream event that is not JSON-RPC' }, 1],
    ['a frame without result', sse('data: {"jsonrpc":"2.0","id":1}\n\n'), { code: -32006, message: 'Invalid upstream agent response: a stream event without a result' }, 1],
    ['an oversized event', sse(`data: ${'y'.repeat(2048)}\n\n`), { code: -32006, message: 'Invalid upstream agent response: a stream event larger than 1024 bytes' }, 1],
    ['an error event: its code, A2A\'s message', sse(`${ok}event: error\ndata: {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone"}}\n\n`),
      { code: -32001, message: 'Task not found', data: [{ reason: 'TASK_NOT_FOUND', metadata: {} }] }, 2],
    ['a JSON-RPC error instead of a stream', (response) => response.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"no streams"}}'),
      { code: -32004, message: 'This operation is not supported' }, 1],
    ['a JSON result instead of a stream', (response) => response.end('{"jsonrpc":"2.0","id":1,"result":{}}'),
      { code: -32006, message: 'Invalid upstream agent response: a JSON result where a stream was expected' }, 1],
    ['an oversized JSON reply instead of a stream', (response) => response.end(`{"x":"${'z'.repeat(4096)}"}`), { code: -32006 }, 1]
  ]
  for (const [name, write, expected, count] of cases) {
    upstream.handler = (_request, response) => write(response)
    const frames = await stream(base, send('task', 'SendStreamingMessage'))
    t.equal(frames.length, count, `${name}: the frames before the error, then the error`)
    t.match(frames.at(-1)?.error, expected, name)
  }
  // A stream that ends cleanly after its frames (a final frame with data split over two lines is joined).
  const split = sse(`${ok}data: {"jsonrpc":"2.0","id":1,\ndata: "result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}\n\n`)
  upstream.handler = (_request, response) => split(response)
  const frames = await stream(base, send('task', 'SendStreamingMessage'))
  t.same(frames.map((frame) => frame.result.task.status.state), ['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'])
})

t.test('the upstream stops mid-stream: the stream ends with -32050; a quiet stream past its idle timeout: -32051', async (t) => {
  const upstream = await startUpstream()
  const { base } = await gatewayFor(t, upstream.base)
  const response = await fetch(`${base}/a2a/shop`, { method: 'POST', headers: HEADERS, body: send('hold it', 'SendStreamingMessage') })
  const reader = readSse(response)
  await reader.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
  await upstream.close()
  await reader.ended
  t.match(reader.frames.at(-1)?.error, { code: -32050, message: 'Upstream agent unavailable: the stream was cut' })
  t.equal((await fetch(`${base}/health/live`)).status, 200, 'the gateway stays healthy')

  const quiet = await startRawUpstream((_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write('data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}\n\n')
  })
  t.teardown(() => quiet.close())
  const second = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: quiet.base, streamIdleTimeoutMs: 200 } }] })
  const frames = await stream(second.base, send('task', 'SendStreamingMessage'))
  t.equal(frames.length, 2)
  t.match(frames[1].error, { code: -32051, message: 'Upstream agent timed out: no stream event in time' })
})

/** A handler that writes `head`, then `chunk` every `everyMs` until the gateway goes away. */
function dribble (type: string, head: string, chunk: string, everyMs: number) {
  return (_request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => {
    response.writeHead(200, { 'content-type': type })
    response.write(head)
    const timer = setInterval(() => response.write(chunk), everyMs)
    response.on('close', () => clearInterval(timer))
  }
}

t.test('timeoutMs is a deadline: an upstream dribbling its reply byte by byte is -32051 all the same', async (t) => {
  const upstream = await startRawUpstream(dribble('application/json', '{"jsonrpc":"2.0","id":1,"result":{"message":{"parts":[{"text":"', 'x', 50))
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { timeoutMs: 300 })
  const reply = await post(base, send('hello'))
  t.match(reply.error, { code: -32051, message: 'Upstream agent timed out: no reply in time', data: [{ reason: 'UPSTREAM_TIMEOUT' }] })
  t.equal((await fetch(`${base}/health/live`)).status, 200)
})

t.test('streamIdleTimeoutMs counts A2A events: a stream of keep-alive comments only is -32051', async (t) => {
  const first = 'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}\n\n'
  const upstream = await startRawUpstream(dribble('text/event-stream', first, ': keepalive\n\n', 50))
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { streamIdleTimeoutMs: 300 })
  const frames = await stream(base, send('task', 'SendStreamingMessage'))
  t.equal(frames.length, 2, 'the event, then the error')
  t.equal(frames[0].result.task.id, 't1')
  t.match(frames[1].error, { code: -32051, message: 'Upstream agent timed out: no stream event in time' })
})

t.test('a client that leaves cancels its upstream request (JSON and SSE)', async (t) => {
  const upstream = await startUpstream({ slowMs: 10_000 })
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base)
  const controller = new AbortController()
  const pending = fetch(`${base}/a2a/shop`, { method: 'POST', headers: HEADERS, body: send('slow please'), signal: controller.signal })
  while (upstream.seen.length === 0) await sleep(10)
  controller.abort()
  await t.rejects(pending)
  while (upstream.abandoned() === 0) await sleep(10)
  t.equal(upstream.abandoned(), 1, 'the upstream saw its client go away')

  const streaming = new AbortController()
  const response = await fetch(`${base}/a2a/shop`, { method: 'POST', headers: HEADERS, body: send('hold', 'SendStreamingMessage'), signal: streaming.signal })
  const reader = readSse(response)
  await reader.waitFor((frame) => frame.result?.statusUpdate !== undefined)
  streaming.abort()
  await t.rejects(reader.ended)
  while (upstream.abandoned() === 1) await sleep(10)
  t.equal(upstream.abandoned(), 2, 'the upstream stream was closed too')
})

t.test('an unusable card fails the start with an error naming the agent', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const build = () => buildGateway({
    config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }),
    agents: [{ id: 'shop', upstream: { url: upstream.base } }]
  })
  upstream.card.text = 'not json'
  await t.rejects(build(), { name: 'UpstreamCardError', message: `agent "shop": upstream card at ${upstream.base}/.well-known/agent-card.json is not JSON` })
  upstream.card.text = JSON.stringify([{ name: 'x' }])
  await t.rejects(build(), { message: /agent "shop": upstream card at .*: the card must be object/ })
  upstream.card.text = JSON.stringify({ name: 'x', supportedInterfaces: 'all' })
  await t.rejects(build(), { message: /agent "shop": upstream card at .*: \/supportedInterfaces must be array/ })
  upstream.card.text = JSON.stringify({ name: 'x' })
  await t.rejects(build(), { message: /agent "shop": upstream card at .* has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1.0, nor a 0.3 JSON-RPC url/ })
  upstream.card.text = JSON.stringify({ name: 'x', supportedInterfaces: [{ url: '/rpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }] })
  await t.rejects(build(), { message: /has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1.0/ })
  upstream.card.text = JSON.stringify({ name: 'x', supportedInterfaces: [{ url: 'ftp://x/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] })
  await t.rejects(build(), { message: /the JSONRPC interface url must be http\(s\)/ })
  upstream.card.text = JSON.stringify({ name: 'x', supportedInterfaces: [{ url: 'http://[bad', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] })
  await t.rejects(build(), { message: /the JSONRPC interface url is not a URL/ })
  upstream.card.text = JSON.stringify({ name: 'x', supportedInterfaces: [{ url: '/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], signatures: [{}] })
  const app = await build()
  t.teardown(() => app.close())
  const card = (await app.inject({ url: '/a2a/shop/.well-known/agent-card.json' })).json() as Record<string, any>
  t.equal(card.description, '', 'a card without a description gets an empty one')
  t.equal(card.signatures, undefined, 'the upstream\'s signatures are dropped (the card changed)')
})

t.test('the card is read again every cardTtlMs; an unusable refresh keeps the last good card', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const { base } = await gatewayFor(t, upstream.base, { cardTtlMs: 50 })
  const name = async () => (await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, any>).name
  t.equal(await name(), 'Raw upstream')
  upstream.card.text = validCard('Renamed upstream')
  while (await name() !== 'Renamed upstream') await sleep(20)
  t.pass('the new card is served')
  upstream.card.text = 'broken'
  await sleep(200)
  t.equal(await name(), 'Renamed upstream', 'the last good card stays')
  upstream.card.status = 404
  await sleep(200)
  t.equal(await name(), 'Renamed upstream')
  t.equal((await fetch(`${base}/health/ready`)).status, 200, 'still ready: a card was read')
})

t.test('the agents file: name and description from the file win over the card\'s; configured headers go upstream', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, {}, {
    agents: [{ id: 'shop', name: 'Our shop', description: 'Ours', upstream: { url: upstream.base, headers: { authorization: 'Bearer upstream-key' } } }]
  })
  const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(card.name, 'Our shop')
  t.equal(card.description, 'Ours')
  await post(base, send('hi'), { headers: { ...HEADERS, authorization: 'Bearer client-token' } })
  t.equal(upstream.seen.at(-1)!.authorization, 'Bearer upstream-key', 'the configured header, never the caller\'s')
})
