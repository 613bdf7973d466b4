/**
 * What the lean SendMessage path buys (issue 9: keep a fast path only where it buys ≥ 10 % of the gateway's
 * requests/s). Two gateway child processes under the `gateway` scenario's load (the demo agent, the seed
 * SendMessage with the extension active), measured in rotated rounds: as built, and without the lean path
 * (packages/a2a-converse/src/backends/local/sdk-internals.ts; the dispatcher gets `leanSendMessage: false`).
 *
 * The lean path is turned off in the child alone (bench/fast-path-switches.ts); both children start with the
 * same switches module. Informative: no target, the notes give the ratios (requests/s and CPU per request,
 * median and spread of the per-round ratios) and the verdict against 1.10. (The serialized-once envelope
 * splice, the other fast path this scenario measured, bought the gateway nothing and was removed:
 * docs/performance.md.)
 */
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import type { FastifyInstance } from 'fastify'
import { startChildApp, type ChildApp } from './child-app.js'
import { switchCounts, switchesOff } from './fast-path-state.js'
import { checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, median, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'fast-paths'
/** A fast path is worth its lines when the contender with it serves at least this many times the one without. */
export const KEEP_THRESHOLD = 1.1

/** The gateway of a bench child; fails when the lean switch it was started with reached no dispatcher. */
export async function buildGatewayApp (): Promise<FastifyInstance> {
  // The rate limit off, as in every gateway child of the bench (the default limit would answer the load 429).
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }) })
  if (switchesOff().has('lean') && switchCounts.dispatchersWithoutLean === 0) {
    await app.close()
    throw new Error('BENCH_FAST_PATHS_OFF=lean reached no A2ADispatcher: see bench/fast-path-hooks.ts')
  }
  return app
}

const SWITCHES = new URL('./fast-path-switches.js', import.meta.url).href

function start (moduleUrl: string, exportName: string, off: string): Promise<ChildApp> {
  return startChildApp(moduleUrl, exportName, { execArgv: [`--import=${SWITCHES}`], env: { BENCH_FAST_PATHS_OFF: off } })
}

/** Every round's ratio of two rows (requests/s, or CPU per request inverted so that higher is better). */
function roundRatios (rows: readonly Row[], a: number, b: number, cpu: boolean): number[] {
  const [first, second] = cpu ? [rows[b].cpuSamples ?? [], rows[a].cpuSamples ?? []] : [rows[a].samples, rows[b].samples]
  return first.map((sample, round) => sample / second[round])
}

/** "1.043 (0.981–1.102)": the median of the per-round ratios and their range. */
function spread (rows: readonly Row[], a: number, b: number, cpu = false): string {
  const ratios = roundRatios(rows, a, b, cpu)
  return `${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`
}

/**
 * Against KEEP_THRESHOLD on requests/s and on CPU per request: under other load the first swings by 2× or more
 * between rounds, so a verdict the two figures do not share is reported as such.
 */
function verdict (rows: readonly Row[], a: number, b: number): string {
  const percent = `${Math.round((KEEP_THRESHOLD - 1) * 100)} %`
  const byRequests = pairedRatio(rows, a, b) >= KEEP_THRESHOLD
  const byCpu = pairedRatio(rows, a, b, true) >= KEEP_THRESHOLD
  if (byRequests && byCpu) return `buys ≥ ${percent}`
  if (!byRequests && !byCpu) return `buys < ${percent}`
  return `unclear: ≥ ${percent} by ${byRequests ? 'requests/s' : 'CPU'} only (noise; run again)`
}

const cpu = (row: Row) => `${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const url = import.meta.url
  const children = await Promise.all([start(url, 'buildGatewayApp', ''), start(url, 'buildGatewayApp', 'lean')])
  try {
    const names = ['gateway as built (lean path)', 'gateway without the lean SendMessage path']
    const contenders: Contender[] = children.map((child, index) => ({
      name: names[index],
      url: child.url,
      load: { method: 'POST', path: '/a2a/demo', headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
      usage: child.usage
    }))
    const sizes: number[] = []
    for (const contender of contenders) sizes.push(await checkReply(contender))
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [],
      notes: [
        `gateway: reply bytes ${sizes.join(', ')}; server CPU per request (median): ${rows.map(cpu).join(', ')}; ` +
          `${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`,
        `lean SendMessage path: gateway / without = ${spread(rows, 0, 1)} req/s, ${spread(rows, 0, 1, true)} by CPU — ${verdict(rows, 0, 1)}`
      ]
    }
  } finally {
    await Promise.all(children.map((child) => child.close()))
  }
}
