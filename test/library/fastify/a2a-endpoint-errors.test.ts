/** a2aEndpoint: HTTP-level failures always answer with a JSON-RPC error body, never Fastify's default one. */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { buildApp, logCapture, userMessage, V1 } from '../../fixtures/a2a-app.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'

const VALID = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hi') } })

async function app (t: Test, options: Parameters<typeof buildApp>[1] = {}) {
  const built = await buildApp(messageExecutor(), options)
  t.teardown(() => built.close())
  return built
}

function post (target: Awaited<ReturnType<typeof buildApp>>, payload: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return target.inject({ method: 'POST', url: '/a2a/demo', headers: { ...V1, ...headers }, payload })
}

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
