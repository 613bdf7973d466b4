/**
 * What identities cost on the gateway's seed SendMessage, side by side in one run:
 *
 * - walk-in: the gateway as the demo runs it (no credential, rate limits off);
 * - keys + limit: the same gateway requiring an API key (`A2A_API_KEYS`), each request sending one, and the
 *   A2A door's rate limit on in memory (a limit no run reaches): the authentication, the caller-scoped stores and
 *   the limiter's count per request.
 *
 * Target: keys + limit ≥ 0.85 × walk-in. Each server in its own child process (see gateway.ts for the fairness
 * rules); the ratio is the median of per-round ratios.
 */
import { BENCH_API_KEY } from './gateway-servers.js'
import { checkReply, DEFAULT_CONNECTIONS, spawnServer, stopServer, type Child } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'identities'
export const TARGET = 0.85

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const children: Child[] = []
  try {
    children.push(await spawnServer('gateway'))
    children.push(await spawnServer('gateway-keys'))
    const contenders: Contender[] = [
      {
        name: 'gateway, walk-in (no credential, no rate limit)',
        url: children[0].url,
        load: { method: 'POST', path: children[0].path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
        usage: children[0].usage
      },
      {
        name: 'gateway, API key required + rate limit (memory)',
        url: children[1].url,
        load: { method: 'POST', path: children[1].path, headers: { ...SEED_HEADERS, authorization: `Bearer ${BENCH_API_KEY}` }, body: SEED_REQUEST },
        usage: children[1].usage
      }
    ]
    for (const contender of contenders) await checkReply(contender)
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [{ description: 'API key + rate limit / walk-in', ratio: pairedRatio(rows, 1, 0), target: TARGET }],
      notes: [
        `server CPU per request (median): ${rows.map((row, index) => `${children[index].kind} ${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`).join(', ')}`,
        `CPU-based ratio: ${pairedRatio(rows, 1, 0, true).toFixed(3)}`,
        `each server in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
  }
}
