/**
 * What the default state costs the gateway: the seed's SendMessage (A2A-Version 1.0, the converse extension
 * requested; the demo agent answers with a Message and its envelope) on the same gateway twice, from one run — with
 * the embedded database (PGlite in the gateway's process: every turn commits the conversation before the reply goes
 * out) and in memory. Target: embedded / memory ≥ 0.5 by requests/s.
 *
 * The embedded gateway's folder is a fresh temporary one, removed at the end. Each gateway runs in its own child
 * process (child-app.ts); rounds interleave, the ratio is the median of per-round ratios. Unlike PostgreSQL's
 * scenario, the database's work is the gateway process's own here, so its CPU per request includes it: the
 * difference of the two is one turn's writes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { buildMemoryGateway, checkReply, LOAD } from './postgres.js'
import { startChildApp, type ChildApp } from './child-app.js'
import { compare, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'embedded'
/** Embedded / memory. */
export const TARGET = 0.5

/** Where the parent tells the child which folder this run uses. */
const DATA_DIR_VARIABLE = 'A2A_CONVERSE_BENCH_DATA_DIR'

/** Child: the gateway with the demo agent, state in the embedded database. */
export async function buildEmbeddedGateway (): Promise<FastifyInstance> {
  // The rate limit off: the load generator is one client address.
  return await buildGateway({ config: loadConfig({ STATE: 'embedded', DATA_DIR: process.env[DATA_DIR_VARIABLE], LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }) })
}

export { buildMemoryGateway }

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const dataDir = await mkdtemp(join(tmpdir(), 'a2a-bench-embedded-'))
  process.env[DATA_DIR_VARIABLE] = dataDir
  const servers: ChildApp[] = []
  try {
    servers.push(await startChildApp(import.meta.url, 'buildEmbeddedGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildMemoryGateway'))
    const [embedded, memory] = servers
    const contenders: Contender[] = [
      { name: 'gateway SendMessage, state embedded (PGlite)', url: embedded.url, load: LOAD, usage: embedded.usage },
      { name: 'gateway SendMessage, state in memory', url: memory.url, load: LOAD, usage: memory.usage }
    ]
    const sizes = [await checkReply(contenders[0]), await checkReply(contenders[1])]
    const rows = await compare(contenders, options)
    const cpu = (row: Row) => row.cpuMicrosPerRequest as number
    const noisy = rows.some((row) => Math.max(...row.samples) > 1.5 * Math.min(...row.samples))
    return {
      name,
      rows,
      ratios: [{ description: 'embedded / memory', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `reply bytes: embedded ${sizes[0]}, memory ${sizes[1]}`,
        `gateway CPU per request (median, the embedded database's work included): embedded ${cpu(rows[0]).toFixed(1)} µs, memory ${cpu(rows[1]).toFixed(1)} µs — one turn's writes ≈ ${(cpu(rows[0]) - cpu(rows[1])).toFixed(1)} µs`,
        `each gateway in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`,
        ...(noisy ? ['WARNING: requests/s varied more than 1.5× between rounds (other load on the machine); the ratio is less reliable'] : [])
      ]
    }
  } finally {
    await Promise.all(servers.map(async (server) => await server.close()))
    delete process.env[DATA_DIR_VARIABLE]
    await rm(dataDir, { recursive: true, force: true })
  }
}
