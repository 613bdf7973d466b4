/**
 * Many agents published at runtime (issue 45): 1,000 agents (BENCH_AGENTS) of 20 short documents each, published
 * through the operator API into an embedded gateway (`npm start`'s process, dist/src/gateway/main.js), then that
 * gateway restarted on its DATA_DIR. Against a single-agent gateway in the same run (one agent of the same shape,
 * published and restarted the same way): start-up time, resident memory (the difference over the number of agents:
 * memory per agent), and the card and the seed's SendMessage (to the same agent id) by requests/s and p50/p99 latency. Target: SendMessage ≥ 0.9 of the single-agent
 * figure. With BENCH_DATABASE_URL or TEST_DATABASE_URL: two gateways on one PostgreSQL schema, and the time from a
 * change sent to instance A until instance B serves it (p50, p99 over 100 changes); without, skipped with a note.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { residentSet, settled, startGateway, stop, type Gateway } from './footprint.js'
import { databaseUrl } from './postgres.js'
import { SEED_REQUEST, compare, median, pairedRatio, runOptions, type Contender, type Load, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'live-agents'
/** Many-agent / single-agent SendMessage requests/s (issue 45). */
export const TARGET = 0.9

const KEY = 'bench-operator-key-0123456789'
const AUTH = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const MB = 1024 * 1024
const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000)
const CHANGES = 100

/** Agent `a<n>`: 20 short documents, the returns policy among them (the seed's question is answered from it). */
function agentDefinition (index: number, name = `Agent ${index}`): Record<string, unknown> {
  const documents = Array.from({ length: 20 }, (_, n) => n === 0
    ? { id: 'returns', title: 'Returns policy', body: 'You can return an order within 30 days of delivery for a full refund.' }
    : { id: `doc-${n}`, title: `Topic ${n} of agent ${index}`, body: `Facts about topic ${n}: opening hours, prices and the people to ask about item ${index}-${n}.` })
  return { id: `a${index}`, name, description: `Agent ${index}, published at runtime.`, documents }
}

async function publish (base: string, definition: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${base}/api/v1/agents`, { method: 'POST', headers: AUTH, body: JSON.stringify(definition) })
  if (response.status !== 201) throw new Error(`publish ${definition.id as string}: HTTP ${response.status} ${await response.text()}`)
}

const sendLoad = (agent: string): Load => ({
  method: 'POST',
  path: `/a2a/${agent}`,
  headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI },
  body: SEED_REQUEST
})
const cardLoad = (agent: string): Load => ({ method: 'GET', path: `/a2a/${agent}/.well-known/agent-card.json` })

/** p50 and p99 latency (ms) of one autocannon run of `durationSec`. */
async function latency (url: string, load: Load, options: RunOptions): Promise<{ p50: number, p99: number }> {
  const result = await autocannon({ url: url + load.path, method: load.method, headers: load.headers, body: load.body, duration: options.durationSec, connections: options.connections, workers: 1 })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${load.path}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { p50: result.latency.p50, p99: result.latency.p99 }
}

const mb = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`
const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]

