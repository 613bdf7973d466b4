/**
 * What PostgreSQL state costs the gateway: the seed's SendMessage (A2A-Version 1.0, the converse extension
 * requested; the demo agent answers with a Message and its envelope) on the same gateway twice, from one run —
 * with DATABASE_URL (every turn commits the conversation to PostgreSQL before the reply goes out) and in memory.
 * Targets (issue 43): PostgreSQL / memory ≥ 0.45 by requests/s (the server shares the cores) and ≥ 0.56 by the
 * gateway's CPU per request; one autocommit INSERT of a conversation's bytes is measured alongside (floors.ts).
 *
 * The database: BENCH_DATABASE_URL, else TEST_DATABASE_URL; neither set skips the scenario with a note. The run
 * uses a schema of its own (`a2a_bench_<pid>_<random>`), dropped at the end.
 *
 * Each gateway runs in its own child process (child-app.ts); rounds interleave, the ratio is the median of
 * per-round ratios. The CPU per request counts the gateway process only: the PostgreSQL server's own work (on
 * the same cores here) shows in requests/s, not there.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { startChildApp, type ChildApp } from './child-app.js'
import { insertFloor, sequentialLatency, withInsertPerTurn } from './floors.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'postgres'
/** PostgreSQL / memory by requests/s (the server shares the machine's cores; issue 43). */
export const TARGET = 0.45
/** PostgreSQL / memory by the gateway's CPU per request (issue 43). */
export const CPU_TARGET = 0.56

/** Where the parent tells the children which schema this run uses. */
const SCHEMA_VARIABLE = 'A2A_CONVERSE_BENCH_SCHEMA'

/** The seed's question with the extension on (the embedded scenario sends the same). */
export const LOAD: Contender['load'] = {
  method: 'POST',
  path: '/a2a/demo',
  headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI },
  body: SEED_REQUEST
}

export function databaseUrl (): string | undefined {
  return process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
}

/** Child: the gateway with the demo agent, state on PostgreSQL. */
export async function buildPostgresGateway (): Promise<FastifyInstance> {
  return await buildGateway({
    // The rate limit off: the load generator is one client address.
    config: loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000', DATABASE_URL: databaseUrl(), DATABASE_SCHEMA: process.env[SCHEMA_VARIABLE] })
  })
}

/** Child: the same gateway with its in-memory default. */
export async function buildMemoryGateway (): Promise<FastifyInstance> {
  return await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }) })
}

/** Child: the memory gateway whose every turn first runs one INSERT on the server (floors.ts), on a pool of its own. */
export async function buildPostgresFloorGateway (): Promise<FastifyInstance> {
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 10 })
  const app = await buildMemoryGateway()
  app.addHook('onClose', async () => { await pool.end() })
  const table = `${process.env[SCHEMA_VARIABLE] as string}.bench_turn_floor`
  return await withInsertPerTurn(app, async (text) => await pool.query(text), async (query, values) => await pool.query(query, values), table)
}

/** Sends the request once and checks the reply is the demo's answer with its envelope; returns its byte size. */
export async function checkReply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  const message = (JSON.parse(text) as { result?: { message?: { parts?: Array<{ text?: string }>, metadata?: Record<string, { citations?: unknown[] }> } } }).result?.message
  const ok = res.status === 200 &&
    res.headers.get('a2a-extensions') === CONVERSE_EXTENSION_URI &&
    message?.parts?.[0]?.text === ANSWER_TEXT &&
    message.metadata?.[CONVERSE_EXTENSION_URI]?.citations?.length === 1
  if (!ok) throw new Error(`${contender.name}: unexpected reply (status ${res.status}): ${text.slice(0, 500)}`)
  return Buffer.byteLength(text)
}

