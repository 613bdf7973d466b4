/**
 * What push notifications cost a turn, and how soon a webhook hears of an update (issue 26).
 *
 * The turn: a typed call of the demo's `book_table` with every slot given (A2A-Version 1.0, the converse extension
 * active), which the routine completes in one turn: a Task, saved twice (SUBMITTED, then COMPLETED). Once with an
 * inline push config (`configuration.taskPushNotificationConfig`, a receiver on loopback: three notifications per
 * turn — SUBMITTED, the booking's artifact, COMPLETED — the config removed with the finished task), once without, on the same gateway process in alternating rounds.
 * Target (issue 43): with a config ≥ 0.7× without, by requests/s — or, if HTTP itself forbids it, the push path's own
 * cost (the gateway's CPU per turn with a config minus without) ≤ 1.3× its floor: the same three notifications
 * POSTed with undici alone to the same receiver, from a child process of its own, in the same run (push-floor.ts).
 *
 * Latency: turns one at a time (no other load), the receiver taking each COMPLETED notification's arrival time
 * minus the task status's `timestamp` (set when the update is made, before it is saved): an upper bound of "commit
 * to the receiver's 200". p50 and p99 on memory, and on PostgreSQL when BENCH_DATABASE_URL / TEST_DATABASE_URL is
 * set. Targets: p50 ≤ 5 ms memory, ≤ 25 ms PostgreSQL.
 *
 * The gateways and the receiver each run in their own process (child-app.ts); the receiver answers 200 at once.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { startChildApp, type ChildApp } from './child-app.js'
import { databaseUrl, withClient } from './postgres.js'
import {
  FLOOR_TARGET, IN_PROCESS_FLOOR_HEADER, cpuDifference, pushFloor, senderHeaders, turnNotifications, withInProcessFloor, type CapturedNotification
} from './push-floor.js'
import { compare, median, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'push'
/** With a config / without, by requests/s. */
export const TARGET = 0.7
/** p50 of status timestamp → receiver, in ms. */
export const P50_TARGET_MS = { memory: 5, postgres: 25 }
/** Turns of the latency phase, per store. */
const LATENCY_TURNS = 300

const SCHEMA_VARIABLE = 'A2A_CONVERSE_BENCH_PUSH_SCHEMA'

const GATEWAY_ENV = {
  LOG_LEVEL: 'silent',
  // The load generator is one client address: no rate limit, no conversation cap it would reach.
  RATE_LIMIT_MAX: '0',
  MAX_CONVERSATIONS_PER_CALLER: '10000000',
  // The receiver is on loopback, plain http.
  PUSH_ALLOWED_HOSTS: '127.0.0.1',
  PUSH_ALLOW_HTTP: 'true'
}

/** Child: the gateway with the demo agent, in memory. */
export async function buildMemoryGateway (): Promise<FastifyInstance> {
  // With the in-process floor: its turns are the plain ones plus the POSTs (push-floor.ts).
  return withInProcessFloor(await buildGateway({ config: loadConfig({ ...GATEWAY_ENV, STATE: 'memory' }) }))
}

/** Child: the same gateway, state (and the push outbox) on PostgreSQL. */
export async function buildPostgresGateway (): Promise<FastifyInstance> {
  return await buildGateway({ config: loadConfig({ ...GATEWAY_ENV, DATABASE_URL: databaseUrl(), DATABASE_SCHEMA: process.env[SCHEMA_VARIABLE] }) })
}

/**
 * Child: the webhook receiver. POST /hook answers 200 at once and keeps, for each COMPLETED status update, its
 * arrival time minus the status timestamp, and the last notification of each kind as sent (its body and headers: the
 * floor posts those); GET /stats returns those (and the count of all notifications), DELETE /stats forgets the counts.
 */
