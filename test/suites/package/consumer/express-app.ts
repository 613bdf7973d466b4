// A consumer's Express app against the installed tarball (test/suites/package/consumer.test.ts): converseRouter from
// a2a-converse/express, an envelope type and provider from the root, an executor of its own.
// Prints `listening <url>` and serves until it is killed.
import type { AddressInfo } from 'node:net'
import express from 'express'
import { Message } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor } from '@a2a-js/sdk/server'
import { staticEnvelopeProvider, type EnvelopeDraft } from 'a2a-converse'
import { converseRouter, type ConverseRouterOptions } from 'a2a-converse/express'

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

const options: ConverseRouterOptions = {
  agents: [{ id: 'echo', card: { name: 'Echo', description: 'Says it back.', capabilities: { streaming: true } }, executor: echo }],
  provider: staticEnvelopeProvider(verdict)
}

const app = express()
app.use(converseRouter(options))
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
