import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { request as httpRequest } from 'node:http'
import { Readable } from 'node:stream'
import { converse, type ConversePluginOptions } from '../../../packages/a2a-converse/src/fastify/converse-plugin.js'
import { staticEnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { validateEnvelope } from '../../../packages/a2a-converse/src/core/envelope-schema.js'
import type { EnvelopeDraft } from '../../../packages/a2a-converse/src/core/envelope.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'
import type { WireMessage, WireTask } from '../../../packages/a2a-converse/src/core/wire.js'

const OTHER = 'https://example.com/ext/other/v1'
const FULL: EnvelopeDraft = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', originatingTurnId: 't1', originatingRequestId: 'r1' },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [
    { documentId: 'd1', chunkId: 'c1', title: 'Returns policy', sourceUrl: 'https://example.com/returns' },
    { documentId: 'd2', chunkId: 'c2', title: 'Shipping' },
    { documentId: 'd3', chunkId: 'c3', title: 'FAQ' }
  ]
}
const AGENTS: ConversePluginOptions['agents'] = [
  { id: 'demo', card: { name: 'Demo', description: 'A demo agent', capabilities: { extensions: [{ uri: OTHER }] } } },
  { id: 'second', card: { name: 'Second', description: 'Another agent' } }
]

function agentMessage (id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_AGENT', parts: [{ text: `agent ${id}` }], ...extra }
}
function userMessage (id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_USER', parts: [{ text: `user ${id}` }], ...extra }
}
function fullTask (id: string): WireTask {
  return {
    id,
    contextId: 'ctx',
    status: { state: 'TASK_STATE_COMPLETED', message: agentMessage(`${id}-status`) },
    artifacts: [{ artifactId: `${id}-a1`, parts: [{ text: 'x' }] }, { artifactId: `${id}-a2`, parts: [{ text: 'y' }], extensions: [OTHER], metadata: { [OTHER]: { z: 1 } } }],
    history: [userMessage(`${id}-u1`), agentMessage(`${id}-h1`)]
  }
}

interface Built { app: FastifyInstance, logs: any[] }

/** One app per test, closed in teardown; warn-level logs collected through a pino stream. */
async function build (t: Test, options: Partial<ConversePluginOptions> = {}, fastifyOptions: FastifyServerOptions = {}): Promise<Built> {
  const logs: any[] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write (line: string) { logs.push(JSON.parse(line)) } } }, ...fastifyOptions })
  t.teardown(() => app.close())
  await app.register(converse, { agents: AGENTS, provider: staticEnvelopeProvider(FULL), ...options })
  return { app, logs }
}

/** A JSON-RPC endpoint that answers each method with a canned result. */
function rpcRoute (app: FastifyInstance, results: Record<string, unknown>) {
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
    const body = request.body as { id: number, method: string }
    return { jsonrpc: '2.0', id: body.id, result: results[body.method] }
  })
}

function rpc (method: string, params: unknown = {}) {
  return { jsonrpc: '2.0', id: 1, method, params }
}

async function send (app: FastifyInstance, method: string, extensions?: string | string[], url = '/a2a/demo', params: unknown = {}) {
  const headers: Record<string, string | string[]> = {}
  if (extensions !== undefined) headers['a2a-extensions'] = extensions
  return app.inject({ method: 'POST', url, headers, payload: rpc(method, params) })
}

function envelopeOf (object: any) { return object?.metadata?.[URI] }
function urisIn (object: any): number { return (object?.extensions ?? []).filter((uri: string) => uri === URI).length }
function hasNoTrace (t: Test, body: unknown, what: string) { t.notMatch(JSON.stringify(body), URI, `${what}: no trace of the URI`) }