export async function buildReceiver (): Promise<FastifyInstance> {
  const app = Fastify({ bodyLimit: 1 << 20 })
  app.addContentTypeParser('application/a2a+json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, { raw: body, json: JSON.parse(body as string) })
    } catch (error) {
      done(error as Error)
    }
  })
  let notifications = 0
  let latencies: number[] = []
  const kinds: Record<string, number> = {}
  const samples: Record<string, CapturedNotification> = {}
  app.post('/hook', async (request) => {
    const arrived = Date.now()
    notifications++
    const { raw, json } = request.body as { raw: string, json: { statusUpdate?: { status?: { state?: string, timestamp?: string } } } }
    const status = json.statusUpdate?.status
    const kind = status?.state ?? Object.keys(json)[0]
    kinds[kind] = (kinds[kind] ?? 0) + 1
    samples[kind] = { body: raw, headers: senderHeaders(request.headers) }
    if (status?.state === 'TASK_STATE_COMPLETED' && status.timestamp !== undefined) latencies.push(arrived - Date.parse(status.timestamp))
    return {}
  })
  app.get('/stats', async () => ({ notifications, latencies, kinds, samples }))
  app.delete('/stats', async () => {
    notifications = 0
    latencies = []
    for (const kind of Object.keys(kinds)) kinds[kind] = 0
    return {}
  })
  return app
}

/** The typed call that completes `book_table` in one turn; `hook`: the inline config's URL. */
export function bookingBody (hook?: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'book a table' }],
        extensions: [CONVERSE_EXTENSION_URI],
        metadata: { [CONVERSE_EXTENSION_URI]: { call: { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 2 } } } }
      },
      ...(hook === undefined ? {} : { configuration: { taskPushNotificationConfig: { url: hook, token: 'bench-token' } } })
    }
  })
}

export const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI }

/** Sends one booking and checks it completed; returns the task id. */
async function book (gatewayUrl: string, hook?: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/a2a/demo`, { method: 'POST', headers: HEADERS, body: bookingBody(hook) })
  const text = await res.text()
  const task = (JSON.parse(text) as { result?: { task?: { id?: string, status?: { state?: string } } } }).result?.task
  if (res.status !== 200 || task?.status?.state !== 'TASK_STATE_COMPLETED') throw new Error(`unexpected booking reply (status ${res.status}): ${text.slice(0, 500)}`)
  return task.id as string
}

interface Stats { notifications: number, latencies: number[], kinds: Record<string, number>, samples: Record<string, CapturedNotification> }

async function stats (receiver: ChildApp, reset = false): Promise<Stats> {
  const reply = await fetch(`${receiver.url}/stats`, { method: reset ? 'DELETE' : 'GET' })
  return await reply.json() as Stats
}

/** Waits until the receiver holds `count` COMPLETED latencies (at most 30 s). */
async function waitForLatencies (receiver: ChildApp, count: number): Promise<Stats> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const current = await stats(receiver)
    if (current.latencies.length >= count) return current
    if (Date.now() > deadline) throw new Error(`the receiver got ${current.latencies.length} of ${count} COMPLETED notifications in 30 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Waits until no notification arrived for a second (the load's backlog delivered); the stats then. */
async function settled (receiver: ChildApp): Promise<Stats> {
  let last = await stats(receiver)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const now = await stats(receiver)
    if (now.notifications === last.notifications) return now
    last = now
  }
}

function percentile (values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]
}

