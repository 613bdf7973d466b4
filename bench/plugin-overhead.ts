/**
 * What the converse plugin costs on SendMessage: the same POST /a2a/:agentId route returning a canned
 * SendMessage {message} reply, once through the plugin with the extension active (A2A-Extensions header,
 * a static provider returning a full envelope with three citations) and once on a plain Fastify app.
 * Targets: with / without ≥ 0.90 (issue 2), and ≥ 0.85 with the envelope built per call (issue 9). With
 * `BENCH_NODES` (lib.ts), the same five servers run again on each Node binary it names, judged alike.
 *
 * The other contenders: the plugin with a provider that builds the same envelope anew for every object (the
 * case of providers that compute a verdict per turn; judged, above), and two informative ones: a plain app
 * returning the plugin's decorated reply, byte for byte, with the echo header (what the extension puts on the
 * wire, serialized by Fastify as usual), and the plugin's route with a response schema (the same bytes, serialized by fast-json-stringify instead of
 * JSON.stringify: what a serializer compiled for the envelope would buy).
 *
 * Each server runs in its own child process (child-app.ts), which also reports the server's CPU time per
 * request: on a shared machine requests/s swing with other load, CPU µs per request much less.
 */
import Fastify, { type FastifyInstance, type FastifySchema } from 'fastify'
import { converse } from 'a2a-converse/fastify'
import { functionEnvelopeProvider, staticEnvelopeProvider } from 'a2a-converse'
import type { EnvelopeDraft } from 'a2a-converse'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { startChildApp } from './child-app.js'
import {
  SEED_REQUEST, benchNodes, compare, pairedRatio, runOptions,
  type BenchNode, type Contender, type RatioResult, type Row, type RunOptions, type ScenarioResult
} from './lib.js'

export const name = 'plugin-overhead'
export const TARGET = 0.9
/** Issue 9's target for a provider that builds its envelope per call (validated per reply). */
export const PER_CALL_TARGET = 0.85

/** The envelope under test, as a new object on each call (as a provider that computes its verdict per turn builds it). */
function buildEnvelope (): EnvelopeDraft {
  return {
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
}

export const ENVELOPE: EnvelopeDraft = buildEnvelope()

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

const CARD = { name: 'Shop assistant', description: 'Answers questions about orders.' }

/** The route under test; `config.converse` marks it for the plugin (a plain app ignores the config). */
function addRoute (app: FastifyInstance, schema?: FastifySchema): void {
  app.post('/a2a/:agentId', { config: { converse: true }, schema }, async () => REPLY)
}

const text = { type: 'string' } as const
/** Loose objects: the members named are serialized by fast-json-stringify's compiled code, the rest as JSON.stringify would. */
const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, additionalProperties: true })
/** The converse envelope's members as a serialization schema (fast-json-stringify compiles it; no validation). */
const ENVELOPE_SERIALIZATION = object({
  author: text,
  answerCoverage: object({ availability: text, coverage: text, reason: text, originatingTurnId: text, originatingRequestId: text }),
  ownership: object({ state: text, suppressed: { type: 'boolean' } }),
  citations: { type: 'array', items: object({ documentId: text, chunkId: text, title: text, sourceUrl: text }) }
})

/**
 * A response schema for the JSON-RPC success reply of SendMessage with a {message} result: Fastify then serializes
 * the decorated reply with fast-json-stringify instead of JSON.stringify. Informative: what a serializer compiled
 * for the envelope would buy the plugin's route.
 */
export const REPLY_SCHEMA: FastifySchema = {
  response: {
    200: object({
      jsonrpc: text,
      id: { type: ['string', 'number', 'null'] },
      result: object({
        message: object({
          messageId: text,
          contextId: text,
          role: text,
          parts: { type: 'array', items: object({ text }) },
          metadata: object({ [CONVERSE_EXTENSION_URI]: ENVELOPE_SERIALIZATION }),
          extensions: { type: 'array', items: text }
        })
      })
    })
  }
}