t.test('negotiation over HTTP: junk, CR/LF and 1000 items', async (t) => {
  const { app } = await build(t)
  let seen: unknown
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
    seen = request.converse
    return { jsonrpc: '2.0', id: 1, result: { message: agentMessage('m') } }
  })
  const junk = Array.from({ length: 8192 }, (_, i) => String.fromCharCode(33 + (i * 7919) % 94)).join('')
  const junkRes = await send(app, 'SendMessage', junk)
  t.equal(junkRes.statusCode, 200, '8 KB of junk: still answered')
  t.notOk('a2a-extensions' in junkRes.headers)
  hasNoTrace(t, junkRes.json(), '8 KB junk')

  const items = Array.from({ length: 1000 }, (_, i) => `urn:junk:${i}`)
  const many = await send(app, 'SendMessage', items.join(','))
  t.equal(many.statusCode, 200)
  t.notOk('a2a-extensions' in many.headers, '1000 items: nothing activated')
  t.ok((seen as any).requested.length <= 64, 'requested is bounded')
  const manyWithUri = await send(app, 'SendMessage', [URI, ...items].join(','))
  t.equal(manyWithUri.headers['a2a-extensions'], URI, 'only the declared URI is echoed')
  t.same((seen as any).activated, [URI])

  // light-my-request passes header values through as given; the URI glued to CR/LF junk is not the URI.
  for (const attempt of [`${URI}\r\nX-Injected: 1`, `x\r\nA2A-Extensions: ${URI}x`]) {
    const res = await send(app, 'SendMessage', attempt)
    t.notOk('x-injected' in res.headers, 'no injected header')
    t.notOk('a2a-extensions' in res.headers, 'nothing activated')
    hasNoTrace(t, res.json(), JSON.stringify(attempt))
  }
})

t.test('negotiation outcomes are remembered per agent, boundedly, and never shared mutably', async (t) => {
  const { app } = await build(t)
  const states: any[] = []
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
    states.push(request.converse)
    return { jsonrpc: '2.0', id: 1, result: { message: agentMessage('m') } }
  })
  // More distinct values than the cache holds: every one still negotiates exactly.
  for (let i = 0; i < 100; i++) {
    const res = await send(app, 'SendMessage', `urn:x:${i}, ${URI}`)
    t.equal(res.headers['a2a-extensions'], URI)
    const plain = await send(app, 'SendMessage', `urn:y:${i}`)
    t.notOk('a2a-extensions' in plain.headers)
  }
  t.same(states[198], { agentId: 'demo', requested: ['urn:x:99', URI], activated: [URI], active: true }, 'past the cache limit')
  await send(app, 'SendMessage', 'urn:x:0, ' + URI)
  t.same(states.at(-1), states[0], 'a remembered value gives the same outcome')
  t.ok(Object.isFrozen(states[0].requested) && Object.isFrozen(states[0].activated), 'shared arrays are frozen')
  t.not(states.at(-1), states[0], 'each request gets its own state object')
  const second = await send(app, 'SendMessage', 'urn:x:0, ' + URI, '/a2a/second')
  t.equal(second.headers['a2a-extensions'], URI, 'per agent')
  t.equal(states.at(-1).agentId, 'second')
})

t.test('negotiation over a real socket: several header lines, CR/LF is refused by the HTTP parser', async (t) => {
  const { app } = await build(t)
  rpcRoute(app, { SendMessage: { message: agentMessage('m') } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }

  function post (headers: Record<string, string | string[]>): Promise<{ status: number, headers: Record<string, unknown>, body: any }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/a2a/demo', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        let data = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => { data += chunk })
        res.on('end', () => resolve({ status: res.statusCode as number, headers: res.headers, body: JSON.parse(data) }))
      })
      req.on('error', reject)
      req.end(JSON.stringify(rpc('SendMessage')))
    })
  }
  const lines = await post({ 'a2a-extensions': ['urn:a, urn:b', ` ${URI} `, URI] })
  t.equal(lines.headers['a2a-extensions'], URI, 'several header lines are one list')
  t.same(envelopeOf(lines.body.result.message), FULL)

  const junk = await post({ 'a2a-extensions': 'x'.repeat(8192) })
  t.equal(junk.status, 200)
  t.notOk('a2a-extensions' in junk.headers)

  // A client cannot even send CR/LF in a value; over a raw socket the parser rejects the request.
  t.throws(() => httpRequest({ host: '127.0.0.1', port, headers: { 'a2a-extensions': `${URI}\r\nX: 1` } }))
  const { connect } = await import('node:net')
  const raw = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end(`POST /a2a/demo HTTP/1.1\r\nHost: x\r\nA2A-Extensions: ${URI}\rX-Injected: 1\r\nContent-Length: 2\r\n\r\n{}`)
    })
    let data = ''
    socket.on('data', (chunk) => { data += chunk })
    socket.on('close', () => resolve(data))
  })
  t.match(raw, /^HTTP\/1\.1 400/, 'bare CR in a header value: 400 from the parser')
  t.notMatch(raw, /x-injected/i)
})

