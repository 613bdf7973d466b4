// A consumer's Fastify app against the installed tarball (test/suites/package/consumer.test.ts): the converse plugin and
// a2aEndpoint from a2a-converse/fastify, an envelope type and provider from the root, an executor of its own.
// Prints `listening <url>` and serves until it is killed.
import Fastify from 'fastify'
import { Message } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor } from '@a2a-js/sdk/server'
import { staticEnvelopeProvider, type EnvelopeDraft } from 'a2a-converse'
import { a2aEndpoint, converse, type ConversePluginOptions } from 'a2a-converse/fastify'

const verdict: EnvelopeDraft = {
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' }
}

const echo: AgentExecutor = {
  async execute (context, bus) {
    const content = context.userMessage.parts[0]?.content
    bus.publish(AgentEvent.message(Message.fromJSON({
      messageId: `reply-${context.userMessage.messageId}`,
      contextId: context.contextId,
      role: 'ROLE_AGENT',
      parts: [{ text: `echo: ${content?.$case === 'text' ? content.value : ''}` }]
    })))
    bus.finished()
  },
  async cancelTask () {}
}

const options: ConversePluginOptions = {
  agents: [{ id: 'echo', card: { name: 'Echo', description: 'Says it back.', capabilities: { streaming: true } } }],
  provider: staticEnvelopeProvider(verdict)
}

const app = Fastify()
await app.register(converse, options)
await app.register(a2aEndpoint, { agents: [{ id: 'echo', executor: echo }] })
const url = await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(`listening ${url}\n`)
