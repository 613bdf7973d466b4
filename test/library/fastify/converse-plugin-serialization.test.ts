import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { converse } from '../../../packages/a2a-converse/src/fastify/converse-plugin.js'
import { functionEnvelopeProvider, staticEnvelopeProvider, type EnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import type { EnvelopeDraft } from '../../../packages/a2a-converse/src/core/envelope.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'
import type { WireMessage, WireTask } from '../../../packages/a2a-converse/src/core/wire.js'

// Text a JSON serializer must escape.
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

/** An app whose marked route answers each method with RESULTS; `setup` may add serializers, hooks or a route schema. */
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

/** The static provider hands out one deep-frozen envelope; the function provider builds a new one per call. */
const frozen = () => staticEnvelopeProvider(FULL)
const builtPerCall = () => functionEnvelopeProvider(() => structuredClone(FULL))

t.test('decorated replies are JSON.stringify\'s text, the same for a frozen envelope and one built per call', async (t) => {
  const shared = await build(t, frozen())
  const fresh = await build(t, builtPerCall())
  for (const method of Object.keys(RESULTS)) {
    const text = await body(shared, method)
    t.equal(text, await body(fresh, method), `${method}: same bytes`)
    t.equal(text, JSON.stringify(JSON.parse(text)), `${method}: JSON.stringify's own text`)
    t.ok(text.includes(JSON.stringify(FULL)), `${method}: carries the envelope`)
  }
})

t.test('a reply serializer of the instance decides the text, the envelope\'s too', async (t) => {
  const pretty: Setup = (app) => app.setReplySerializer((payload) => JSON.stringify(payload, null, 2))
  const shared = await build(t, frozen(), pretty)
  const fresh = await build(t, builtPerCall(), pretty)
  const text = await body(shared, 'GetTask')
  t.equal(text, await body(fresh, 'GetTask'))
  t.equal(text, JSON.stringify(JSON.parse(text), null, 2), 'pretty-printed throughout, the envelope too')
  t.same(JSON.parse(text).result.status.message.metadata[URI], FULL)
})

t.test('a serializer the handler gave the reply decides the text', async (t) => {
  const app = await build(t, frozen())
  const text = await body(app, 'SendMessage', { own: true })
  t.ok(text.startsWith('own:'))
  t.equal(text.slice(4), await body(app, 'SendMessage'))
})

t.test('a route with a response schema is serialized by its schema, the envelope kept', async (t) => {
  const schema = {
    response: {
      200: {
        type: 'object',
        properties: { jsonrpc: { type: 'string' }, id: { type: 'integer' }, result: { type: 'object', additionalProperties: true } }
      }
    }
  }
  const shared = await build(t, frozen(), undefined, { schema })
  const fresh = await build(t, builtPerCall(), undefined, { schema })
  const text = await body(shared, 'GetTask')
  t.equal(text, await body(fresh, 'GetTask'))
  t.same(JSON.parse(text).result.status.message.metadata[URI], FULL)
})

t.test('a preSerialization hook after the plugin\'s sees the decorated payload', async (t) => {
  const rebuild: Setup = (app) => app.addHook('onRoute', (route) => {
    route.preSerialization = [
      ...[route.preSerialization ?? []].flat(),
      async (_request, _reply, payload: any) => ({ ...structuredClone(payload), rebuilt: true })
    ]
  })
  const app = await build(t, frozen(), rebuild)
  const parsed = JSON.parse(await body(app, 'SendMessage'))
  t.equal(parsed.rebuilt, true)
  t.same(parsed.result.message.metadata[URI], FULL)
})