t.test('request.converse exposes {requested, activated} per request', async (t) => {
  const { app } = await build(t)
  const states: unknown[] = []
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
    states.push(request.converse)
    return { jsonrpc: '2.0', id: 1, result: {} }
  })
  app.post('/rpc', { config: { converse: { agentId: 'second' } } }, async (request) => {
    states.push(request.converse)
    return { jsonrpc: '2.0', id: 1, result: {} }
  })
  app.post('/default', { config: { converse: true } }, async (request) => {
    states.push(request.converse)
    return { jsonrpc: '2.0', id: 1, result: {} }
  })
  await send(app, 'SendMessage', `urn:x, ${URI}`)
  await send(app, 'SendMessage')
  await send(app, 'SendMessage', URI, '/rpc')
  await send(app, 'SendMessage', URI, '/default')
  const ghost = await send(app, 'SendMessage', URI, '/a2a/ghost')
  t.same(states, [
    { agentId: 'demo', requested: ['urn:x', URI], activated: [URI], active: true },
    { agentId: 'demo', requested: [], activated: [], active: false },
    { agentId: 'second', requested: [URI], activated: [URI], active: true },
    { agentId: 'demo', requested: [URI], activated: [URI], active: true },
    { agentId: 'ghost', requested: [], activated: [], active: false }
  ], 'fixed agent, :agentId, default agent, unknown agent')
  t.notOk('a2a-extensions' in ghost.headers, 'an unknown agent activates nothing')
})

t.test('JSON replies: every object kind of every method is decorated', async (t) => {
  const { app, logs } = await build(t)
  const task = fullTask('t1')
  rpcRoute(app, {
    SendMessage: { message: agentMessage('m', { extensions: [OTHER], metadata: { [OTHER]: { keep: true }, trace: 'x' } }) },
    GetTask: task,
    CancelTask: task,
    ListTasks: { tasks: [task, fullTask('t2')], nextPageToken: '', pageSize: 2, totalSize: 2 }
  })
  const before = structuredClone(task)

  const message = (await send(app, 'SendMessage', URI)).json().result.message
  t.same(envelopeOf(message), FULL)
  t.same(message.extensions, [OTHER, URI], 'other extensions kept, ours once')
  t.same(message.metadata[OTHER], { keep: true })
  t.equal(message.metadata.trace, 'x', 'other metadata keys kept')

  for (const method of ['GetTask', 'CancelTask']) {
    const result = (await send(app, method, URI)).json().result
    for (const object of [result.status.message, ...result.artifacts, result.history[1]]) {
      t.same(envelopeOf(object), FULL, `${method}: agent object decorated`)
      t.equal(urisIn(object), 1)
    }
    t.same(result.artifacts[1].extensions, [OTHER, URI])
    t.same(result.artifacts[1].metadata[OTHER], { z: 1 })
    t.same(result.history[0], task.history?.[0], `${method}: user message left alone`)
  }
  const list = (await send(app, 'ListTasks', URI)).json().result
  t.equal(list.tasks.length, 2)
  for (const listed of list.tasks) {
    t.same(envelopeOf(listed.status.message), FULL)
    t.same(envelopeOf(listed.artifacts[0]), FULL)
    t.same(envelopeOf(listed.history[1]), FULL)
    t.notOk(envelopeOf(listed.history[0]))
  }
  t.same(task, before, 'the route\'s objects are not mutated')
  t.equal(logs.length, 0, 'no warnings')
})

t.test('SendMessage {task} decorates status.message, artifacts and agent history', async (t) => {
  const { app } = await build(t)
  const task = fullTask('t')
  task.history?.push(userMessage('u-with-meta', { metadata: { [URI]: { author: 'human' } }, extensions: [URI] }))
  rpcRoute(app, { SendMessage: { task } })
  const result = (await send(app, 'SendMessage', URI)).json().result
  t.same(envelopeOf(result.task.status.message), FULL)
  t.same(result.task.artifacts.map(envelopeOf), [FULL, FULL])
  t.same(envelopeOf(result.task.history[1]), FULL)
  t.same(result.task.history[0], task.history?.[0], 'user message left alone')
  t.same(result.task.history[2], task.history?.[2], 'a user message is left alone even when active')
  t.ok(validateEnvelope(envelopeOf(result.task.status.message)))
})