/** One connection of its own for `work` (the schema's setup and teardown, counts). */
export async function withClient<T> (url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const url = databaseUrl()
  if (url === undefined) {
    return { name, rows: [], ratios: [], notes: ['skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL database to compare'] }
  }
  // Few connections keep the single-threaded gateway saturated without making autocannon the bottleneck.
  const options = runOptions({ connections: 10, ...overrides })
  const schema = `a2a_bench_${process.pid}_${randomBytes(4).toString('hex')}`
  process.env[SCHEMA_VARIABLE] = schema
  const servers: ChildApp[] = []
  try {
    servers.push(await startChildApp(import.meta.url, 'buildPostgresGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildMemoryGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildPostgresFloorGateway'))
    const [postgres, memory, floorGateway] = servers
    const contenders: Contender[] = [
      { name: 'gateway SendMessage, state on PostgreSQL', url: postgres.url, load: LOAD, usage: postgres.usage },
      { name: 'gateway SendMessage, state in memory', url: memory.url, load: LOAD, usage: memory.usage },
      { name: 'the floor: in memory + one INSERT on the server per turn', url: floorGateway.url, load: LOAD, usage: floorGateway.usage }
    ]
    const sizes = [await checkReply(contenders[0]), await checkReply(contenders[1])]
    const rows = await compare(contenders, options)
    // A knowledge turn's latency alone, one request at a time (a new conversation each), then in memory.
    const latency = [await sequentialLatency(contenders[0].url + LOAD.path, LOAD), await sequentialLatency(contenders[1].url + LOAD.path, LOAD)]
    await Promise.all(servers.splice(0).map(async (server) => await server.close()))
    // The floor, the gateways gone: one INSERT of a conversation's bytes from this process (the client's CPU).
    const { conversations, floor } = await withClient(url, async (client) => {
      const { n, bytes } = (await client.query(`select count(*) as n, avg(length(state::text))::int as bytes from ${schema}.converse_conversations where state is not null`)).rows[0]
      return { conversations: Number(n), floor: await insertFloor(async (text) => await client.query(text), async (query, values) => await client.query(query, values), `${schema}.bench_floor`, Number(bytes)) }
    })
    const cpu = (row: Row) => `${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`
    const noisy = rows.some((row) => Math.max(...row.samples) > 1.5 * Math.min(...row.samples))
    return {
      name,
      rows,
      ratios: [
        { description: 'PostgreSQL / memory', ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: 'PostgreSQL / memory, gateway CPU', ratio: pairedRatio(rows, 0, 1, true), target: CPU_TARGET },
        { description: 'the floor (memory + one INSERT per turn) / memory: what one statement per turn allows', ratio: pairedRatio(rows, 2, 1), target: TARGET },
        { description: 'the floor / memory, gateway CPU', ratio: pairedRatio(rows, 2, 1, true), target: CPU_TARGET }
      ],
      notes: [
        `sequential latency of a knowledge turn, p50 / p99: ${contenders[0].name.replace('gateway SendMessage, ', '')} ${latency[0].p50.toFixed(2)} / ${latency[0].p99.toFixed(2)} ms, in memory ${latency[1].p50.toFixed(2)} / ${latency[1].p99.toFixed(2)} ms`,
        `reply bytes: PostgreSQL ${sizes[0]}, memory ${sizes[1]}; ${conversations} conversations committed to PostgreSQL (one per request)`,
        `gateway CPU per request (median, the PostgreSQL server's work not included): PostgreSQL ${cpu(rows[0])}, memory ${cpu(rows[1])}, the floor ${cpu(rows[2])}`,
        `floor: one autocommit INSERT of ${floor.bytes} bytes (a conversation's average), prepared, from this process: ${floor.cpuMicros.toFixed(1)} µs of client CPU, ${floor.wallMicros.toFixed(1)} µs wall`,
        `each gateway in its own process, the database on ${new URL(url).host}; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`,
        ...(noisy ? ['WARNING: requests/s varied more than 1.5× between rounds (other load on the machine); the ratio is less reliable'] : [])
      ]
    }
  } finally {
    await Promise.all(servers.map(async (server) => await server.close()))
    delete process.env[SCHEMA_VARIABLE]
    await withClient(url, async (client) => await client.query(`drop schema if exists ${schema} cascade`))
  }
}
