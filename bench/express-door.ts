/**
 * The Express door against the SDK's own Express server, on the seed's SendMessage with the converse extension
 * requested, from one run: both run the same echo executor (bench/gateway-servers.ts: it attaches the same
 * envelope to one agent Message), each in its own child process, measured side by side in rotating rounds.
 *
 * - express-door: `converseRouter` — its own body reading, the A2A service's checks, the local backend over the
 *   SDK's request handler, the attached envelope validated and the reply decorated, the echo header;
 * - express: `jsonRpcHandler` of @a2a-js/sdk over DefaultRequestHandler (express.json(), its transport handler).
 *
 * Target: the door at least 0.9× the SDK's server (what the extension and the checks may cost on a reply that
 * does nothing else).
 */
import { checkReply, spawnServer, stopServer, type Child } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'express-door'
export const TARGET = 0.9

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  const children: Child[] = []
  try {
    children.push(await spawnServer('express-door'))
    children.push(await spawnServer('express'))
    const names = ['Express door (converseRouter), echo executor, extension active', '@a2a-js/sdk Express server, echo executor']
    const contenders: Contender[] = children.map((child, index) => ({
      name: names[index],
      url: child.url,
      load: { method: 'POST', path: child.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
      usage: child.usage
    }))
    const sizes: number[] = []
    for (const contender of contenders) sizes.push(await checkReply(contender))
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [{ description: 'Express door / SDK Express server', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `reply bytes: express-door ${sizes[0]}, express ${sizes[1]}`,
        `server CPU per request (median): ${rows.map((row, index) => `${children[index].kind} ${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`).join(', ')}`,
        `CPU-based ratio: ${pairedRatio(rows, 0, 1, true).toFixed(3)}`,
        `each server in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
  }
}