t.test('no leak: strip when not activated, even where the agent or a store put the envelope', async (t) => {
  // Default provider: the envelope the agent attached itself.
  const { app } = await build(t, { provider: undefined })
  const dirty = { extensions: [URI, OTHER], metadata: { [URI]: FULL, keep: 1 } }
  const stored: WireTask = {
    id: 't',
    contextId: 'ctx',
    status: { state: 'TASK_STATE_COMPLETED', message: agentMessage('s', dirty) },
    artifacts: [{ artifactId: 'a', parts: [], ...dirty }],
    history: [userMessage('u', dirty), agentMessage('h', dirty)]
  }
  rpcRoute(app, {
    SendMessage: { message: agentMessage('m', dirty) },
    GetTask: stored,
    ListTasks: { tasks: [stored] },
    SendStreamingMessage: { statusUpdate: { taskId: 't', contextId: 'ctx', status: stored.status } },
    SubscribeToTask: { artifactUpdate: { taskId: 't', contextId: 'ctx', artifact: stored.artifacts?.[0] } }
  })
  for (const method of ['SendMessage', 'GetTask', 'ListTasks', 'SendStreamingMessage', 'SubscribeToTask']) {
    for (const header of [undefined, OTHER, `${URI}/`]) {
      const res = await send(app, method, header)
      hasNoTrace(t, res.json(), `${method} with ${String(header)}`)
      t.match(JSON.stringify(res.json()), '"keep":1', 'other metadata survives')
      t.match(JSON.stringify(res.json()), OTHER, 'other extensions survive')
    }
  }
  const active = (await send(app, 'GetTask', URI)).json().result
  t.same(envelopeOf(active.status.message), FULL, 'when active, the attached envelope goes out')
  t.same(envelopeOf(active.history[0]), FULL, 'a user message is left as it is')
})

t.test('activation is per request: SendMessage with, GetTask without, and the reverse', async (t) => {
  const { app } = await build(t, { provider: undefined })
  const store = new Map<string, WireTask>()
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
    const { method, params } = request.body as { method: string, params: { id?: string, message?: WireMessage } }
    if (method === 'SendMessage') {
      const id = `task-${store.size + 1}`
      const task: WireTask = {
        id,
        contextId: 'ctx',
        status: { state: 'TASK_STATE_COMPLETED', message: agentMessage(`${id}-reply`, { metadata: { [URI]: FULL }, extensions: [URI] }) },
        history: [params.message as WireMessage]
      }
      store.set(id, task)
      return { jsonrpc: '2.0', id: 1, result: { task } }
    }
    return { jsonrpc: '2.0', id: 1, result: store.get(params.id as string) }
  })
  const sent = (await send(app, 'SendMessage', URI, '/a2a/demo', { message: userMessage('q') })).json().result.task
  t.same(envelopeOf(sent.status.message), FULL, 'SendMessage with the header: envelope')
  const got = await send(app, 'GetTask', undefined, '/a2a/demo', { id: sent.id })
  hasNoTrace(t, got.json(), 'GetTask without the header')

  const sent2 = await send(app, 'SendMessage', undefined, '/a2a/demo', { message: userMessage('q2') })
  hasNoTrace(t, sent2.json(), 'SendMessage without the header')
  const got2 = (await send(app, 'GetTask', URI, '/a2a/demo', { id: sent2.json().result.task.id })).json().result
  t.same(envelopeOf(got2.status.message), FULL, 'GetTask with the header: envelope')
  t.equal(urisIn(got2.status.message), 1)
})

