/**
 * What each of the project's two fast paths buys (issue 9: keep one only where it buys ≥ 10 % of the
 * gateway's requests/s). Two groups of child processes, each group measured in rotated rounds:
 *
 * - gateway (the `gateway` scenario's load: the demo agent, the seed SendMessage with the extension active):
 *   as built, without the lean SendMessage path (src/jsonrpc/lean-send-message.ts; the dispatcher gets
 *   `leanSendMessage: false`), and without the serialized-once envelope splice
 *   (src/fastify/known-envelope-serializer.ts);
 * - plugin-overhead's frozen-envelope case (the plugin with a static provider): with the splice, without it,
 *   and the plain app without the plugin (what the ≥ 0.90 target compares with).
 *
 * The fast paths are turned off in the child alone (bench/fast-path-switches.ts); every child, "on" ones too,
 * starts with the same switches module. Informative: no target, the notes give the ratios (requests/s and
 * CPU per request, median and spread of the per-round ratios) and the verdict against 1.10.
 */
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import type { FastifyInstance } from 'fastify'
import { startChildApp, type ChildApp } from './child-app.js'
import { switchCounts, switchesOff } from './fast-path-state.js'
import { checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { buildWithPlugin } from './plugin-overhead.js'
import { SEED_REQUEST, compare, median, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'fast-paths'
/** A fast path is worth its lines when the contender with it serves at least this many times the one without. */
export const KEEP_THRESHOLD = 1.1

/** Fails the child when a switch it was started with did not reach its target (src moved the import). */
function checkSwitches (): void {
  const off = switchesOff()
  if (off.has('lean') && switchCounts.dispatchersWithoutLean === 0) {
    throw new Error('BENCH_FAST_PATHS_OFF=lean reached no A2ADispatcher: see the importer named in bench/fast-path-hooks.ts')
  }
  if (off.has('splice') && !switchCounts.serializerReplaced) {
    throw new Error('BENCH_FAST_PATHS_OFF=splice did not reach the converse plugin: see the importer named in bench/fast-path-hooks.ts')
  }
}

export async function buildGatewayApp (): Promise<FastifyInstance> {
  const app = await buildGateway({ config: loadConfig({ LOG_LEVEL: 'silent' }) })
  checkSwitches()
  return app
}

export async function buildPluginApp (): Promise<FastifyInstance> {
  const app = await buildWithPlugin()
  checkSwitches()
  return app
}

/** Read by child-app.ts with every usage report. */
export function benchCounters (): Record<string, number> {
  return { dispatchersWithoutLean: switchCounts.dispatchersWithoutLean, splicesRefused: switchCounts.splicesRefused }
}

const SWITCHES = new URL('./fast-path-switches.js', import.meta.url).href
const PLUGIN_OVERHEAD = new URL('./plugin-overhead.js', import.meta.url).href

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

async function gatewayGroup (overrides: Partial<RunOptions>): Promise<{ rows: Row[], notes: string[] }> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const url = import.meta.url
  const children = await Promise.all([start(url, 'buildGatewayApp', ''), start(url, 'buildGatewayApp', 'lean'), start(url, 'buildGatewayApp', 'splice')])
  try {
    const names = ['gateway as built (lean path, splice)', 'gateway without the lean SendMessage path', 'gateway without the envelope splice']
    const contenders: Contender[] = children.map((child, index) => ({
      name: names[index],
      url: child.url,
      load: { method: 'POST', path: '/a2a/demo', headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
      usage: child.usage
    }))
    const sizes: number[] = []
    for (const contender of contenders) sizes.push(await checkReply(contender))
    const rows = await compare(contenders, options)
    const withoutSplice = await children[2].usage()
    const splicesAskedFor = withoutSplice.counters?.splicesRefused ?? 0
    return {
      rows,
      notes: [
        `gateway: reply bytes ${sizes.join(', ')}; server CPU per request (median): ${rows.map(cpu).join(', ')}; ` +
          `${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`,
        `lean SendMessage path: gateway / without = ${spread(rows, 0, 1)} req/s, ${spread(rows, 0, 1, true)} by CPU — ${verdict(rows, 0, 1)}`,
        `envelope splice: gateway / without = ${spread(rows, 0, 2)} req/s, ${spread(rows, 0, 2, true)} by CPU — ${verdict(rows, 0, 2)}; ` +
          `the splice was asked for on ${splicesAskedFor} of the ${withoutSplice.requests} replies served without it` +
          (splicesAskedFor === 0 ? ' (the gateway\'s envelopes are not deep-frozen: the two differ only by noise)' : '')
      ]
    }
  } finally {
    await Promise.all(children.map((child) => child.close()))
  }
}

async function pluginGroup (overrides: Partial<RunOptions>): Promise<{ rows: Row[], notes: string[] }> {
  // As plugin-overhead: many short rounds.
  const defaults: Partial<RunOptions> = { connections: 10 }
  if (process.env.BENCH_ROUNDS === undefined) defaults.rounds = 15
  if (process.env.BENCH_DURATION === undefined) defaults.durationSec = 1
  const options = runOptions({ ...defaults, ...overrides })
  const url = import.meta.url
  const children = await Promise.all([start(url, 'buildPluginApp', ''), start(url, 'buildPluginApp', 'splice'), start(PLUGIN_OVERHEAD, 'buildWithoutPlugin', '')])
  try {
    const path = '/a2a/ag_7Qb3nT1xK9wZs2Pv0Lm4Rd'
    const headers = { ...SEED_HEADERS }
    const names = ['plugin, frozen envelope, with the splice', 'plugin, frozen envelope, without the splice', 'without plugin']
    const contenders: Contender[] = children.map((child, index) => ({
      name: names[index], url: child.url, load: { method: 'POST', path, headers, body: SEED_REQUEST }, usage: child.usage
    }))
    // The splice must not change a byte: both plugin contenders answer the same text, and the plain app no envelope.
    const bodies = await Promise.all(contenders.map(async (contender) =>
      await (await fetch(contender.url + path, { method: 'POST', headers, body: SEED_REQUEST })).text()))
    if (bodies[0] !== bodies[1] || !bodies[0].includes('"citations"') || bodies[2].includes('"citations"')) {
      throw new Error(`plugin replies differ from what the comparison claims:\n${bodies.join('\n')}`)
    }
    const rows = await compare(contenders, options)
    const withoutSplice = await children[1].usage()
    return {
      rows,
      notes: [
        `plugin: reply bytes ${bodies.map((body) => Buffer.byteLength(body)).join(', ')}; server CPU per request (median): ${rows.map(cpu).join(', ')}; ` +
          `${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`,
        `envelope splice (plugin, frozen envelope): with / without = ${spread(rows, 0, 1)} req/s, ${spread(rows, 0, 1, true)} by CPU; ` +
          `the splice was asked for on ${withoutSplice.counters?.splicesRefused ?? 0} of the ${withoutSplice.requests} replies served without it`,
        `plugin / without plugin (target ≥ 0.90): with the splice ${spread(rows, 0, 2)} req/s, ${spread(rows, 0, 2, true)} by CPU; ` +
          `without it ${spread(rows, 1, 2)} req/s, ${spread(rows, 1, 2, true)} by CPU`
      ]
    }
  } finally {
    await Promise.all(children.map((child) => child.close()))
  }
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const gateway = await gatewayGroup(overrides)
  const plugin = await pluginGroup(overrides)
  return { name, rows: [...gateway.rows, ...plugin.rows], ratios: [], notes: [...gateway.notes, ...plugin.notes] }
}