export async function buildWithPlugin (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(converse, { agents: [{ id: 'ag_7Qb3nT1xK9wZs2Pv0Lm4Rd', card: CARD }], provider: staticEnvelopeProvider(ENVELOPE) })
  addRoute(app)
  return app
}

/** The same, with the envelope built per call: validated and serialized for every reply. */
export async function buildWithPluginPerCall (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(converse, { agents: [{ id: 'ag_7Qb3nT1xK9wZs2Pv0Lm4Rd', card: CARD }], provider: functionEnvelopeProvider(buildEnvelope) })
  addRoute(app)
  return app
}

/** The plugin's route with REPLY_SCHEMA: the decorated reply serialized by fast-json-stringify. */
export async function buildWithPluginSchema (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(converse, { agents: [{ id: 'ag_7Qb3nT1xK9wZs2Pv0Lm4Rd', card: CARD }], provider: staticEnvelopeProvider(ENVELOPE) })
  addRoute(app, REPLY_SCHEMA)
  return app
}

export async function buildWithoutPlugin (): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  addRoute(app)
  return app
}

/** The plugin's decorated reply to the benchmark request, and the plain one, for the control and the notes. */
async function replies (): Promise<{ decorated: { body: string, json: unknown }, plain: { body: string } }> {
  const request = { method: 'POST' as const, url: load(true).path, headers: load(true).headers, payload: SEED_REQUEST }
  const withPlugin = await buildWithPlugin()
  const withoutPlugin = await buildWithoutPlugin()
  try {
    const decorated = await withPlugin.inject(request)
    const plain = await withoutPlugin.inject(request)
    return { decorated: { body: decorated.body, json: decorated.json() }, plain: { body: plain.body } }
  } finally {
    await Promise.all([withPlugin.close(), withoutPlugin.close()])
  }
}

