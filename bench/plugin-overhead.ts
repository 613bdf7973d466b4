/**
 * What the converse plugin costs on SendMessage: the same POST /a2a/:agentId route returning a canned
 * SendMessage {message} reply, once through the plugin with the extension active (A2A-Extensions header,
 * a static provider returning a full envelope with three citations) and once on a plain Fastify app.
 * Target: with / without ≥ 0.90.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { converse } from '../src/fastify/converse-plugin.js'
import { staticEnvelopeProvider } from '../src/core/envelope-provider.js'
import type { EnvelopeDraft } from '../src/core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../src/core/uri.js'
import { compare, listen, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'plugin-overhead'
export const TARGET = 0.9

export const ENVELOPE: EnvelopeDraft = {
  author: 'agent',
  answerCoverage: {
    availability: 'assessed',
    coverage: 'answered',
    reason: 'sufficient_evidence',
    originatingTurnId: 'c3f1a2b4-5d6e-4f70-8a9b-0c1d2e3f4a5b',
    originatingRequestId: 'c3f1a2b4-5d6e-4f70-8a9b-0c1d2e3f4a5c'
  },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [
    { documentId: '0c8e4b1a-77d2-4c59-9a0e-1b2c3d4e5f60', chunkId: '5d21a9e3-3c1f-4a8b-b6d7-e8f9a0b1c2d3', title: 'Returns policy', sourceUrl: 'https://shop.example.com/help/returns' },
    { documentId: '1d9f5c2b-88e3-4d6a-8b1f-2c3d4e5f6a71', chunkId: '6e32b0f4-4d20-4b9c-a7e8-f9a0b1c2d3e4', title: 'Shipping and delivery' },
    { documentId: '2ea06d3c-99f4-4e7b-9c2a-3d4e5f6a7b82', chunkId: '7f43c105-5e31-4cad-b8f9-a0b1c2d3e4f5', title: 'Refund timelines', sourceUrl: 'https://shop.example.com/help/refunds' }
  ]
}

const REPLY = {
  jsonrpc: '2.0',
  id: 1,
  result: {
    message: {
      messageId: 'b81d6c0e-2f4a-4c77-9f0e-3f2d5a7c1e44',
      contextId: 'Zk3xQm7pR2sT9vW1yA4bC6dE8fG0hJ2k',
      role: 'ROLE_AGENT',
      parts: [{ text: 'You can return an order within 30 days of delivery.' }]
    }
  }
}

const REQUEST_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10',
      role: 'ROLE_USER',
      parts: [{ text: 'How long do I have to return an order?' }]
    }
  }
})

const CARD = { name: 'Shop assistant', description: 'Answers questions about orders.' }

/** The route under test; `config.converse` marks it for the plugin (a plain app ignores the config). */
function addRoute (app: FastifyInstance): void {
  app.post('/a2a/:agentId', { config: { converse: true } }, async () => REPLY)
}

export async function buildWithPlugin (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(converse, { agents: [{ id: 'ag_7Qb3nT1xK9wZs2Pv0Lm4Rd', card: CARD }], provider: staticEnvelopeProvider(ENVELOPE) })
  addRoute(app)
  return app
}

export async function buildWithoutPlugin (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  addRoute(app)
  return app
}

const load = (extensions: boolean): Contender['load'] => ({
  method: 'POST',
  path: '/a2a/ag_7Qb3nT1xK9wZs2Pv0Lm4Rd',
  headers: {
    'content-type': 'application/json',
    'a2a-version': '1.0',
    ...(extensions ? { 'a2a-extensions': CONVERSE_EXTENSION_URI } : {})
  },
  body: REQUEST_BODY
})

/** Makes sure each side answers what the comparison claims before it is measured. */
async function check (contender: Contender, expectEnvelope: boolean): Promise<void> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const body = await res.json() as typeof REPLY
  const metadata = (body.result.message as { metadata?: Record<string, { citations?: unknown[] }> }).metadata
  const citations = metadata?.[CONVERSE_EXTENSION_URI]?.citations?.length ?? 0
  const echoed = res.headers.get('a2a-extensions') === CONVERSE_EXTENSION_URI
  if (res.status !== 200 || echoed !== expectEnvelope || citations !== (expectEnvelope ? 3 : 0)) {
    throw new Error(`${contender.name}: unexpected reply (status ${res.status}, echo ${String(echoed)}, ${citations} citations)`)
  }
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions(overrides)
  const withPlugin = await buildWithPlugin()
  const withoutPlugin = await buildWithoutPlugin()
  try {
    const contenders: Contender[] = [
      { name: 'SendMessage with plugin (extension active, 3 citations)', url: await listen(withPlugin), load: load(true) },
      // The header is sent here too, so both sides parse the same request.
      { name: 'SendMessage without plugin', url: await listen(withoutPlugin), load: load(true) }
    ]
    await check(contenders[0], true)
    await check(contenders[1], false)
    const rows = await compare(contenders, options)
    return {
      name,
      description: 'with plugin / without',
      rows,
      ratio: pairedRatio(rows),
      target: TARGET
    }
  } finally {
    await Promise.all([withPlugin.close(), withoutPlugin.close()])
  }
}
