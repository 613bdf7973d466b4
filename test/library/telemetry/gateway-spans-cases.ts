/**
 * The gateway's spans, read with the OpenTelemetry SDK's in-memory exporter: one SERVER span per A2A call on each
 * binding and door, a child of the caller's `traceparent`, with the turn's envelope as attributes; the store's spans
 * beneath the backend's; a human takeover's wait; the trace context on webhook POSTs; an upstream that fails.
 *
 * Run twice, to the same trees: under an SDK with its default context manager (a plugin user's own: the gateway
 * code registers nothing; gateway-spans.test.ts), and under one with no context manager, as the gateway app
 * registers it (gateway-spans-explicit.test.ts): every parent is then the one the gateway passes explicitly.
 */
import t from 'tap'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { randomBytes, randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createServer } from 'node:http'
import { Client, gateway, operator, SseStream, URI } from '../../fixtures/conversation-gateway.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { webhookReceiver } from '../../fixtures/webhook-receiver.js'
import { rawGrpcClient, startGrpcGateway } from '../../fixtures/grpc.js'
import { status as grpcStatus } from '@grpc/grpc-js'
import { GetTaskRequest, SendMessageRequest } from '@a2a-js/sdk'
import { startUpstream } from '../../fixtures/upstream-agent.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'

const exporter = new InMemorySpanExporter()

function traceparent (): { header: string, traceId: string, spanId: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId }
}

function spansOf (traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)
}

function serverSpans (traceId: string): ReadableSpan[] {
  return spansOf(traceId).filter((span) => span.kind === SpanKind.SERVER)
}

async function until<T> (find: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const JSON_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI }

