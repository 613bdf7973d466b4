/**
 * Proxy mode: the same upstream agent (the SDK's Express server, echo executor: one agent Message carrying its
 * envelope) called directly and through the gateway in proxy mode (minimal agents-file form, the extension
 * active: the upstream's envelope validated, the reply decorated, the echo header), each in its own child process,
 * side by side in one run. On these 2 cores the upstream and the gateway share the CPU: through the gateway every
 * request costs both processes' work.
 *
 * - throughput: requests/s through the gateway / directly (target ≥ 0.6), and the gateway process's CPU µs per
 *   request;
 * - latency at light load: one connection, requests one after another, alternating direct and proxied in rounds;
 *   p50 and p99 of each, and what the gateway adds (target: p50 added ≤ 1 ms).
 */
import { request, Pool } from 'undici'
import { checkReply, spawnServer, stopServer, type Child } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, median, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'proxy'
export const TARGET = 0.6
/** Target of the p50 the gateway adds at light load, ms (reported, not a ratio). */
export const ADDED_P50_TARGET_MS = 1

const LATENCY_ROUNDS = 5
const LATENCY_REQUESTS_PER_ROUND = 400

/** Milliseconds of each of `count` sequential requests on one keep-alive connection. */
async function latencies (contender: Contender, count: number): Promise<number[]> {
  const pool = new Pool(contender.url, { connections: 1 })
  try {
    const out: number[] = []
    for (let index = 0; index < count; index++) {
      const started = process.hrtime.bigint()
      const response = await request(contender.url + contender.load.path, {
        dispatcher: pool, method: 'POST', headers: contender.load.headers, body: contender.load.body
      })
      await response.body.text()
      out.push(Number(process.hrtime.bigint() - started) / 1e6)
      if (response.statusCode !== 200) throw new Error(`${contender.name}: HTTP ${response.statusCode}`)
    }
    return out
  } finally {
    await pool.close()
  }
}

function percentile (values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const children: Child[] = []
  try {
    const upstream = await spawnServer('upstream')
    children.push(upstream)
    children.push(await spawnServer('proxy', [], { BENCH_UPSTREAM_URL: upstream.url }))
    const [direct, gateway] = children
    const headers = { ...SEED_HEADERS }
    const contenders: Contender[] = [
      { name: 'through the gateway (proxy mode, extension active)', url: gateway.url, load: { method: 'POST', path: gateway.path, headers, body: SEED_REQUEST }, usage: gateway.usage },
      { name: 'the upstream directly (@a2a-js/sdk Express server)', url: direct.url, load: { method: 'POST', path: direct.path, headers, body: SEED_REQUEST }, usage: direct.usage }
    ]
    const sizes: number[] = []
    for (const contender of contenders) sizes.push(await checkReply(contender))
    const rows = await compare(contenders, options)

    // Light load: sequential requests, alternating which goes first each round.
    for (const contender of contenders) await latencies(contender, 100)
    const p50s: number[][] = [[], []]
    const p99s: number[][] = [[], []]
    for (let round = 0; round < LATENCY_ROUNDS; round++) {
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const sample = await latencies(contenders[index], LATENCY_REQUESTS_PER_ROUND)
        p50s[index].push(percentile(sample, 0.5))
        p99s[index].push(percentile(sample, 0.99))
      }
    }
    const [p50Gateway, p50Direct] = p50s.map(median)
    const [p99Gateway, p99Direct] = p99s.map(median)
    const added50 = p50Gateway - p50Direct
    const ms = (value: number) => `${value.toFixed(3)} ms`
    return {
      name,
      rows,
      ratios: [{ description: 'through the gateway / upstream directly', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `gateway process CPU per request (median): ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs; upstream's (direct): ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs`,
        `light load (1 connection, sequential, ${LATENCY_ROUNDS} × ${LATENCY_REQUESTS_PER_ROUND} requests each): ` +
          `p50 direct ${ms(p50Direct)}, through ${ms(p50Gateway)}, added ${ms(added50)} (target ≤ ${ADDED_P50_TARGET_MS} ms: ${added50 <= ADDED_P50_TARGET_MS ? 'ok' : 'MISSED'}); ` +
          `p99 direct ${ms(p99Direct)}, through ${ms(p99Gateway)}, added ${ms(p99Gateway - p99Direct)}`,
        `reply bytes: through ${sizes[0]}, direct ${sizes[1]}`,
        `each server in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
  }
}
