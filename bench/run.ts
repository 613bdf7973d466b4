/**
 * Runs every benchmark scenario in one process and prints requests/s and the ratio each one is judged by.
 * Exit code 1 when a ratio misses its target. `npm run bench` builds first and runs dist/bench/run.js.
 */
import { formatTable, type ScenarioResult } from './lib.js'
import * as pluginOverhead from './plugin-overhead.js'

interface Scenario { name: string, run (): Promise<ScenarioResult> }

const scenarios: Scenario[] = [pluginOverhead]

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
}

console.log('\nratios (median of per-round ratios)')
console.log(formatTable(
  ['scenario', 'ratio', 'target', 'result'],
  results.map((result) => [
    `${result.name} (${result.description})`,
    result.ratio.toFixed(3),
    `>= ${result.target.toFixed(2)}`,
    result.ratio >= result.target ? 'ok' : 'BELOW TARGET'
  ])
))
if (results.some((result) => result.ratio < result.target)) process.exitCode = 1
