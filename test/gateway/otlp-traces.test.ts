/**
 * Traces end to end through a real OTLP/HTTP receiver: two gateways as processes (the real `npm start` entry, the
 * SDK configured from OTEL_* variables), the first proxying to the second, an HTTP envelope service beside the first.
 * A caller's `traceparent` names the trace; the proxy exports OTLP/JSON, the upstream OTLP/protobuf (the default).
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startMain, within } from '../fixtures/gateway-process.js'
import { startOtlpReceiver, type ReceivedSpan } from '../fixtures/otlp-receiver.js'
import { URI } from '../fixtures/gateway-helpers.js'

t.setTimeout(300_000)

const QUESTION = 'How long do I have to return an order?'
const SERVER = 2
const CLIENT = 3

/** An envelope service (ENVELOPE_PROVIDER_URL) that records the trace context of each POST it gets. */
async function startEnvelopeService () {
  const traceparents: string[] = []
  const server = createServer((request, response) => {
    request.resume().on('end', () => {
      traceparents.push(String(request.headers.traceparent))
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({
        author: 'agent',
        answerCoverage: { availability: 'assessed', coverage: 'partial', reason: 'insufficient_evidence' },
        citations: [{ documentId: 'returns', chunkId: 'returns#1', title: 'Returns policy' }]
      }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/envelope`,
    traceparents,
    close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())) }
  }
}

t.test('one trace from the caller through the gateway, its proxy hop and the upstream gateway, envelope on the turn span', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const envelopes = await startEnvelopeService()
  t.teardown(() => envelopes.close())
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' }

  const upstream = startMain(t, { ...otel, OTEL_SERVICE_NAME: 'upstream-gateway', LOG_LEVEL: 'info' })
  const upstreamBase = await upstream.listening()
  const dir = t.testdir({})
  const agentsFile = join(dir, 'agents.json')
  writeFileSync(agentsFile, JSON.stringify([{ id: 'shop', upstream: { url: `${upstreamBase}/a2a/demo/` } }]))
  const proxy = startMain(t, {
    ...otel,
    OTEL_SERVICE_NAME: 'proxy-gateway',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    AGENTS_FILE: agentsFile,
    ENVELOPE_PROVIDER_URL: envelopes.url,
    LOG_LEVEL: 'info'
  })
  const proxyBase = await proxy.listening()

  const traceId = randomBytes(16).toString('hex')
  const callerSpanId = randomBytes(8).toString('hex')
  const response = await fetch(`${proxyBase}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI, traceparent: `00-${traceId}-${callerSpanId}-01` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'otlp-1', role: 'ROLE_USER', parts: [{ text: QUESTION }] } } })
  })
  t.equal(response.status, 200)
  const body = await response.json() as { result: { message?: any, task?: any } }
  const reply = body.result.message ?? body.result.task.status.message
  t.equal(reply.metadata[URI].answerCoverage.coverage, 'partial', 'the envelope service\'s verdict reached the caller')
  const replyText = reply.parts.map((part: { text?: string }) => part.text ?? '').join('')
  t.ok(replyText.length > 10, 'the upstream answered with text')

  // The proxy's spans (OTLP/JSON): the server span of the call, the upstream CLIENT span, the envelope POST.
  const proxySpans = await receiver.until(() => {
    const spans = receiver.spans().filter((span) => span.service === 'proxy-gateway' && span.traceId === traceId)
    const server = spans.find((span) => span.kind === SERVER && span.name === 'lf.a2a.v1.A2AService/SendMessage')
    const client = spans.find((span) => span.kind === CLIENT && span.name === 'lf.a2a.v1.A2AService/SendMessage')
    const envelope = spans.find((span) => span.name === 'converse.envelope_provider POST')
    const backend = spans.find((span) => span.name === 'converse.backend SendMessage')
    return server !== undefined && client !== undefined && envelope !== undefined && backend !== undefined ? { server, client, envelope, backend } : undefined
  }, 'proxy spans')
  const { server, client, envelope, backend } = proxySpans
  t.equal(server.parentSpanId, callerSpanId, 'the gateway\'s server span is a child of the caller\'s span')
  t.equal(backend.parentSpanId, server.spanId, 'the backend call is a child of the server span')
  t.equal(client.parentSpanId, backend.spanId, 'the upstream call is the backend\'s')
  t.equal(envelope.parentSpanId, server.spanId, 'so is the envelope provider\'s POST')
  t.match(server.attributes, {
    'rpc.system': 'jsonrpc',
    'rpc.service': 'lf.a2a.v1.A2AService',
    'rpc.method': 'SendMessage',
    'rpc.jsonrpc.version': '2.0',
    'a2a.binding': 'jsonrpc',
    'a2a.agent.id': 'shop',
    'converse.author': 'agent',
    'converse.answer.availability': 'assessed',
    'converse.answer.coverage': 'partial',
    'converse.answer.reason': 'insufficient_evidence',
    'converse.citation.count': 1
  })
  t.type(server.attributes['a2a.context.id'], 'string')
  t.match(client.attributes, { 'rpc.system': 'jsonrpc', 'rpc.method': 'SendMessage', 'server.address': '127.0.0.1', 'server.port': Number(new URL(upstreamBase).port) })
  t.ok(envelopes.traceparents.some((header) => header.startsWith(`00-${traceId}-${envelope.spanId}-`)), 'the envelope service got the trace context')

  // The upstream's spans (OTLP/protobuf, the default protocol): its server span is the proxy's CLIENT span's child.
  // Read without a protobuf decoder: the trace id and the parent span id travel as their raw bytes.
  const upstreamExport = await receiver.until(() => receiver.exports.find((entry) =>
    entry.contentType === 'application/x-protobuf' && entry.body.includes(Buffer.from(traceId, 'hex')) &&
    entry.body.includes(Buffer.from(client.spanId, 'hex'))), 'upstream export with the trace')
  t.ok(upstreamExport.body.includes(Buffer.from('upstream-gateway')), 'from the upstream gateway')
  t.ok(upstreamExport.body.includes(Buffer.from('lf.a2a.v1.A2AService/SendMessage')), 'its server span')

  // Nothing of the conversation's text, and no credential, in any span.
  const everything = receiver.exports.map((entry) => entry.body.toString('latin1')).join('\n')
  t.notOk(everything.includes(QUESTION), 'the question is in no export')
  t.notOk(everything.includes(replyText.slice(0, 24)), 'the reply is in no export')
  const values = receiver.spans().flatMap((span: ReceivedSpan) => Object.values(span.attributes).map(String))
  t.notOk(values.some((value) => value.includes(QUESTION) || value.includes(replyText.slice(0, 24))), 'no attribute holds message text')

  // Closing flushes: both exit 0.
  proxy.kill('SIGTERM')
  upstream.kill('SIGTERM')
  t.same(await within(proxy.exited, 20_000), { code: 0, signal: null })
  t.same(await within(upstream.exited, 20_000), { code: 0, signal: null })
})

