import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { converse } from '../../src/fastify/converse-plugin.js'
import { findReplyInternals } from '../../src/fastify/known-envelope-serializer.js'
import { functionEnvelopeProvider, staticEnvelopeProvider, type EnvelopeProvider } from '../../src/core/envelope-provider.js'
import type { EnvelopeDraft } from '../../src/core/envelope.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../src/core/uri.js'
import type { WireMessage, WireTask } from '../../src/core/wire.js'
import { watchSerialization } from '../fixtures/watch-serialization.js'

// Text a JSON serializer must escape, so a splice that skipped escaping would show.
const FULL: EnvelopeDraft = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'partial', reason: 'insufficient_evidence', originatingTurnId: 't1' },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [
    { documentId: 'd1', chunkId: 'c1', title: 'Rückgabe "30 Tage" \\ \u2028\n', sourceUrl: 'https://example.com/returns' },
    { documentId: 'd2', chunkId: 'c2', title: 'Shipping' }
  ]
}

function agentMessage (id: string): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_AGENT', parts: [{ text: `agent ${id} \u0000` }], metadata: { other: [1, 2] } }
}
function task (id: string): WireTask {
  return {
    id,
    contextId: 'ctx',
    status: { state: 'TASK_STATE_COMPLETED', message: agentMessage(`${id}-status`) },
    artifacts: [{ artifactId: `${id}-a`, parts: [{ text: 'x' }] }],
    history: [{ messageId: 'u', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, agentMessage(`${id}-h`)]
  }
}
const RESULTS: Record<string, unknown> = {
  SendMessage: { message: agentMessage('m') },
  GetTask: task('t1'),
  ListTasks: { tasks: [task('t2'), task('t3')], nextPageToken: '' }
}

type Setup = (app: FastifyInstance) => void

/** An app whose marked route answers each method with RESULTS; `setup` may add serializers or a route schema. */
async function build (t: Test, provider: EnvelopeProvider, setup: Setup = () => {}, routeOptions: object = {}) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'Demo' } }], provider })
  setup(app)
  app.post('/a2a/:agentId', { ...routeOptions, config: { converse: true } }, async (request, reply) => {
    const body = request.body as { id: number, method: string, own?: boolean }
    if (body.own === true) reply.serializer((payload) => `own:${JSON.stringify(payload)}`)
    return { jsonrpc: '2.0', id: body.id, result: RESULTS[body.method] }
  })
  return app
}

async function body (app: FastifyInstance, method: string, extra: object = {}) {
  const res = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'a2a-extensions': URI }, payload: { jsonrpc: '2.0', id: 1, method, ...extra } })
  return res.body
}

/** The static provider's envelope is deep-frozen (known JSON); the function provider builds a new one per call. */
const knownJson = () => staticEnvelopeProvider(FULL)
const builtPerCall = () => functionEnvelopeProvider(() => structuredClone(FULL))

t.test('replies with known envelope JSON are the very text of replies without it', async (t) => {
  const fast = await build(t, knownJson())
  const slow = await build(t, builtPerCall())
  for (const method of Object.keys(RESULTS)) {
    const text = await body(fast, method)
    t.equal(text, await body(slow, method), `${method}: same bytes`)
    t.equal(text, JSON.stringify(JSON.parse(text)), `${method}: JSON.stringify's own text`)
    t.ok(text.includes(JSON.stringify(FULL)), `${method}: carries the envelope`)
    t.notMatch(text, /\\u0000[0-9a-f]{8}-/, `${method}: no placeholder left`)
  }
  const seen = watchSerialization(t)
  await body(fast, 'SendMessage')
  await body(slow, 'SendMessage')
  t.same(seen, ['string', 'object'], 'the known JSON was spliced in where the envelope did not change')
})

t.test('a reply serializer of the instance still decides the text', async (t) => {
  const pretty: Setup = (app) => app.setReplySerializer((payload) => JSON.stringify(payload, null, 2))
  const fast = await build(t, knownJson(), pretty)
  const slow = await build(t, builtPerCall(), pretty)
  const text = await body(fast, 'GetTask')
  t.equal(text, await body(slow, 'GetTask'))
  t.equal(text, JSON.stringify(JSON.parse(text), null, 2), 'pretty-printed throughout, the envelope too')
})

t.test('a serializer the handler gave the reply still decides the text', async (t) => {
  const app = await build(t, knownJson())
  const text = await body(app, 'SendMessage', { own: true })
  t.ok(text.startsWith('own:'))
  t.equal(text.slice(4), await body(app, 'SendMessage'))
})

t.test('a route with a response schema is serialized by its schema', async (t) => {
  const schema = {
    response: {
      200: {
        type: 'object',
        properties: { jsonrpc: { type: 'string' }, id: { type: 'integer' }, result: { type: 'object', additionalProperties: true } }
      }
    }
  }
  const fast = await build(t, knownJson(), undefined, { schema })
  const slow = await build(t, builtPerCall(), undefined, { schema })
  const text = await body(fast, 'GetTask')
  t.equal(text, await body(slow, 'GetTask'))
  t.same(JSON.parse(text).result.status.message.metadata[URI], FULL)
})

t.test('the internals looked for, and what happens without them', async (t) => {
  const serializer = Symbol('fastify.reply.serializer')
  const context = Symbol('fastify.context')
  const defaultSerializer = Symbol('fastify.replySerializerDefault')
  t.equal(findReplyInternals({}), null, 'none')
  t.equal(findReplyInternals({ [serializer]: null }), null, 'no route context')
  t.equal(findReplyInternals({ [serializer]: null, [context]: null }), null, 'a route context that is no object')
  t.equal(findReplyInternals({ [serializer]: null, [context]: {} }), null, 'no default serializer in the route context')
  t.same(findReplyInternals({ [serializer]: null, [context]: { [defaultSerializer]: null } }), { serializer, context, defaultSerializer })
  const inherited = Object.create({ [context]: { [defaultSerializer]: null } }) as object
  Object.assign(inherited, { [serializer]: null })
  t.same(findReplyInternals(inherited), { serializer, context, defaultSerializer }, 'found on a prototype too')
})

t.test('a hook after the plugin\'s that rebuilds the payload gets its own text, not a stale splice', async (t) => {
  const rebuild: Setup = (app) => app.addHook('onRoute', (route) => {
    route.preSerialization = [
      ...[route.preSerialization ?? []].flat(),
      async (_request, _reply, payload: any) => ({ ...structuredClone(payload), rebuilt: true })
    ]
  })
  const app = await build(t, knownJson(), rebuild)
  const seen = watchSerialization(t)
  const parsed = JSON.parse(await body(app, 'SendMessage'))
  t.equal(parsed.rebuilt, true)
  t.same(parsed.result.message.metadata[URI], FULL)
  t.same(seen, ['object', 'object'], 'the rebuilt payload holds no placeholder: the splice gave way to a plain serialization')
})
