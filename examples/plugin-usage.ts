/**
 * The converse plugin on your own JSON-RPC route, with an envelope provider built from a function.
 * Run: npm run build && node dist/examples/plugin-usage.js
 * It registers the plugin, answers one SendMessage with and one without the extension, prints both, and exits.
 */
import Fastify from 'fastify'
import { CONVERSE_EXTENSION_URI, functionEnvelopeProvider } from 'a2a-converse'
import { converse } from 'a2a-converse/fastify'

const app = Fastify({ logger: { level: 'warn' } })

await app.register(converse, {
  agents: [{
    id: 'support',
    card: { name: 'Support', description: 'Answers support questions.', capabilities: { streaming: false } },
    routines: [{
      name: 'Book a table',
      toolName: 'book_table',
      exposed: true,
      description: 'Book a table for a date and party size.',
      slots: [
        { key: 'date', type: 'string', required: true, description: 'The date of the booking.' },
        { key: 'partySize', type: 'integer', required: true, description: 'How many people.' }
      ]
    }]
  }],
  // Your own source of verdicts: here a fixed rule; in real life a lookup by contextId / turn.
  provider: functionEnvelopeProvider(async ({ requestMessage }) => ({
    answerCoverage: {
      availability: 'assessed',
      coverage: 'answered',
      reason: 'sufficient_evidence',
      originatingRequestId: requestMessage?.messageId
    },
    citations: [{ documentId: 'returns', chunkId: 'returns#0', title: 'Returns policy' }]
  }))
})

// Your JSON-RPC handler; marking the route is all the plugin needs.
app.post('/a2a/:agentId', { config: { converse: true } }, async (request) => {
  const { id } = request.body as { id: number }
  return {
    jsonrpc: '2.0',
    id,
    result: {
      message: {
        messageId: `reply-${id}`,
        contextId: 'ctx-1',
        role: 'ROLE_AGENT',
        parts: [{ text: 'You can return an order within 30 days of delivery.' }]
      }
    }
  }
})

const body = {
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'How long do I have to return an order?' }] } }
}
for (const headers of [{ 'a2a-extensions': CONVERSE_EXTENSION_URI }, {}]) {
  const reply = await app.inject({ method: 'POST', url: '/a2a/support', headers, payload: body })
  console.log(JSON.stringify({
    activated: reply.headers['a2a-extensions'] ?? null,
    message: reply.json().result.message
  }, null, 2))
}
const card = await app.inject('/a2a/support/.well-known/agent-card.json')
console.log(JSON.stringify(card.json().capabilities.extensions, null, 2))
await app.close()