/** Control: no plugin, but the very reply (body and echo header) the plugin sends, canned. */
export async function buildControl (): Promise<FastifyInstance> {
  const reply = (await replies()).decorated.json
  const app = Fastify({ logger: false })
  app.post('/a2a/:agentId', async (_request, response) => {
    response.header('A2A-Extensions', CONVERSE_EXTENSION_URI)
    return reply
  })
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
  body: SEED_REQUEST
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

/** Two contenders that must put the very same bytes on the wire. */
async function sameBytes (a: Contender, b: Contender): Promise<void> {
  const body = async (contender: Contender) => await (await fetch(contender.url + contender.load.path, {
    method: 'POST', headers: contender.load.headers, body: contender.load.body
  })).text()
  const [first, second] = await Promise.all([body(a), body(b)])
  if (first !== second) throw new Error(`${a.name} and ${b.name} send different bodies:\n${first}\n${second}`)
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  // Few connections keep the single-threaded server saturated without making autocannon the bottleneck.
  // Many short rounds: this machine's speed drifts over seconds, and only contenders measured close together
  // in time compare well; 15 rounds of 1 s for 4 contenders keep the scenario around a minute.
  const defaults: Partial<RunOptions> = { connections: 10 }
  if (process.env.BENCH_ROUNDS === undefined) defaults.rounds = 15
  if (process.env.BENCH_DURATION === undefined) defaults.durationSec = 1
  const options = runOptions({ ...defaults, ...overrides })
  const sizes = await replies()
  const nodes = await benchNodes()
  const result: ScenarioResult = { name, rows: [], ratios: [], notes: [] }
  // With BENCH_NODES, the same contenders again on each other Node, one after the other, each judged.
  for (const node of nodes) {
    const measured = await measureOn(node, options, sizes, nodes.length > 1 ? ` [Node ${node.version}]` : '')
    result.rows.push(...measured.rows)
    result.ratios.push(...measured.ratios)
    result.notes?.push(...measured.notes)
  }
  return result
}

async function measureOn (
  node: BenchNode, options: RunOptions, sizes: Awaited<ReturnType<typeof replies>>, label: string
): Promise<{ rows: Row[], ratios: RatioResult[], notes: string[] }> {
  const spawn = node.execPath === undefined ? {} : { execPath: node.execPath }
  const servers = await Promise.all(['buildWithPlugin', 'buildWithoutPlugin', 'buildControl', 'buildWithPluginPerCall', 'buildWithPluginSchema']
    .map((exportName) => startChildApp(import.meta.url, exportName, spawn)))
  try {
    const [withPlugin, withoutPlugin, control, perCall, withSchema] = servers
    const contenders: Contender[] = [
      { name: `SendMessage with plugin (extension active, 3 citations)${label}`, url: withPlugin.url, load: load(true), usage: withPlugin.usage },
      // The header is sent here too, so both sides parse the same request.
      { name: `SendMessage without plugin${label}`, url: withoutPlugin.url, load: load(true), usage: withoutPlugin.usage },
      { name: `control: without plugin, the decorated reply canned${label}`, url: control.url, load: load(true), usage: control.usage },
      { name: `with plugin, envelope built per call${label}`, url: perCall.url, load: load(true), usage: perCall.usage },
      { name: `with plugin, route response schema (fast-json-stringify)${label}`, url: withSchema.url, load: load(true), usage: withSchema.usage }
    ]
    await check(contenders[0], true)
    await check(contenders[1], false)
    await check(contenders[2], true)
    await check(contenders[3], true)
    await check(contenders[4], true)
    await sameBytes(contenders[4], contenders[0])
    const rows = await compare(contenders, options)
    const cpu = (row: Row) => `${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`
    // Rounds of one contender more than 1.5× apart: something else loaded the machine while measuring.
    const noisy = rows.some((row) => Math.max(...row.samples) > 1.5 * Math.min(...row.samples))
    const on = label === '' ? '' : `${label.trim()} `
    return {
      rows,
      ratios: [
        { description: `with plugin / without${label}`, ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: `envelope built per call / without${label}`, ratio: pairedRatio(rows, 3, 1), target: PER_CALL_TARGET }
      ],
      notes: [
        `${on}reply body: ${sizes.plain.body.length} bytes without the extension, ${sizes.decorated.body.length} bytes with the envelope`,
        `${on}server CPU per request (median): with plugin ${cpu(rows[0])}, without ${cpu(rows[1])}, control ${cpu(rows[2])}, built per call ${cpu(rows[3])}`,
        `${on}CPU-based ratios (less sensitive to other load on the machine): with plugin / without = ${pairedRatio(rows, 0, 1, true).toFixed(3)}, ` +
          `built per call / without = ${pairedRatio(rows, 3, 1, true).toFixed(3)}, ` +
          `control / without = ${pairedRatio(rows, 2, 1, true).toFixed(3)} (the decorated reply, serialized by Fastify as usual), ` +
          `with plugin / control = ${pairedRatio(rows, 0, 2, true).toFixed(3)} (the plugin's own work: both send the same bytes)`,
        `${on}req/s ratios: control / without = ${pairedRatio(rows, 2, 1).toFixed(3)}, with plugin / control = ${pairedRatio(rows, 0, 2).toFixed(3)}, ` +
          `built per call / control = ${pairedRatio(rows, 3, 2).toFixed(3)}`,
        `${on}response schema (fast-json-stringify, not judged): with plugin / without = ${pairedRatio(rows, 4, 1).toFixed(3)} req/s, ${pairedRatio(rows, 4, 1, true).toFixed(3)} by CPU; ` +
          `schema / JSON.stringify, both with plugin = ${pairedRatio(rows, 4, 0).toFixed(3)} req/s, ${pairedRatio(rows, 4, 0, true).toFixed(3)} by CPU; CPU ${cpu(rows[4])}`,
        ...(noisy ? [`${on}WARNING: requests/s varied more than 1.5× between rounds (other load on the machine); the req/s ratio is unreliable, the CPU-based ones much less so`] : [])
      ]
    }
  } finally {
    await Promise.all(servers.map((server) => server.close()))
  }
}
