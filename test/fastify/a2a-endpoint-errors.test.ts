/** a2aEndpoint: HTTP-level failures always answer with a JSON-RPC error body, never Fastify's default one. */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { a2aEndpoint, converse } from '../../src/fastify.js'
import { buildApp, logCapture, userMessage, V1 } from '../fixtures/a2a-app.js'
import { messageExecutor } from '../fixtures/a2a-executors.js'

const VALID = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hi') } })

async function app (t: Test, options: Parameters<typeof buildApp>[1] = {}) {
  const built = await buildApp(messageExecutor(), options)
  t.teardown(() => built.close())
  return built
}

function post (target: Awaited<ReturnType<typeof buildApp>>, payload: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return target.inject({ method: 'POST', url: '/a2a/demo', headers: { ...V1, ...headers }, payload })
}

t.test('malformed JSON: HTTP 400 with a -32700 body', async (t) => {
  const target = await app(t)
  for (const payload of ['{bad', '{"jsonrpc":"2.0",', 'nul', '\u0000']) {
    const res = await post(target, payload)
    t.equal(res.statusCode, 400, payload)
    t.match(res.headers['content-type'], /^application\/json/)
    t.strictSame(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload' } }, payload)
  }
  const empty = await post(target, '')
  t.equal(empty.statusCode, 400, 'an empty application/json body')
  t.equal(empty.json().error.code, -32700)
  const nothing = await target.inject({ method: 'POST', url: '/a2a/demo', headers: { ...V1 } })
  t.equal(nothing.statusCode, 400, 'no Content-Type and no body')
  t.strictSame(nothing.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload' } })
})

t.test('content types: application/json (any parameters) and application/a2a+json; anything else HTTP 415 / -32005', async (t) => {
  const target = await app(t)
  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/a2a+json']) {
    const res = await post(target, VALID, { 'content-type': type })
    t.equal(res.statusCode, 200, type)
    t.equal(res.json().result.message.parts[0].text, 'echo: hi', type)
  }
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
    const res = await post(target, VALID, { 'content-type': type })
    t.equal(res.statusCode, 415, type)
    t.strictSame(res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32005,
        message: `Unsupported Content-Type ${JSON.stringify(type)}; expected application/json`,
        data: [{
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'CONTENT_TYPE_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
          metadata: { supportedContentTypes: 'application/json', contentType: type }
        }]
      }
    }, type)
  }
  const missing = await target.inject({ method: 'POST', url: '/a2a/demo', headers: { ...V1 }, payload: Buffer.from(VALID) })
  t.equal(missing.statusCode, 415, 'a body without Content-Type')
  t.equal(missing.json().error.message, 'Content-Type is required; expected application/json')
  const malformed = await post(target, VALID, { 'content-type': 'application/' })
  t.equal(malformed.statusCode, 415, 'an unparsable Content-Type')
  t.equal(malformed.json().error.code, -32005)
})

t.test('bodies over bodyLimit: HTTP 413 with a -32600 body', async (t) => {
  const target = await app(t, { bodyLimit: 200 })
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('x'.repeat(500)) } })
  const res = await post(target, big)
  t.equal(res.statusCode, 413)
  t.strictSame(res.json(), {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Request payload too large',
      data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'request', description: 'must not exceed 200 bytes' }] }]
    }
  })
  t.equal((await post(target, VALID)).statusCode, 200, 'a small body still passes')
})

t.test('the app default bodyLimit applies without the option', async (t) => {
  const target = Fastify({ bodyLimit: 300 })
  t.teardown(() => target.close())
  await target.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }] })
  await target.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }] })
  const res = await post(target, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('y'.repeat(400)) } }))
  t.equal(res.statusCode, 413)
  t.equal(res.json().error.data[0].fieldViolations[0].description, 'must not exceed 300 bytes')
})

t.test('a Content-Length that does not match the body: HTTP 400 with a JSON-RPC body', async (t) => {
  const target = await app(t)
  const res = await post(target, VALID, { 'content-type': 'application/json', 'content-length': String(VALID.length + 5) })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600 } })
})

