/**
 * What the default state costs the gateway: the seed's SendMessage (A2A-Version 1.0, the converse extension
 * requested; the demo agent answers with a Message and its envelope) on the same gateway twice, from one run — with
 * the embedded database (PGlite in the gateway's process: every turn commits the conversation before the reply goes
 * out) and in memory. Targets (issue 43): embedded / memory ≥ 0.35 by requests/s, and the turn's writes (the CPU the
 * embedded gateway spends per request beyond the memory one's) at most twice one autocommit INSERT of a
 * conversation's bytes on PGlite, measured in the same run (floors.ts).
 *
 * The embedded gateway's folder is a fresh temporary one, removed at the end. Each gateway runs in its own child
 * process (child-app.ts); rounds interleave, the ratio is the median of per-round ratios. Unlike PostgreSQL's
 * scenario, the database's work is the gateway process's own here, so its CPU per request includes it: the
 * difference of the two is one turn's writes.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { migrate, openEmbeddedDatabase } from 'a2a-converse/postgres'
import { buildMemoryGateway, checkReply, LOAD } from './postgres.js'
import { commitSharing, insertFloor, sequentialLatency, withInsertPerTurn, withTurnRowsPerTurn, TURN_BYTES, type Connection } from './floors.js'
import { startChildApp, type ChildApp } from './child-app.js'
import { compare, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'embedded'
/** Embedded / memory (issue 43). */
export const TARGET = 0.35
/** The turn's writes at most twice one INSERT of the same bytes (issue 43). */
export const FLOOR_TARGET = 0.5
/** Group commit would be built where sharing a commit buys at least 10 % (the project's rule for a fast path). */
export const GROUP_COMMIT_TARGET = 1.1

/** Where the parent tells the child which folder this run uses. */
const DATA_DIR_VARIABLE = 'A2A_CONVERSE_BENCH_DATA_DIR'

/** Child: the gateway with the demo agent, state in the embedded database. */
export async function buildEmbeddedGateway (): Promise<FastifyInstance> {
  // The rate limit off: the load generator is one client address.
  return await buildGateway({ config: loadConfig({ STATE: 'embedded', DATA_DIR: process.env[DATA_DIR_VARIABLE], LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }) })
}

export { buildMemoryGateway }

/** Child: the memory gateway whose every turn first runs one INSERT on a PGlite of its own (floors.ts). */
export async function buildFloorGateway (): Promise<FastifyInstance> {
  const database = await openEmbeddedDatabase({
    dataDir: join(process.env[DATA_DIR_VARIABLE] as string, 'floor'),
    templates: fileURLToPath(new URL('../cluster-templates/', import.meta.url)),
    logger: { warn () {} }
  })
  const app = await buildMemoryGateway()
  app.addHook('onClose', async () => { await database.close() })
  return await withInsertPerTurn(app, async (text) => await database.pool.query(text), async (query, values) => await database.pool.query(query, values), 'bench_turn_floor')
}