t.test('a collector that is down: requests are served, the close logs that traces were lost and exits 0', async (t) => {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const child = startMain(t, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '1000', LOG_LEVEL: 'info' })
  const base = await child.listening()
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'down-1', role: 'ROLE_USER', parts: [{ text: QUESTION }] } } })
  })
  t.equal(response.status, 200, 'served while spans wait in the batch')
  child.kill('SIGTERM')
  t.same(await within(child.exited, 20_000), { code: 0, signal: null }, 'closed cleanly')
  const warning = child.lines().find((line) => line.source === 'opentelemetry')
  t.equal(warning?.level, 40, 'one warning says so')
  t.equal(child.stderr(), '')
})

t.test('OTEL_* that cannot be served stop the start with one line', async (t) => {
  const dir = t.testdir({})
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /^a2a-converse: invalid configuration: OTEL_TRACES_EXPORTER must be otlp, console or none \(got "zipkin"\)\n$/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^a2a-converse: invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', AGENTS_FILE: join(dir, 'missing.yaml') }, /^a2a-converse: cannot start: AGENTS_FILE .*missing\.yaml/]
  ]
  const children = cases.map(([env]) => startMain(t, env))
  const exits = await Promise.all(children.map((child) => within(child.exited, 90_000)))
  cases.forEach(([env, expected], index) => {
    t.same(exits[index], { code: 1, signal: null }, JSON.stringify(env))
    t.match(children[index].stderr(), expected)
  })
})
