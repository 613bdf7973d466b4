/**
 * What only the Express door has: option checks naming the option, a body parser mounted before the router,
 * bodies cut short or streamed past the limit, failures answered 500 without a stack, the default logger and
 * a request's own `req.log`, `decorateRoute` details and `transformResult` for a user's SSE route.
 */
import t, { type Test } from 'tap'
import type { Server } from 'node:http'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import express, { type Express } from 'express'
import { converseRouter, type ConverseRouterOptions } from 'a2a-converse/express'
import { InvalidOptionError, staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { URI, userMessage } from '../../fixtures/doors.js'

const card = { name: 'Demo', description: 'd' }
const VALID = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hi') } })
const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' }

async function listen (t: Test, app: Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function quiet () {
  const lines: Array<Record<string, any>> = []
  return {
    lines,
    logger: {
      error: (object: object, msg: string) => { lines.push({ level: 'error', ...object, msg }) },
      warn: (object: object, msg: string) => { lines.push({ level: 'warn', ...object, msg }) },
      info: () => {}
    }
  }
}

t.test('options are checked at creation and errors name the option', async (t) => {
  const agents = [{ id: 'demo', card }]
  const cases: Array<[unknown, string]> = [
    [null, 'options'],
    [{ agents: [] }, 'agents'],
    [{ agents, publicUrl: 'ftp://x' }, 'publicUrl'],
    [{ agents, mcpPublicUrl: 7 }, 'mcpPublicUrl'],
    [{ agents, defaultAgentCard: 'yes' }, 'defaultAgentCard'],
    [{ agents, bodyLimit: 0 }, 'bodyLimit'],
    [{ agents, bodyLimit: 1.5 }, 'bodyLimit'],
    [{ agents, logger: { error () {} } }, 'logger'],
    [{ agents, logger: null }, 'logger'],
    [{ agents: [{ id: 'demo', card }, { id: 'x', card, executor: {} }] }, 'agents[1].executor'],
    [{ agents: [{ id: 'x', card, executor: messageExecutor(), extendedCard: 'no' }] }, 'agents[0].extendedCard'],
    [{ agents: [{ id: 'x', card, executor: messageExecutor() }], events: {} }, 'events'],
    [{ agents, provider: null }, 'provider'],
    [{ agents: [{ id: 'x', card, executor: messageExecutor() }, { id: 'y', card }], rootAgentId: 'y' }, 'rootAgentId']
  ]
  for (const [options, option] of cases) {
    t.throws(() => converseRouter(options as ConverseRouterOptions), { name: 'InvalidOptionError', option }, option)
  }
  const router = converseRouter({ agents })
  t.throws(() => router.decorateRoute({ agentId: 'ghost' }), new InvalidOptionError('decorateRoute agentId', 'must name a declared agent'))
})

t.test('a body parser mounted before the router: its parsed body is taken as it is', async (t) => {
  const app = express()
  app.use(express.json() as any)
  app.use(converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor() }] }))
  const base = await listen(t, app)
  const sent = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: HEADERS, body: VALID })
  t.equal((await sent.json() as any).result.message.parts[0].text, 'echo: hi')
  const empty = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: { 'a2a-version': '1.0' } })
  t.equal(empty.status, 400, 'no body: -32700 as without the parser')
  const parsedEmpty = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: HEADERS, body: '' })
  t.equal((await parsedEmpty.json() as any).error.code, -32600, 'what the parser made of an empty body ({}) is checked')
  const rest = await fetch(`${base}/a2a/demo/rest/message:send`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ message: userMessage('hi') }) })
  t.equal((await rest.json() as any).message.parts[0].text, 'echo: hi', 'HTTP+JSON takes the parsed body too')

  const drained = express()
  drained.use((request: express.Request, _response: express.Response, next: express.NextFunction) => { request.resume().on('end', () => next()) })
  drained.use(converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor() }] }))
  const drainedBase = await listen(t, drained)
  const gone = await fetch(`${drainedBase}/a2a/demo`, { method: 'POST', headers: HEADERS, body: VALID })
  t.equal((await gone.json() as any).error.code, -32700, 'a body read by someone else and not left behind is absent')
})