/** Turns one at a time, each with a config; the COMPLETED notification's latency per turn. */
async function latencies (gateway: ChildApp, receiver: ChildApp, hook: string): Promise<number[]> {
  await stats(receiver, true)
  for (let turn = 0; turn < LATENCY_TURNS; turn++) {
    await book(gateway.url, hook)
    // One turn at a time, delivery included: the next update is made once this one arrived.
    await waitForLatencies(receiver, turn + 1)
  }
  return (await stats(receiver)).latencies
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const url = databaseUrl()
  const schema = `a2a_bench_push_${process.pid}_${randomBytes(4).toString('hex')}`
  process.env[SCHEMA_VARIABLE] = schema
  const children: ChildApp[] = []
  try {
    const receiver = await startChildApp(import.meta.url, 'buildReceiver')
    children.push(receiver)
    const hook = `${receiver.url}/hook`
    const memory = await startChildApp(import.meta.url, 'buildMemoryGateway')
    children.push(memory)
    await book(memory.url, hook)
    await book(memory.url)
    // The turn's notifications as the receiver got them: the in-process floor POSTs those.
    const floorSet = await fetch(`${memory.url}/bench/push-floor`, {
      method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: hook, notifications: turnNotifications((await settled(receiver)).samples) })
    })
    if (!floorSet.ok) throw new Error(`the in-process floor was not set: ${floorSet.status} ${await floorSet.text()}`)
    const contenders: Contender[] = [
      { name: 'book_table with an inline push config', url: memory.url, load: { method: 'POST', path: '/a2a/demo', headers: HEADERS, body: bookingBody(hook) }, usage: memory.usage },
      { name: 'book_table without', url: memory.url, load: { method: 'POST', path: '/a2a/demo', headers: HEADERS, body: bookingBody() }, usage: memory.usage },
      {
        name: 'book_table without, its three notifications POSTed with undici alone after the reply (the in-process floor)',
        url: memory.url,
        load: { method: 'POST', path: '/a2a/demo', headers: { ...HEADERS, [IN_PROCESS_FLOOR_HEADER]: '1' }, body: bookingBody() },
        usage: memory.usage
      }
    ]
    await stats(receiver, true)
    const rows = await compare(contenders, options)
    const during = await stats(receiver)
    const drained = await settled(receiver)
    const notes = [
      `notifications received during the load (the in-process floor's included): ${during.notifications}, ${drained.notifications - during.notifications} more after it ` +
        `(per turn with a config: ${Object.keys(drained.kinds).join(', ')}; delivered after the reply)`,
      `gateway CPU per request (median): with ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs, without ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs (deliveries run in the same process)`
    ]
    const floor = await pushFloor(rows, drained.samples, hook, options, children)
    notes.push(floor.note)
    const inProcessMicros = cpuDifference(rows, 2, 1)
    notes.push(`in-process floor: ${inProcessMicros.toFixed(1)} µs of gateway CPU per turn (the same turn with its three notifications POSTed by undici ` +
      `alone after the reply, less without); the push path's own cost / it: ${(floor.ownMicros / inProcessMicros).toFixed(2)}`)
    const ratios = [
      { description: 'turns with a push config / without', ratio: pairedRatio(rows, 0, 1), target: TARGET },
      { description: 'turns with the in-process floor\'s POSTs / without: what three POSTs per turn allow', ratio: pairedRatio(rows, 2, 1), target: TARGET },
      // Higher is better, as every ratio here: the floor over the push path's own cost, at least 1 / 1.3.
      { description: `push floor (own process) / push path's own CPU (cost ≤ ${FLOOR_TARGET}× floor)`, ratio: floor.floorMicros / floor.ownMicros, target: 1 / FLOOR_TARGET },
      { description: `push floor (in the gateway's process) / push path's own CPU (cost ≤ ${FLOOR_TARGET}× floor)`, ratio: inProcessMicros / floor.ownMicros, target: 1 / FLOOR_TARGET }
    ]

    const measured: Array<[keyof typeof P50_TARGET_MS, number[]]> = [['memory', await latencies(memory, receiver, hook)]]
    if (url !== undefined) {
      const postgres = await startChildApp(import.meta.url, 'buildPostgresGateway')
      children.push(postgres)
      await book(postgres.url, hook)
      measured.push(['postgres', await latencies(postgres, receiver, hook)])
    } else {
      notes.push('PostgreSQL latency skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL)')
    }
    for (const [store, values] of measured) {
      const p50 = median(values)
      notes.push(`status timestamp → receiver, ${store}, ${values.length} turns one at a time: p50 ${p50} ms, p99 ${percentile(values, 0.99)} ms, ` +
        `max ${Math.max(...values)} ms (target p50 ≤ ${P50_TARGET_MS[store]} ms: ${p50 <= P50_TARGET_MS[store] ? 'ok' : 'MISSED'})`)
    }
    notes.push(`one gateway process for both contenders, the receiver in its own; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`)
    return { name, rows, ratios, notes }
  } finally {
    await Promise.all(children.map(async (child) => await child.close()))
    delete process.env[SCHEMA_VARIABLE]
    if (url !== undefined) await withClient(url, async (client) => await client.query(`drop schema if exists ${schema} cascade`))
  }
}