t.test('SSE: each frame is decorated through transformResult and the echo header is set', async (t) => {
  const { app } = await build(t)
  const events = [
    { task: fullTask('t') },
    { statusUpdate: { taskId: 't', contextId: 'ctx', status: { state: 'TASK_STATE_WORKING', message: agentMessage('s') } } },
    { artifactUpdate: { taskId: 't', contextId: 'ctx', artifact: { artifactId: 'a', parts: [{ text: 'Hel' }] }, lastChunk: false } },
    { statusUpdate: { taskId: 't', contextId: 'ctx', status: { state: 'TASK_STATE_COMPLETED' } } }
  ]
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request, reply) => {
    const { id, method } = request.body as { id: number, method: string }
    if (method === 'SendStreamingMessage' && (request.body as any).params.single === true) {
      const result = await app.converse.transformResult(request, method, { message: agentMessage('only') })
      return reply.header('content-type', 'text/event-stream').send(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`)
    }
    async function * frames () {
      for (const event of events) {
        const result = await app.converse.transformResult(request, method, event)
        yield `data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`
      }
    }
    return reply.header('content-type', 'text/event-stream').send(Readable.from(frames()))
  })
  function parse (body: string) {
    return body.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.replace(/^data: /, '')).result)
  }
  for (const method of ['SendStreamingMessage', 'SubscribeToTask']) {
    const res = await send(app, method, URI)
    t.equal(res.headers['content-type'], 'text/event-stream')
    t.equal(res.headers['a2a-extensions'], URI, `${method}: echo header on the stream`)
    const [task, status, artifact, done] = parse(res.body)
    t.same(envelopeOf(task.task.status.message), FULL, 'task event: status.message')
    t.same(task.task.artifacts.map(envelopeOf), [FULL, FULL], 'task event: artifacts')
    t.same(envelopeOf(task.task.history[1]), FULL, 'task event: agent history')
    t.notOk(envelopeOf(task.task.history[0]), 'task event: user history left alone')
    t.same(envelopeOf(status.statusUpdate.status.message), FULL, 'statusUpdate.status.message')
    t.equal(urisIn(status.statusUpdate.status.message), 1)
    t.same(envelopeOf(artifact.artifactUpdate.artifact), FULL, 'artifactUpdate.artifact')
    t.same(done, events[3], 'a status update without message is unchanged')

    const plain = await send(app, method)
    t.notOk('a2a-extensions' in plain.headers, `${method}: no echo header when not activated`)
    hasNoTrace(t, plain.body, `${method} not activated`)
  }
  const single = await send(app, 'SendStreamingMessage', URI, '/a2a/demo', { single: true })
  t.equal(single.headers['a2a-extensions'], URI)
  t.same(envelopeOf(parse(single.body)[0].message), FULL, 'message event')
})

t.test('SSE over a real socket: the echo header arrives with the stream', async (t) => {
  const { app } = await build(t)
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request, reply) => {
    const result = await app.converse.transformResult(request, 'SendStreamingMessage', { message: agentMessage('m') })
    return reply.header('content-type', 'text/event-stream').send(Readable.from([`data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result })}\n\n`]))
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const res = await fetch(`http://127.0.0.1:${port}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-extensions': URI },
    body: JSON.stringify(rpc('SendStreamingMessage'))
  })
  t.equal(res.headers.get('a2a-extensions'), URI)
  const frame = JSON.parse((await res.text()).replace(/^data: /, ''))
  t.same(envelopeOf(frame.result.message), FULL)
})

t.test('transformResult: unmarked requests, other methods, missing body', async (t) => {
  const { app } = await build(t)
  const result = { message: agentMessage('m', { metadata: { [URI]: FULL } }) }
  let outputs: unknown[] = []
  app.post('/plain', async (request) => {
    outputs = [await app.converse.transformResult(request, 'SendMessage', result)]
    return {}
  })
  app.get('/a2a/:agentId/poll', { config: { converse: true } }, async (request) => {
    outputs = [
      await app.converse.transformResult(request, 'SendMessage', result),
      await app.converse.transformResult(request, 'GetExtendedAgentCard', result)
    ]
    return {}
  })
  await app.inject({ method: 'POST', url: '/plain', headers: { 'a2a-extensions': URI }, payload: {} })
  t.equal(outputs[0], result, 'an unmarked route is left alone')

  await app.inject({ method: 'GET', url: '/a2a/demo/poll', headers: { 'a2a-extensions': URI } })
  t.same(envelopeOf((outputs[0] as any).message), FULL, 'no body (GET): still decorated')
  t.equal(outputs[1], result, 'a method without envelopes is left alone')

  await app.inject({ method: 'GET', url: '/a2a/demo/poll' })
  t.notOk(envelopeOf((outputs[0] as any).message), 'no body, not active: stripped')
  t.equal(outputs[1], result)
})