/** A change on A (a replace) until B's card shows it, CHANGES times: the times in ms. */
async function propagation (url: string): Promise<number[] | string> {
  const schema = `a2a_bench_${process.pid}_${randomBytes(4).toString('hex')}`
  const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, OPERATOR_API_KEY: KEY, RATE_LIMIT_OPERATOR_MAX: '0' }
  const gateways: Gateway[] = []
  try {
    const a = await startGateway(env)
    gateways.push(a)
    const b = await startGateway(env)
    gateways.push(b)
    await publish(a.url, agentDefinition(0))
    const times: number[] = []
    for (let version = 2; version <= CHANGES + 1; version++) {
      const name = `Agent 0, version ${version}`
      const started = performance.now()
      const response = await fetch(`${a.url}/api/v1/agents/a0`, { method: 'PUT', headers: { ...AUTH, 'if-match': `"${version - 1}"` }, body: JSON.stringify(agentDefinition(0, name)) })
      if (response.status !== 200) throw new Error(`replace: HTTP ${response.status}`)
      for (;;) {
        const card = await (await fetch(`${b.url}/a2a/a0/.well-known/agent-card.json`)).json() as { name?: string }
        if (card.name === name) break
        if (performance.now() - started > 10_000) throw new Error('B did not serve the change within 10 s')
      }
      times.push(performance.now() - started)
    }
    return times
  } finally {
    for (const gateway of gateways) await stop(gateway)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`drop schema if exists ${schema} cascade`).finally(async () => { await client.end() })
  }
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions(overrides)
  if (residentSet(process.pid) === undefined) return { name, rows: [], ratios: [], notes: ['skipped: the resident set is read from /proc (Linux)'] }
  const [manyDir, oneDir] = await Promise.all([mkdtemp(join(tmpdir(), 'a2a-bench-live-')), mkdtemp(join(tmpdir(), 'a2a-bench-live-one-'))])
  const gateways: Gateway[] = []
  try {
    const many = { STATE: 'embedded', DATA_DIR: manyDir, OPERATOR_API_KEY: KEY, RATE_LIMIT_OPERATOR_MAX: '0' }
    const seeding = await startGateway(many)
    gateways.push(seeding)
    const publishTimes: number[] = []
    for (let index = 0; index < AGENTS; index++) {
      const started = performance.now()
      await publish(seeding.url, agentDefinition(index))
      publishTimes.push(performance.now() - started)
    }
    const seeded = await settled(seeding)
    await stop(seeding)

    // The single-agent gateway: one agent of the same shape, published, then restarted as the other one is.
    const single = { STATE: 'embedded', DATA_DIR: oneDir, OPERATOR_API_KEY: KEY, RATE_LIMIT_OPERATOR_MAX: '0' }
    const seedingOne = await startGateway(single)
    gateways.push(seedingOne)
    await publish(seedingOne.url, agentDefinition(Math.floor(AGENTS / 2)))
    await stop(seedingOne)
    const one = await startGateway(single)
    gateways.push(one)
    const oneMemory = await settled(one)
    const loaded = await startGateway(many)
    gateways.push(loaded)
    const manyMemory = await settled(loaded)
    const target = `a${Math.floor(AGENTS / 2)}`

    const contenders: Contender[] = [
      { name: `SendMessage, ${AGENTS} agents (to ${target})`, url: loaded.url, load: sendLoad(target) },
      { name: `SendMessage, one agent (${target})`, url: one.url, load: sendLoad(target) },
      { name: `card, ${AGENTS} agents`, url: loaded.url, load: cardLoad(target) },
      { name: 'card, one agent', url: one.url, load: cardLoad(target) }
    ]
    const rows = await compare(contenders, options)
    const latencies = []
    for (const contender of contenders) latencies.push({ name: contender.name, ...await latency(contender.url, contender.load, options) })
    const perAgent = (manyMemory.now - oneMemory.now) / AGENTS

    const url = databaseUrl()
    const changes = url === undefined ? 'skipped: no BENCH_DATABASE_URL or TEST_DATABASE_URL' : await propagation(url)
    return {
      name,
      rows,
      ratios: [
        { description: `SendMessage, ${AGENTS} agents / one agent`, ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: `card, ${AGENTS} agents / one agent (reported)`, ratio: pairedRatio(rows, 2, 3), target: 0 }
      ],
      notes: [
        `${AGENTS} agents × 20 documents published through the operator API: p50 ${median(publishTimes).toFixed(1)} ms, p99 ${percentile(publishTimes, 0.99).toFixed(1)} ms each (embedded; resident ${mb(seeded.now)} after)`,
        `start-up to ready: ${AGENTS} agents ${loaded.readyMs} ms, one agent ${one.readyMs} ms (embedded, a restart on the DATA_DIR)`,
        `resident set after start: ${AGENTS} agents ${mb(manyMemory.now)}, one agent ${mb(oneMemory.now)}: ${(perAgent / 1024).toFixed(1)} KB per agent`,
        ...latencies.map((entry) => `latency ${entry.name}: p50 ${entry.p50} ms, p99 ${entry.p99} ms (${options.connections} connections)`),
        typeof changes === 'string'
          ? `a change on A served by B: ${changes}`
          : `a change on A served by B (PostgreSQL, ${CHANGES} replaces, from the PUT sent to B's card showing it): p50 ${percentile(changes, 0.5).toFixed(1)} ms, p99 ${percentile(changes, 0.99).toFixed(1)} ms`
      ]
    }
  } finally {
    for (const gateway of gateways) if (gateway.process.exitCode === null && gateway.process.signalCode === null) await stop(gateway)
    await Promise.all([manyDir, oneDir].map(async (dir) => await rm(dir, { recursive: true, force: true })))
  }
}