t.test('batches and non-request bodies: HTTP 200 with one -32600', async (t) => {
  const target = await app(t)
  const batch = await post(target, `[${VALID},${VALID}]`)
  t.equal(batch.statusCode, 200)
  t.match(batch.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Batch requests are not supported' } })
  const empty = await post(target, '[]')
  t.match(empty.json(), { id: null, error: { code: -32600, data: [{ fieldViolations: [{ description: 'an empty batch is not a request' }] }] } })
  for (const body of ['null', '42', '"SendMessage"', 'true']) {
    t.match((await post(target, body)).json(), { id: null, error: { code: -32600 } }, body)
  }
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{ jsonrpc: '1.0', id: 4, method: 'SendMessage' }, 4],
    [{ id: 4, method: 'SendMessage' }, 4],
    [{ jsonrpc: '2.0', id: 4 }, 4],
    [{ jsonrpc: '2.0', id: 4, method: 7 }, 4],
    [{ jsonrpc: '2.0', id: { x: 1 }, method: 'SendMessage' }, null],
    [{ jsonrpc: '2.0', id: [4], method: 'SendMessage' }, null],
    [{ jsonrpc: '2.0', id: false, method: 'SendMessage' }, null],
    [{ jsonrpc: '2.0', id: 4.2, method: 'SendMessage' }, null]
  ]
  for (const [body, id] of cases) {
    const res = await post(target, JSON.stringify(body))
    t.equal(res.statusCode, 200)
    t.match(res.json(), { jsonrpc: '2.0', id, error: { code: -32600 } }, JSON.stringify(body))
  }
})

t.test('unknown methods and invalid params', async (t) => {
  const target = await app(t)
  for (const method of ['message/send', 'tasks/get', 'sendMessage', 'constructor', '__proto__', 'toString']) {
    const res = await post(target, JSON.stringify({ jsonrpc: '2.0', id: 'x', method, params: {} }))
    t.strictSame(res.json(), { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: `Method not found: ${JSON.stringify(method)}` } }, method)
  }
  const invalid = await post(target, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { ...userMessage('x'), parts: [] } } }))
  t.strictSame(invalid.json(), {
    jsonrpc: '2.0',
    id: 2,
    error: {
      code: -32602,
      message: 'Invalid parameters',
      data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.parts', description: 'must have at least one item' }] }]
    }
  })
  const noParams = await post(target, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'GetTask' }))
  t.match(noParams.json(), { id: 3, error: { code: -32602, data: [{ fieldViolations: [{ field: 'params', description: 'must be an object' }] }] } })
})

t.test('errors from elsewhere in the app: 4xx keeps its status, anything else is HTTP 500 / -32603 without a stack', async (t) => {
  const capture = logCapture()
  const target = Fastify({ logger: capture.logger })
  t.teardown(() => target.close())
  target.addHook('onRequest', async (request) => {
    if (request.headers['x-test'] === 'auth') throw Object.assign(new Error('Missing API key'), { statusCode: 401 })
    if (request.headers['x-test'] === 'crash') throw new Error('secret internals at /srv/app.js:1')
  })
  await target.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }] })
  await target.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }] })
  const auth = await post(target, VALID, { 'content-type': 'application/json', 'x-test': 'auth' })
  t.equal(auth.statusCode, 401)
  t.strictSame(auth.json(), {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Missing API key',
      data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'request', description: 'Missing API key' }] }]
    }
  })
  t.equal(capture.lines.length, 0, 'client errors are not logged as errors')
  const crash = await post(target, VALID, { 'content-type': 'application/json', 'x-test': 'crash' })
  t.equal(crash.statusCode, 500)
  t.strictSame(crash.json(), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } })
  t.notMatch(crash.body, /secret|srv/)
  t.match(capture.lines, [{ msg: 'A2A endpoint failed', err: { message: 'secret internals at /srv/app.js:1' } }])
})

t.test('the endpoint does not change how the rest of the app parses or fails', async (t) => {
  const target = Fastify()
  t.teardown(() => target.close())
  await target.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }] })
  await target.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }] })
  target.post('/other', async (request) => ({ got: request.body }))
  const bad = await target.inject({ method: 'POST', url: '/other', headers: { 'content-type': 'application/json' }, payload: '{bad' })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }, "Fastify's own body outside the endpoint")
  const text = await target.inject({ method: 'POST', url: '/other', headers: { 'content-type': 'text/plain' }, payload: 'hi' })
  t.strictSame(text.json(), { got: 'hi' }, 'text/plain still parsed outside the endpoint')
})