/** The cases, under a provider registered with `contextManager` (undefined: the SDK's default; null: none). */
export function gatewaySpanCases (contextManager: undefined | null): void {
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  provider.register({ contextManager })
  t.teardown(async () => await provider.shutdown())

  t.test('JSON-RPC: the server span is the caller\'s child, with the routine\'s envelope; store spans beneath it', async (t) => {
    const app = await gateway(t)
    const trace = traceparent()
    const response = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { ...JSON_HEADERS, traceparent: trace.header },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] } } })
    })
    const task = response.json().result.task
    const [server] = serverSpans(trace.traceId)
    t.equal(server.name, 'lf.a2a.v1.A2AService/SendMessage')
    t.equal(server.parentSpanContext?.spanId, trace.spanId)
    t.match(server.attributes, {
      'rpc.system': 'jsonrpc',
      'rpc.method': 'SendMessage',
      'a2a.binding': 'jsonrpc',
      'a2a.agent.id': 'demo',
      'a2a.task.id': task.id,
      'a2a.context.id': task.contextId,
      'a2a.task.state': 'TASK_STATE_INPUT_REQUIRED',
      'converse.author': 'agent',
      'converse.ownership.state': 'ai_owned',
      'converse.ownership.suppressed': false,
      'converse.routine.status': 'waiting_for_input'
    })
    t.type(server.attributes['converse.routine.name'], 'string')
    t.equal(server.status.code, SpanStatusCode.UNSET)
    const backend = spansOf(trace.traceId).find((span) => span.name === 'converse.backend SendMessage')
    t.equal(backend?.parentSpanContext?.spanId, server.spanContext().spanId, 'the backend call is a child of the server span')
    t.equal(backend?.attributes['a2a.agent.id'], 'demo')
    const store = spansOf(trace.traceId).filter((span) => span.name.startsWith('converse.store '))
    t.ok(store.some((span) => span.name === 'converse.store save' && span.attributes['a2a.task.id'] === task.id), 'the task\'s save')
    t.ok(store.length > 0 && store.every((span) => span.parentSpanContext?.spanId === backend?.spanContext().spanId), 'each store span is the backend call\'s child')
    const values = spansOf(trace.traceId).flatMap((span) => Object.values(span.attributes).map(String))
    t.notOk(values.some((value) => value.includes('book a table')), 'no message text in any attribute')
  })

  t.test('the conversation store\'s reads and writes are spans beneath the backend\'s: a local agent, a proxied one, a held turn', async (t) => {
    const upstream = await startUpstream()
    t.teardown(() => upstream.close())
    // A memory store that asks for spans, as the PostgreSQL and embedded ones do (delivery-cases.ts runs those).
    const traced = (): MemoryConversationStore => Object.defineProperty(new MemoryConversationStore({ maxConversationsPerCaller: 100 }), 'traced', { value: true })
    const local = await gateway(t, { conversations: traced() })
    const proxy = await gateway(t, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }], conversations: traced() })
    const untraced = await gateway(t)
    /** One SendMessage in a trace of its own: the reply, and the conversation spans (operation, context id) in order. */
    const turn = async (agent: string, text: string, contextId?: string): Promise<{ result: any, operations: Array<[unknown, unknown]> }> => {
      const trace = traceparent()
      const response = await (agent === 'demo' ? local : agent === 'shop' ? proxy : untraced).inject({
        method: 'POST',
        url: `/a2a/${agent === 'untraced' ? 'demo' : agent}`,
        headers: { ...JSON_HEADERS, traceparent: trace.header },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId } } })
      })
      t.equal(response.statusCode, 200)
      const spans = spansOf(trace.traceId)
      const backend = spans.find((span) => span.name === 'converse.backend SendMessage')
      const conversation = spans.filter((span) => span.name.startsWith('converse.store conversation.')).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      for (const span of conversation) {
        t.equal(span.parentSpanContext?.spanId, backend?.spanContext().spanId, `${span.name}: the backend call's child`)
        t.equal(span.name, `converse.store ${String(span.attributes['converse.store.operation'])}`)
        t.equal(span.attributes['a2a.agent.id'], agent)
        t.equal(span.status.code, SpanStatusCode.UNSET)
      }
      return { result: response.json().result, operations: conversation.map((span) => [span.attributes['converse.store.operation'], span.attributes['a2a.context.id']]) }
    }
    const question = 'How long do I have to return an order?'
    const first = await turn('demo', question)
    const contextId = first.result.message.contextId
    t.same(first.operations, [['conversation.admit', undefined], ['conversation.update', contextId]], 'a new conversation: admitted, then written')
    t.same((await turn('demo', question, contextId)).operations, [['conversation.get', contextId], ['conversation.update', contextId]], 'a continued one: read, then written')
    // A routine opening a task: the update that finds it needs the task's slot first is no failure.
    const booking = await turn('demo', 'book a table', contextId)
    t.equal(booking.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.same(booking.operations.map(([operation]) => operation), ['conversation.get', 'conversation.update', 'conversation.update'], 'tried, the slot taken, written')

    // A proxied agent's turn (the gateway keeps the caller's conversation: OPERATOR_API_KEY is set).
    const relayed = await turn('shop', 'task one')
    const shopContext = relayed.result.task.contextId
    t.same(relayed.operations, [['conversation.update', shopContext]], 'relayed and recorded')
    t.same((await turn('shop', 'task two', shopContext)).operations, [['conversation.get', shopContext], ['conversation.update', shopContext]], 'whose is it, then recorded')
    t.equal((await operator(proxy, 'POST', `shop/conversations/${shopContext}/takeover`)).statusCode, 200)
    const held = await turn('shop', 'a person, please', shopContext)
    t.same(held.operations.slice(0, 1), [['conversation.get', shopContext]], 'found held')
    t.ok(held.operations.some(([operation]) => operation === 'conversation.update'), 'the held turn written')
    t.equal(upstream.seen.length, 2, 'the held turn stayed here')
    t.same((await turn('untraced', question)).operations, [], 'the memory store\'s calls are not spans (the gateway\'s own)')
  })

  t.test('HTTP+JSON and errors: GetTask\'s task on the span, an unknown method named "unknown", an error code', async (t) => {
    const { base } = await startGateway(t)
    const sent = await fetch(`${base}/a2a/demo/rest/message:send`, {
      method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] } })
    })
    const taskId = (await sent.json() as { task: { id: string } }).task.id
    const trace = traceparent()
    await fetch(`${base}/a2a/demo/rest/tasks/${taskId}`, { headers: { ...JSON_HEADERS, traceparent: trace.header } })
    const [get] = serverSpans(trace.traceId)
    t.match(get.attributes, { 'rpc.system': 'a2a_http_json', 'a2a.binding': 'http+json', 'rpc.method': 'GetTask', 'a2a.task.id': taskId, 'a2a.task.state': 'TASK_STATE_INPUT_REQUIRED' })
    const missing = traceparent()
    const notFound = await fetch(`${base}/a2a/demo/rest/tasks/${randomUUID()}`, { headers: { ...JSON_HEADERS, traceparent: missing.header } })
    t.equal(notFound.status, 404)
    const [failed] = serverSpans(missing.traceId)
    t.match(failed.attributes, { 'rpc.method': 'GetTask', 'rpc.jsonrpc.error_code': -32001 })
    t.equal(failed.status.code, SpanStatusCode.UNSET, 'a task not found is the caller\'s error, not the server\'s')

    const unknown = traceparent()
    await fetch(`${base}/a2a/demo`, {
      method: 'POST', headers: { ...JSON_HEADERS, traceparent: unknown.header }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Mine/Secret text', params: {} })
    })
    const [named] = serverSpans(unknown.traceId)
    t.equal(named.name, 'lf.a2a.v1.A2AService/unknown', 'a method the caller made up is not a span name')
    t.match(named.attributes, { 'rpc.method': 'unknown', 'rpc.jsonrpc.error_code': -32601 })

    const v03 = traceparent()
    await fetch(`${base}/a2a/demo`, {
      method: 'POST', headers: { 'content-type': 'application/json', traceparent: v03.header }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'nope' } })
    })
    t.match(serverSpans(v03.traceId)[0].attributes, { 'a2a.binding': 'jsonrpc-0.3', 'rpc.method': 'GetTask', 'rpc.jsonrpc.error_code': -32001 })
  })

  t.test('a stream\'s span lasts the stream; a held turn\'s wait for a person is a span of its own', async (t) => {
    const app = await gateway(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const client = new Client(t, app)
    const routine = await client.task('book a table')
    t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/takeover`)).statusCode, 200)
    const trace = traceparent()
    const held = new SseStream(`${base}/a2a/demo`, { ...JSON_HEADERS, traceparent: trace.header }, {
      jsonrpc: '2.0', id: 's', method: 'SendStreamingMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'a person, please' }], taskId: routine.id, contextId: routine.contextId } }
    })
    await held.next((event: any) => event.result?.statusUpdate?.status?.message?.metadata?.[URI]?.ownership?.suppressed === true)
    t.equal(serverSpans(trace.traceId).length, 0, 'the stream is open: its span has not ended')
    t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/messages`, { text: 'Sam here.' })).statusCode, 201)
    const wait = await until(() => spansOf(trace.traceId).find((span) => span.name === 'converse.human_wait'), 'human wait span')
    t.equal(wait.attributes['a2a.task.id'], routine.id)
    t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/release`)).statusCode, 200)
    await held.done
    const server = await until(() => serverSpans(trace.traceId)[0], 'stream server span')
    t.equal(server.name, 'lf.a2a.v1.A2AService/SendStreamingMessage')
    t.equal(wait.parentSpanContext?.spanId, server.spanContext().spanId, 'the wait is inside the stream\'s span')
    const opening = spansOf(trace.traceId).find((span) => span.name === 'converse.backend SendStreamingMessage')
    t.equal(opening?.parentSpanContext?.spanId, server.spanContext().spanId, 'the backend\'s work up to the first event')
    t.match(server.attributes, { 'a2a.task.state': 'TASK_STATE_COMPLETED', 'a2a.task.id': routine.id, 'converse.ownership.state': 'ai_owned' }, 'the last answer: the release')

    // A stream the client leaves: its span ends with it.
    const left = traceparent()
    const leaving = new SseStream(`${base}/a2a/demo`, { ...JSON_HEADERS, traceparent: left.header }, {
      jsonrpc: '2.0', id: 's2', method: 'SubscribeToTask', params: { id: (await client.task('book a table')).id }
    })
    await leaving.next(() => true)
    leaving.close()
    const subscribe = await until(() => serverSpans(left.traceId)[0], 'left stream span')
    t.equal(subscribe.name, 'lf.a2a.v1.A2AService/SubscribeToTask')
  })

  t.test('a client that leaves while a person is awaited ends the wait\'s span with the stream\'s', async (t) => {
    const app = await gateway(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const routine = await new Client(t, app).task('book a table')
    t.equal((await operator(app, 'POST', `demo/conversations/${routine.contextId}/takeover`)).statusCode, 200)
    const trace = traceparent()
    const held = new SseStream(`${base}/a2a/demo`, { ...JSON_HEADERS, traceparent: trace.header }, {
      jsonrpc: '2.0', id: 's', method: 'SendStreamingMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'a person, please' }], taskId: routine.id, contextId: routine.contextId } }
    })
    await held.next((event: any) => event.result?.statusUpdate?.status?.message?.metadata?.[URI]?.ownership?.suppressed === true)
    held.close()
    const server = await until(() => serverSpans(trace.traceId)[0], 'stream server span')
    const wait = await until(() => spansOf(trace.traceId).find((span) => span.name === 'converse.human_wait'), 'human wait span')
    t.equal(wait.parentSpanContext?.spanId, server.spanContext().spanId)
    t.match(server.attributes, { 'converse.ownership.state': 'human_owned', 'converse.ownership.suppressed': true, 'a2a.task.state': 'TASK_STATE_WORKING' })
  })

  t.test('a turn on a task takes the task\'s turn lock in a span of its own, beneath the backend\'s', async (t) => {
    const app = await gateway(t)
    const routine = await new Client(t, app).task('book a table')
    const trace = traceparent()
    const response = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { ...JSON_HEADERS, traceparent: trace.header },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'for two' }], taskId: routine.id, contextId: routine.contextId } } })
    })
    t.notOk(response.json().error)
    const wait = spansOf(trace.traceId).find((span) => span.name === 'converse.turn_lock wait')
    const backend = spansOf(trace.traceId).find((span) => span.name === 'converse.backend SendMessage')
    t.equal(wait?.parentSpanContext?.spanId, backend?.spanContext().spanId, 'the backend call\'s child')
    t.equal(wait?.attributes['a2a.task.id'], routine.id)
    t.equal(wait?.status.code, SpanStatusCode.UNSET)
    const opening = traceparent()
    await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { ...JSON_HEADERS, traceparent: opening.header },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] } } })
    })
    t.notOk(spansOf(opening.traceId).some((span) => span.name === 'converse.turn_lock wait'), 'a turn that names no task takes no lock')
  })

  t.test('the MCP door: the tool call\'s turn joins the trace of the HTTP request', async (t) => {
    const app = await gateway(t)
    const trace = traceparent()
    const response = await app.inject({
      method: 'POST',
      url: '/mcp/a/demo',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, traceparent: trace.header },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } } })
    })
    t.equal(response.statusCode, 200)
    const [server] = serverSpans(trace.traceId)
    t.equal(server.parentSpanContext?.spanId, trace.spanId)
    t.match(server.attributes, { 'a2a.binding': 'mcp', 'rpc.method': 'SendMessage', 'converse.answer.availability': 'assessed' })
  })

  t.test('a webhook POST carries the trace context of the turn that caused it', async (t) => {
    const receiver = await webhookReceiver(t)
    const app = await gateway(t, { env: { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true' } })
    const trace = traceparent()
    await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { ...JSON_HEADERS, traceparent: trace.header },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        // A path and query of the webhook's (often a secret): never on the span.
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] }, configuration: { taskPushNotificationConfig: { url: `${receiver.url}?key=hook-s3cret` } } }
      })
    })
    const [first] = await receiver.waitFor(1)
    t.match(first.headers.traceparent, new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-01$`))
    const post = await until(() => spansOf(trace.traceId).find((span) => span.name === 'push.webhook POST'), 'webhook span')
    t.equal(post.kind, SpanKind.CLIENT)
    t.strictSame({ ...post.attributes }, { 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': receiver.port, 'http.response.status_code': 200 },
      'exactly the attributes docs/observability.md names: no URL, path or query')

    // A turn sampled out (flags 00): its notifications carry its trace and decision, and nothing is recorded.
    const unsampled = traceparent()
    await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { ...JSON_HEADERS, traceparent: unsampled.header.replace(/-01$/, '-00') },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] }, configuration: { taskPushNotificationConfig: { url: receiver.url } } }
      })
    })
    const itsOwn = await until(() => receiver.received.find((post) => String(post.headers.traceparent).includes(unsampled.traceId)), 'its notification')
    t.match(itsOwn.headers.traceparent, new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`))
    t.same(spansOf(unsampled.traceId), [], 'no span recorded')
  })

  t.test('a proxied agent\'s webhook POST is in the trace of the relayed turn', async (t) => {
    const receiver = await webhookReceiver(t)
    const upstream = await startUpstream()
    t.teardown(() => upstream.close())
    const proxy = await startGateway(t, { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true' }, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }] })
    const trace = traceparent()
    const response = await fetch(`${proxy.base}/a2a/shop`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, traceparent: trace.header },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'task one' }] }, configuration: { taskPushNotificationConfig: { url: receiver.url } } }
      })
    })
    t.equal(response.status, 200)
    const [first] = await receiver.waitFor(1)
    t.match(first.headers.traceparent, new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-01$`))
    const post = await until(() => spansOf(trace.traceId).find((span) => span.name === 'push.webhook POST'), 'webhook span')
    const backend = spansOf(trace.traceId).find((span) => span.name === 'converse.backend SendMessage')
    t.equal(post.parentSpanContext?.spanId, backend?.spanContext().spanId, 'a child of the relayed turn\'s backend span')
  })

  t.test('an upstream that is gone: the CLIENT span says so (call and stream)', async (t) => {
    const upstream = await startUpstream()
    const proxy = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }] })
    await upstream.close()
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const trace = traceparent()
      await fetch(`${proxy.base}/a2a/shop`, {
        method: 'POST',
        headers: { ...JSON_HEADERS, traceparent: trace.header },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } } })
      })
      const client = spansOf(trace.traceId).find((span) => span.kind === SpanKind.CLIENT)
      t.equal(client?.status.code, SpanStatusCode.ERROR, method)
      t.type(client?.attributes['error.type'], 'string')
      const [server] = serverSpans(trace.traceId)
      const backend = spansOf(trace.traceId).find((span) => span.name === `converse.backend ${method}`)
      t.equal(backend?.parentSpanContext?.spanId, server.spanContext().spanId)
      t.equal(backend?.status.code, SpanStatusCode.ERROR, 'the backend failed too')
      t.equal(client?.parentSpanContext?.spanId, backend?.spanContext().spanId)
    }
  })

  t.test('a call sampled out: nothing recorded, and its traceparent still goes upstream and to the envelope provider (the call\'s context, explicit: it is never made active)', async (t) => {
    const upstream = await startUpstream()
    t.teardown(() => upstream.close())
    // An envelope service (the upstream's replies carry none): it records the trace context of each POST.
    const envelopeTraceparents: string[] = []
    const envelopes = createServer((request, response) => {
      request.resume().on('end', () => {
        envelopeTraceparents.push(String(request.headers.traceparent))
        response.writeHead(204)
        response.end()
      })
    })
    await new Promise<void>((resolve) => envelopes.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => { envelopes.closeAllConnections(); envelopes.close(() => resolve()) }))
    const envelopeUrl = `http://127.0.0.1:${(envelopes.address() as AddressInfo).port}/envelope`
    const proxy = await startGateway(t, { ENVELOPE_PROVIDER_URL: envelopeUrl }, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }] })
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const trace = traceparent()
      const before = upstream.seen.length
      const enveloped = envelopeTraceparents.length
      const response = await fetch(`${proxy.base}/a2a/shop`, {
        method: 'POST',
        // The caller decided not to sample (flags 00): the parent-based sampler follows it.
        headers: { ...JSON_HEADERS, traceparent: trace.header.replace(/-01$/, '-00') },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } } })
      })
      t.equal(response.status, 200)
      await response.text()
      t.same(spansOf(trace.traceId), [], `${method}: no span recorded`)
      const sent = upstream.seen.slice(before).map((headers) => headers.traceparent)
      t.equal(sent.length, 1)
      // The gateway's SERVER span (not recorded) is the upstream's parent: the same trace, the decision kept.
      t.match(sent[0], new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-00$`), `${method}: the trace and its decision go upstream`)
      t.not(sent[0], trace.header.replace(/-01$/, '-00'), 'a span of the gateway\'s own')
      const posted = envelopeTraceparents.slice(enveloped)
      t.ok(posted.length > 0, `${method}: the envelope service was asked`)
      for (const header of posted) t.match(header, new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-00$`), `${method}: so does the envelope provider's POST`)
    }
  })

  t.test('gRPC: the span names the call\'s gRPC status (OK, or the one its error travels as)', async (t) => {
    const gateway = await startGrpcGateway(t)
    const raw = rawGrpcClient(t, gateway.target)
    const trace = traceparent()
    const headers = { 'a2a-version': '1.0', 'a2a-extensions': URI, traceparent: trace.header }
    const asked = await raw.unary('sendMessage', SendMessageRequest.fromJSON({ tenant: 'demo', message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] } }), headers)
    t.equal(asked.error, undefined)
    const missing = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: 'no-such-task' }), headers)
    t.equal(missing.error?.code, grpcStatus.NOT_FOUND)
    const spans = serverSpans(trace.traceId)
    const sent = spans.find((span) => span.name.endsWith('/SendMessage'))
    const got = spans.find((span) => span.name.endsWith('/GetTask'))
    t.match(sent?.attributes, { 'rpc.system': 'grpc', 'rpc.grpc.status_code': grpcStatus.OK, 'a2a.binding': 'grpc' })
    t.match(got?.attributes, { 'rpc.system': 'grpc', 'rpc.grpc.status_code': grpcStatus.NOT_FOUND, 'rpc.jsonrpc.error_code': -32001 })
    t.notOk('rpc.jsonrpc.version' in (got?.attributes ?? {}), 'no JSON-RPC version on gRPC')
  })
}