/** Child: the memory gateway whose every turn first writes the turn's rows in one plain statement on PGlite (floors.ts). */
export async function buildRowsFloorGateway (): Promise<FastifyInstance> {
  const database = await openEmbeddedDatabase({
    dataDir: join(process.env[DATA_DIR_VARIABLE] as string, 'rows-floor'),
    templates: fileURLToPath(new URL('../cluster-templates/', import.meta.url)),
    logger: { warn () {} }
  })
  await migrate(database.db)
  const app = await buildMemoryGateway()
  app.addHook('onClose', async () => { await database.close() })
  return await withTurnRowsPerTurn(app, async (query, values) => await database.pool.query(query, values))
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const dataDir = await mkdtemp(join(tmpdir(), 'a2a-bench-embedded-'))
  process.env[DATA_DIR_VARIABLE] = dataDir
  const servers: ChildApp[] = []
  try {
    servers.push(await startChildApp(import.meta.url, 'buildEmbeddedGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildMemoryGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildFloorGateway'))
    servers.push(await startChildApp(import.meta.url, 'buildRowsFloorGateway'))
    const [embedded, memory, floorGateway, rowsFloorGateway] = servers
    const contenders: Contender[] = [
      { name: 'gateway SendMessage, state embedded (PGlite)', url: embedded.url, load: LOAD, usage: embedded.usage },
      { name: 'gateway SendMessage, state in memory', url: memory.url, load: LOAD, usage: memory.usage },
      { name: 'the floor: in memory + one INSERT on PGlite per turn', url: floorGateway.url, load: LOAD, usage: floorGateway.usage },
      { name: 'the rows\' floor: in memory + the turn\'s rows in one plain statement on PGlite', url: rowsFloorGateway.url, load: LOAD, usage: rowsFloorGateway.usage }
    ]
    const sizes = [await checkReply(contenders[0]), await checkReply(contenders[1])]
    const rows = await compare(contenders, options)
    // A knowledge turn's latency alone, one request at a time (a new conversation each), then in memory.
    const latency = [await sequentialLatency(contenders[0].url + LOAD.path, LOAD), await sequentialLatency(contenders[1].url + LOAD.path, LOAD)]
    await Promise.all(servers.splice(0).map(async (server) => await server.close()))
    // The floor, on the folder the gateway wrote (the gateway gone): one INSERT of a conversation's bytes.
    const database = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
    let floor
    let sharing
    try {
      const bytes = Number((await database.pool.query('select avg(length(state::text))::int as bytes from converse_conversations where state is not null')).rows[0].bytes)
      floor = await insertFloor(async (text) => await database.pool.query(text), async (query, values) => await database.pool.query(query, values), 'bench_floor', bytes)
      // Group commit, measured: INSERTs ten to a transaction against each its own commit.
      const connection = await database.pool.connect()
      try {
        sharing = await commitSharing(connection as unknown as Connection, 'bench_floor', bytes)
      } finally {
        connection.release()
      }
    } finally {
      await database.close()
    }
    const cpu = (row: Row) => row.cpuMicrosPerRequest as number
    const writes = cpu(rows[0]) - cpu(rows[1])
    const rowsWrites = cpu(rows[3]) - cpu(rows[1])
    const noisy = rows.some((row) => Math.max(...row.samples) > 1.5 * Math.min(...row.samples))
    return {
      name,
      rows,
      ratios: [
        { description: 'embedded / memory', ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: 'the floor (memory + one INSERT per turn) / memory: what one statement per turn allows', ratio: pairedRatio(rows, 2, 1), target: TARGET },
        { description: 'the rows\' floor (memory + the turn\'s rows, no checks) / memory: what the turn\'s rows allow', ratio: pairedRatio(rows, 3, 1), target: TARGET },
        { description: 'one-INSERT floor / the turn\'s writes, CPU', ratio: floor.cpuMicros / writes, target: FLOOR_TARGET },
        { description: 'one-INSERT floor / the turn\'s rows alone (the rows\' floor gateway\'s writes), CPU: what the rows allow', ratio: floor.cpuMicros / rowsWrites, target: FLOOR_TARGET },
        { description: 'INSERTs ten to a commit / each its own, by CPU', ratio: sharing.alone.cpuMicros / sharing.shared.cpuMicros, target: GROUP_COMMIT_TARGET }
      ],
      notes: [
        `sequential latency of a knowledge turn, p50 / p99: ${contenders[0].name.replace('gateway SendMessage, ', '')} ${latency[0].p50.toFixed(2)} / ${latency[0].p99.toFixed(2)} ms, in memory ${latency[1].p50.toFixed(2)} / ${latency[1].p99.toFixed(2)} ms`,
        `embedded / the rows' floor (what the turn's checks and the store cost beyond its rows): ${pairedRatio(rows, 0, 3).toFixed(3)}`,
        `reply bytes: embedded ${sizes[0]}, memory ${sizes[1]}`,
        `gateway CPU per request (median, the embedded database's work included): embedded ${cpu(rows[0]).toFixed(1)} µs, memory ${cpu(rows[1]).toFixed(1)} µs — one turn's writes ≈ ${writes.toFixed(1)} µs; the floor gateway ${cpu(rows[2]).toFixed(1)} µs (one INSERT of ${TURN_BYTES} bytes per turn), the rows' floor gateway ${cpu(rows[3]).toFixed(1)} µs (the turn's rows: a conversation of ${TURN_BYTES} bytes, its owner's count, its answer)`,
        `floor: one autocommit INSERT of ${floor.bytes} bytes (a conversation's average) on PGlite, prepared: ${floor.cpuMicros.toFixed(1)} µs CPU, ${floor.wallMicros.toFixed(1)} µs wall`,
        `group commit, measured on PGlite per INSERT: ten to a commit ${sharing.shared.cpuMicros.toFixed(1)} µs CPU, ${sharing.shared.wallMicros.toFixed(1)} µs wall; each its own ${sharing.alone.cpuMicros.toFixed(1)} µs CPU, ${sharing.alone.wallMicros.toFixed(1)} µs wall (docs/state.md, "Group commit")`,
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
