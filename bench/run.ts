/**
 * Runs every benchmark scenario in one process run and prints requests/s and the ratios each one is judged by.
 * Exit code 1 when a ratio misses its target. `npm run bench` builds first and runs dist/bench/run.js.
 * `BENCH_ONLY=gateway,plugin-overhead` (a comma list of scenario names) runs only those.
 */
import { formatTable, type ScenarioResult } from './lib.js'
import * as bindings from './bindings.js'
import * as expressDoor from './express-door.js'
import * as fastPaths from './fast-paths.js'
import * as gateway from './gateway.js'
import * as identities from './identities.js'
import * as mcp from './mcp.js'
import * as pluginOverhead from './plugin-overhead.js'
import * as postgres from './postgres.js'
import * as embedded from './embedded.js'
import * as footprint from './footprint.js'
import * as proxy from './proxy.js'
import * as proxyIdentity from './proxy-identity.js'
import * as protocolVersions from './protocol-versions.js'
import * as push from './push.js'
import * as observability from './observability.js'
import * as bigBodies from './big-bodies.js'
import * as liveAgents from './live-agents.js'

interface Scenario { name: string, run (): Promise<ScenarioResult> }

const all: Scenario[] = [pluginOverhead, gateway, bindings, protocolVersions, expressDoor, mcp, proxy, proxyIdentity, postgres, embedded, footprint, push, fastPaths, identities, observability, bigBodies, liveAgents]
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim()).filter((name) => name !== '')
const scenarios = only === undefined || only.length === 0 ? all : all.filter((scenario) => only.includes(scenario.name))
if (scenarios.length === 0) throw new Error(`BENCH_ONLY names no scenario (known: ${all.map((scenario) => scenario.name).join(', ')})`)

const results: ScenarioResult[] = []
for (const scenario of scenarios) {
  const started = Date.now()
  const result = await scenario.run()
  results.push(result)
  console.log(`\n${result.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  console.log(formatTable(
    ['contender', 'req/s (median)', 'rounds'],
    result.rows.map((row) => [row.name, row.requestsPerSecond.toFixed(0), row.samples.map((sample) => sample.toFixed(0)).join(' ')])
  ))
  for (const note of result.notes ?? []) console.log(`  ${note}`)
}

const ratios = results.flatMap((result) => result.ratios.map((ratio) => ({ scenario: result.name, ...ratio })))
console.log('\nratios (median of per-round ratios)')
console.log(formatTable(
  ['scenario', 'ratio', 'target', 'result'],
  ratios.map((ratio) => [
    `${ratio.scenario} (${ratio.description})`,
    ratio.ratio.toFixed(3),
    `>= ${ratio.target.toFixed(2)}`,
    ratio.ratio >= ratio.target ? 'ok' : 'BELOW TARGET'
  ])
))
if (ratios.some((ratio) => ratio.ratio < ratio.target)) process.exitCode = 1