t.test('JSON replies the hook leaves alone', async (t) => {
  const { app } = await build(t)
  const dirty = agentMessage('m', { metadata: { [URI]: FULL } })
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request, reply) => {
    const kind = (request.body as any)?.kind
    switch (kind) {
      case 'error': return { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }
      case 'null': return reply.send(null)
      case 'number': return reply.send(5)
      case 'text': return reply.type('application/json').send('{"result":"x"}')
      case 'no-method': return { jsonrpc: '2.0', id: 1, result: { message: dirty } }
      case 'same': return { jsonrpc: '2.0', id: 1, result: { message: agentMessage('clean') } }
      case 'other-method': return { jsonrpc: '2.0', id: 1, result: { message: dirty } }
    }
  })
  const error = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'a2a-extensions': URI }, payload: { ...rpc('SendMessage'), kind: 'error' } })
  t.same(error.json(), { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } })
  t.equal(error.headers['a2a-extensions'], URI, 'the echo header is set on error replies too')
  t.equal((await app.inject({ method: 'POST', url: '/a2a/demo', payload: { ...rpc('SendMessage'), kind: 'null' } })).body, 'null')
  t.equal((await app.inject({ method: 'POST', url: '/a2a/demo', payload: { ...rpc('SendMessage'), kind: 'number' } })).body, '5')
  t.equal((await app.inject({ method: 'POST', url: '/a2a/demo', payload: { ...rpc('SendMessage'), kind: 'text' } })).body, '{"result":"x"}')
  const noMethod = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'a2a-extensions': URI }, payload: { kind: 'no-method' } })
  t.same(noMethod.json().result.message, dirty, 'a body without a method string is not a JSON-RPC call: left alone')
  const same = await app.inject({ method: 'POST', url: '/a2a/demo', payload: { ...rpc('SendMessage'), kind: 'same' } })
  t.same(same.json().result.message, agentMessage('clean'), 'nothing to strip')
  const other = await app.inject({ method: 'POST', url: '/a2a/demo', payload: { ...rpc('GetExtendedAgentCard'), kind: 'other-method' } })
  t.same(other.json().result.message, dirty, 'a method without envelopes is left alone')
})

t.test('unmarked routes get no hooks and no headers', async (t) => {
  const { app } = await build(t)
  const hooks: Record<string, { onRequest: unknown, preSerialization: unknown }> = {}
  app.addHook('onRoute', (route) => {
    hooks[`${route.method as string} ${route.url}`] = { onRequest: route.onRequest, preSerialization: route.preSerialization }
  })
  const dirty = { jsonrpc: '2.0', id: 1, result: { message: agentMessage('m', { metadata: { [URI]: FULL }, extensions: [URI] }) } }
  let state: unknown = 'unset'
  app.post('/plain', async (request) => { state = request.converse; return dirty })
  rpcRoute(app, { SendMessage: { message: agentMessage('m') } })
  await app.ready()
  t.same(hooks['POST /plain'], { onRequest: undefined, preSerialization: undefined }, 'no hooks on an unmarked route')
  t.equal((hooks['POST /a2a/:agentId'].onRequest as unknown[]).length, 1, 'one onRequest hook on a marked route')
  t.equal((hooks['POST /a2a/:agentId'].preSerialization as unknown[]).length, 1, 'one preSerialization hook')

  for (const header of [undefined, URI]) {
    const res = await app.inject({ method: 'POST', url: '/plain', headers: header === undefined ? {} : { 'a2a-extensions': header }, payload: rpc('SendMessage') })
    t.notOk('a2a-extensions' in res.headers, 'no echo header')
    t.same(res.json(), dirty, 'payload untouched')
    t.equal(state, null, 'request.converse is null')
  }
  const card = await app.inject('/a2a/demo/.well-known/agent-card.json?x=1')
  t.notOk('a2a-extensions' in card.headers)
})

t.test('marked routes keep their own hooks', async (t) => {
  const { app } = await build(t)
  const order: string[] = []
  app.post('/a2a/:agentId', {
    config: { converse: true },
    onRequest: (_request, _reply, done) => { order.push('own onRequest'); done() },
    preSerialization: [async (_request, _reply, payload: any) => { order.push('own preSerialization'); return { ...payload, own: true } }]
  }, async () => ({ jsonrpc: '2.0', id: 1, result: { message: agentMessage('m') } }))
  const res = await send(app, 'SendMessage', URI)
  t.same(order, ['own onRequest', 'own preSerialization'])
  t.equal(res.json().own, true)
  t.same(envelopeOf(res.json().result.message), FULL)
  t.equal(res.headers['a2a-extensions'], URI)
})

t.test('route config errors name the route', async (t) => {
  for (const config of [{ agentId: 'ghost' }, null, 'yes', false]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(converse, { agents: AGENTS })
    t.throws(() => app.post('/bad', { config: { converse: config as any } }, async () => ({})),
      { name: 'InvalidOptionError', option: 'config.converse of POST /bad', message: /must be true or \{ agentId \} naming a declared agent/ },
      JSON.stringify(config))
  }
})
