/**
 * a2aEndpoint's HTTP+JSON routes on Fastify: errors raised elsewhere in the app (a hook's 4xx, a crash, a rate
 * limiter) get the binding's AIP-193 body, not a JSON-RPC one; and on the gateway, authentication, rate limits and the
 * per-caller stream cap answer HTTP+JSON requests exactly as they answer JSON-RPC ones.
 */
import t from 'tap'
import Fastify from 'fastify'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { logCapture } from '../../fixtures/a2a-app.js'
import { ALICE_KEY, API_KEYS } from '../../fixtures/auth.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { contextIdOf } from '../../fixtures/context-ids.js'

const V1 = { 'a2a-version': '1.0' }

t.test('errors from elsewhere in the app: the HTTP+JSON error body, 4xx kept, anything else 500 without a stack', async (t) => {
  const capture = logCapture()
  const target = Fastify({ logger: capture.logger })
  t.teardown(() => target.close())
  target.addHook('onRequest', async (request) => {
    if (request.headers['x-test'] === 'auth') throw Object.assign(new Error('Missing API key'), { statusCode: 401 })
    if (request.headers['x-test'] === 'crash') throw new Error('secret internals at /srv/app.js:1')
  })
  await target.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }] })
  await target.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }], bodyLimit: 64 })
  const auth = await target.inject({ url: '/a2a/demo/rest/tasks/t-1', headers: { ...V1, 'x-test': 'auth' } })
  t.equal(auth.statusCode, 401)
  t.match(auth.json(), { error: { code: 401, status: 'UNAUTHENTICATED', message: 'Missing API key', details: [{ fieldViolations: [{ field: 'request' }] }] } })
  const crash = await target.inject({ url: '/a2a/demo/rest/tasks/t-1', headers: { ...V1, 'x-test': 'crash' } })
  t.equal(crash.statusCode, 500)
  t.strictSame(crash.json(), { error: { code: 500, status: 'INTERNAL', message: 'Internal error', details: [] } })
  t.notMatch(crash.body, /secret|srv/)
  t.match(capture.lines, [{ msg: 'A2A endpoint failed' }])
  const large = await target.inject({ method: 'POST', url: '/a2a/demo/rest/message:send', headers: { ...V1, 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(100) }) })
  t.match([large.statusCode, large.json()], [413, { error: { code: 413, status: 'INVALID_ARGUMENT' } }])
  const media = await target.inject({ method: 'POST', url: '/a2a/demo/rest/message:send', headers: { ...V1, 'content-type': 'text/plain' }, payload: 'x' })
  t.match([media.statusCode, media.json()], [415, { error: { details: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] } }])
  const broken = await target.inject({ method: 'POST', url: '/a2a/demo/rest/message:send', headers: { ...V1, 'content-type': 'application/json' }, payload: '{' })
  t.match([broken.statusCode, broken.json()], [400, { error: { message: 'Invalid JSON payload' } }])
})

t.test('the gateway: 401, the rate limit and the stream cap on HTTP+JSON, with its error body', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_MS: '60000', MAX_STREAMS_PER_CALLER: '1' })
  const url = `${base}/a2a/demo/rest`
  const anonymous = await fetch(`${url}/tasks`, { headers: V1 })
  t.equal(anonymous.status, 401)
  t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="a2a"')
  t.match(await anonymous.json(), { error: { code: 401, status: 'UNAUTHENTICATED', details: [{ reason: 'UNAUTHENTICATED', domain: 'a2a-converse' }] } })
  const alice = { ...V1, authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' }
  const message = { messageId: 'rest-1', role: 'ROLE_USER', parts: [{ text: 'I would like to book a table' }], contextId: contextIdOf('rest-gateway') }
  const task = (await (await fetch(`${url}/message:send`, { method: 'POST', headers: alice, body: JSON.stringify({ message }) })).json() as any).task
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  const open = await fetch(`${url}/tasks/${task.id}:subscribe`, { headers: alice, signal: controller.signal })
  t.equal(open.headers.get('content-type'), 'text/event-stream')
  const second = await fetch(`${url}/tasks/${task.id}:subscribe`, { method: 'POST', headers: alice })
  t.equal(second.status, 429)
  t.equal(second.headers.get('retry-after'), '5')
  t.match(await second.json(), { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'TOO_MANY_STREAMS' }] } })
  t.equal((await fetch(`${url}/tasks/${task.id}`, { headers: alice })).status, 200, 'Alice\'s fourth request of the window')
  const limited = await fetch(`${url}/tasks/${task.id}`, { headers: alice })
  t.equal(limited.status, 429, 'her fifth')
  t.match(await limited.json(), { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'RATE_LIMITED' }] } })
})
