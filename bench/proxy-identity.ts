/**
 * The caller's identity to the upstream (docs/trust.md): the same upstream behind two gateways in proxy mode, one
 * caller authenticated by an API key, the upstream told who calls with a signed assertion (`identity: assertion`,
 * Ed25519) or not (`none`), each server in its own child process. The assertion is signed once per caller and reused
 * for four of its five minutes, so in steady state a call costs a cache lookup and one header more.
 *
 * - throughput: requests/s with assertions / without (target ≥ 0.9), and each gateway's CPU µs per request.
 */
import { checkReply, spawnServer, stopServer, type Child } from './gateway.js'
import { BENCH_CALLER_KEY, SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'proxy-identity'
export const TARGET = 0.9

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const children: Child[] = []
  try {
    const upstream = await spawnServer('upstream')
    children.push(upstream)
    const assertion = await spawnServer('proxy-assertion', [], { BENCH_UPSTREAM_URL: upstream.url })
    children.push(assertion)
    const none = await spawnServer('proxy-caller', [], { BENCH_UPSTREAM_URL: upstream.url })
    children.push(none)
    const headers = { ...SEED_HEADERS, authorization: `Bearer ${BENCH_CALLER_KEY}` }
    const contenders: Contender[] = [
      { name: 'proxy, identity: assertion (signed JWT per caller)', url: assertion.url, load: { method: 'POST', path: assertion.path, headers, body: SEED_REQUEST }, usage: assertion.usage },
      { name: 'proxy, identity: none', url: none.url, load: { method: 'POST', path: none.path, headers, body: SEED_REQUEST }, usage: none.usage }
    ]
    for (const contender of contenders) await checkReply(contender)
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [{ description: 'assertion / none', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `gateway process CPU per request (median): assertion ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs, none ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs`,
        `one caller (one API key), ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s; the upstream does not verify (its cost is the upstream's)`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
  }
}
