import t from 'tap'
import Fastify from 'fastify'
import { converse, staticEnvelopeProvider, CONVERSE_EXTENSION_URI } from '../../src/index.js'

t.test('plugin decorates a marked JSON-RPC route', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, {
    agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }],
    provider: staticEnvelopeProvider({ answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' } })
  })
  app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => ({
    jsonrpc: '2.0', id: 1, result: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } }
  }))
  const res = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'a2a-extensions': CONVERSE_EXTENSION_URI }, payload: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} } })
  t.equal(res.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  t.same(res.json().result.message.extensions, [CONVERSE_EXTENSION_URI])
  t.equal(res.json().result.message.metadata[CONVERSE_EXTENSION_URI].author, 'agent')
})