t.test('bodies: streamed past the limit is 413; a client that leaves mid-body gets nothing and breaks nothing', async (t) => {
  const app = express()
  app.use(converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor() }], bodyLimit: 100 }))
  const base = await listen(t, app)
  const { port } = new URL(base)
  const chunked = await new Promise<{ status: number, body: any }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/a2a/demo', headers: HEADERS }, (res) => {
      let text = ''
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode as number, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.write('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":')
    req.write(JSON.stringify(userMessage('x'.repeat(200))))
    req.end('}}')
  })
  t.equal(chunked.status, 413)
  t.match(chunked.body, { id: null, error: { code: -32600, message: 'Request payload too large' } })

  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write('POST /a2a/demo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 90\r\n\r\n{"jsonrpc"')
      setImmediate(() => socket.destroy())
    })
    socket.on('close', () => resolve())
  })
  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write('POST /a2a/demo/rest/message:send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 90\r\n\r\n{"message"')
      setImmediate(() => socket.destroy())
    })
    socket.on('close', () => resolve())
  })
  const after = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}' })
  t.equal((await after.json() as any).error.code, -32001, 'the next request is served')
})

t.test('failures are answered 500 without a stack and logged; the default logger writes to stderr', async (t) => {
  const cyclic: Record<string, unknown> = { name: 'Extended' }
  cyclic.self = cyclic
  const capture = quiet()
  const app = express()
  app.use(converseRouter({
    agents: [{ id: 'demo', card: { ...card, capabilities: { extendedAgentCard: true } }, executor: messageExecutor(), extendedCard: () => cyclic }],
    publicUrl: (request) => {
      if (request.headers['x-fail'] !== undefined) throw new Error('secret at /srv/app.js')
      return 'https://example.com'
    },
    logger: capture.logger
  }))
  const base = await listen(t, app)
  const rpc = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' }) })
  t.equal(rpc.status, 500)
  t.strictSame(await rpc.json(), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } })
  const cardReply = await fetch(`${base}/a2a/demo/.well-known/agent-card.json`, { headers: { 'x-fail': '1' } })
  t.equal(cardReply.status, 500)
  const text = await cardReply.text()
  t.strictSame(JSON.parse(text), { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  t.notMatch(text, /secret|srv/)
  t.strictSame(capture.lines.map((line) => [line.level, line.msg]), [['error', 'a2a-converse route failed'], ['error', 'a2a-converse route failed']])

  const errors = t.capture(console, 'error')
  const warnings = t.capture(console, 'warn')
  const plain = express()
  plain.use(converseRouter({
    agents: [{ id: 'demo', card: { ...card, capabilities: { extendedAgentCard: true } }, executor: messageExecutor(), extendedCard: () => cyclic }],
    provider: { envelope () { throw new Error('provider down') } }
  }))
  const plainBase = await listen(t, plain)
  await fetch(`${plainBase}/a2a/demo`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' }) })
  await fetch(`${plainBase}/a2a/demo`, { method: 'POST', headers: { ...HEADERS, 'a2a-extensions': URI }, body: VALID })
  await fetch(`${plainBase}/a2a/demo`, { method: 'POST', headers: HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"nope"}' })
  t.match(errors(), [{ args: ['a2a-converse route failed', { err: Error }] }])
  t.match(warnings(), [{ args: [/provider failed/, { agentId: 'demo' }] }])
})

t.test('a request\'s own req.log (pino-http) is used', async (t) => {
  const capture = quiet()
  const own = quiet()
  const app = express()
  app.use((request, _response, next) => {
    (request as unknown as { log: unknown }).log = own.logger
    next()
  })
  app.use(converseRouter({
    agents: [{ id: 'demo', card, executor: messageExecutor() }],
    provider: { envelope () { throw new Error('provider down') } },
    logger: capture.logger
  }))
  const base = await listen(t, app)
  await fetch(`${base}/a2a/demo`, { method: 'POST', headers: { ...HEADERS, 'a2a-extensions': URI }, body: VALID })
  t.equal(capture.lines.length, 0)
  t.match(own.lines, [{ level: 'warn', agentId: 'demo' }])
})

t.test('defaultAgentCard: false, and an agent list with no executor serves no endpoint', async (t) => {
  const app = express()
  app.use(converseRouter({ agents: [{ id: 'demo', card }], defaultAgentCard: false }))
  const base = await listen(t, app)
  t.equal((await fetch(`${base}/.well-known/agent-card.json`)).status, 404)
  t.equal((await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)).status, 200)
  t.equal((await fetch(`${base}/a2a/demo`, { method: 'POST', headers: HEADERS, body: VALID })).status, 404)
  const tools = await fetch(`${base}/api/v1/mcp/converse/tools?agentId=a&agentId=b`)
  t.equal(tools.status, 404, 'a repeated agentId names no agent')
})

t.test('decorateRoute: fixed and default agents, res.locals.converse, replies it leaves alone, SSE through transformResult', async (t) => {
  const router = converseRouter({
    agents: [{ id: 'demo', card }, { id: 'second', card }],
    provider: { envelope: async () => ENVELOPE as never }
  })
  const states: unknown[] = []
  const message = { messageId: 'a', role: 'ROLE_AGENT', parts: [{ text: 'x' }] }
  const app = express()
  app.use(router)
  app.post('/fixed', express.json(), router.decorateRoute({ agentId: 'second' }), (_request, response) => {
    states.push(response.locals.converse)
    response.json({ jsonrpc: '2.0', id: 1, result: { message } })
  })
  app.post('/default', express.json(), router.decorateRoute(), (request, response) => {
    states.push(response.locals.converse)
    const kind = (request.body as { params?: { kind?: string } }).params?.kind
    if (kind === 'plain') response.json({ hello: 'world' })
    else if (kind === 'null') response.json(null)
    else if (kind === 'cyclic') {
      const bad: Record<string, unknown> = { ...message }
      bad.self = bad
      response.json({ jsonrpc: '2.0', id: 1, result: { message: bad } })
    } else response.json({ jsonrpc: '2.0', id: 1, result: { message } })
  })
  app.post('/stream', express.json(), router.decorateRoute(), async (request, response) => {
    const result = await router.transformResult(response, 'SendStreamingMessage', { message })
    response.setHeader('content-type', 'text/event-stream')
    response.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result })}\n\n`)
  })
  app.post('/unmarked', express.json(), (_request, response) => {
    response.json({ result: router.transformResult(response, 'SendMessage', { message }) })
  })
  // The app's own error handler (Express's default prints the stack in development).
  app.use((_error: unknown, _request: express.Request, response: express.Response, _next: express.NextFunction) => {
    response.status(500).end()
  })
  const base = await listen(t, app)
  const post = (path: string, params: unknown = {}, method = 'SendMessage') =>
    fetch(base + path, { method: 'POST', headers: { ...HEADERS, 'a2a-extensions': URI }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })

  const fixed = await post('/fixed')
  t.equal(fixed.headers.get('a2a-extensions'), URI)
  t.match((await fixed.json() as any).result.message.metadata[URI], { answerCoverage: ENVELOPE.answerCoverage }, 'an async provider: decorated')
  t.strictSame(await (await post('/default', { kind: 'plain' })).json(), { hello: 'world' }, 'not a JSON-RPC result: left alone')
  t.equal(await (await post('/default', { kind: 'null' })).text(), 'null')
  t.equal((await post('/default', { kind: 'cyclic' })).status, 500, 'an unserializable reply goes to Express\'s error handling')
  const noMethod = await fetch(`${base}/default`, { method: 'POST', headers: { ...HEADERS, 'a2a-extensions': URI }, body: '{"params":{}}' })
  t.notMatch(await noMethod.text(), URI, 'no JSON-RPC method: left alone')
  t.match(states.slice(0, 2), [
    { agentId: 'second', requested: [URI], activated: [URI], active: true },
    { agentId: 'demo', active: true }
  ])
  const stream = await post('/stream', {}, 'SendStreamingMessage')
  t.equal(stream.headers.get('a2a-extensions'), URI, 'the echo header on the user\'s stream')
  t.match(JSON.parse((await stream.text()).slice(6)).result.message.metadata[URI], { answerCoverage: ENVELOPE.answerCoverage })
  t.strictSame((await (await post('/unmarked')).json() as any).result, { message }, 'transformResult on an unmarked route: unchanged')
})

t.test('cardFor and extension are exposed for the user\'s own handlers', async (t) => {
  const router = converseRouter({ agents: [{ id: 'demo', card }], provider: staticEnvelopeProvider(ENVELOPE as never), publicUrl: 'https://a.example' })
  t.equal(router.extension.defaultAgentId, 'demo')
  const app = express()
  router.get('/mine', (request, response) => { response.json(router.cardFor('demo', request)) })
  app.use('/v2', router)
  const base = await listen(t, app)
  t.equal((await (await fetch(`${base}/v2/mine`)).json() as any).supportedInterfaces[0].url, 'https://a.example/v2/a2a/demo')
  t.equal(router.cardFor('ghost', {} as never), undefined)
})

t.test('rootAgentId: that agent also answers at POST <mount>/', async (t) => {
  const app = express()
  app.use('/v1', converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor() }], rootAgentId: 'demo' }))
  const base = await listen(t, app)
  const root = await fetch(`${base}/v1`, { method: 'POST', headers: HEADERS, body: VALID })
  t.equal((await root.json() as any).result.message.parts[0].text, 'echo: hi')
  const served = await (await fetch(`${base}/v1/.well-known/agent-card.json`)).json() as any
  t.equal(served.supportedInterfaces[0].url, `${base}/v1/a2a/demo`, 'the card still names the agent\'s own URL')
})
