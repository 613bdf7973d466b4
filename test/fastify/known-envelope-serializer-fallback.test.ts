import t from 'tap'
import Fastify, { type FastifyReply } from 'fastify'
import { converse } from '../../src/fastify/converse-plugin.js'
import { serializesWithJsonStringify } from '../../src/fastify/known-envelope-serializer.js'
import { staticEnvelopeProvider } from '../../src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../src/core/uri.js'
import { watchSerialization } from '../fixtures/watch-serialization.js'

const ENVELOPE = { answerCoverage: { availability: 'not_recorded' as const } }

// Its own process (tap runs each file alone): the internals are looked up once, on the first reply seen.
t.test('on a Fastify without the internals, no reply takes the splice and replies are still right', async (t) => {
  t.equal(serializesWithJsonStringify({} as FastifyReply), false, 'a reply without the internal symbols')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'Demo' } }], provider: staticEnvelopeProvider(ENVELOPE) })
  app.post('/a2a/:agentId', { config: { converse: true } }, async () =>
    ({ jsonrpc: '2.0', id: 1, result: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } } }))
  const seen = watchSerialization(t)
  const res = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'a2a-extensions': URI }, payload: { jsonrpc: '2.0', id: 1, method: 'SendMessage' } })
  t.same(res.json().result.message.metadata[URI], { author: 'agent', ...ENVELOPE, ownership: { state: 'ai_owned', suppressed: false } })
  t.same(seen, ['object'], 'serialized by Fastify with the envelope in place')
})
