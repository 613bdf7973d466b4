/**
 * What `npm start`'s process holds in memory (its resident set, from /proc: Linux only), the gateway run as shipped
 * (dist/src/gateway/main.js) with the demo agent: in memory (STATE=memory), then embedded — the first start on a new
 * DATA_DIR, a restart on it, and after the embedded scenario's load for BENCH_ROUNDS × BENCH_DURATION seconds. The
 * first start's peak counts the process that creates the database (a child of the gateway: embedded-initdb.ts) apart,
 * as a container's memory limit counts both. Budget: 250 MB resident for the embedded gateway at each step (issue 43);
 * the ratios are 250 MB over each figure (≥ 1: within it).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packageRoot } from '../src/gateway/package-root.js'
import { LOAD } from './postgres.js'
import { freePort, requestsPerSecond, runOptions, type RatioResult, type Row, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'footprint'
/** The embedded gateway's resident set at most, in MB. */
export const BUDGET_MB = 250

const MB = 1024 * 1024

/** VmRSS and VmHWM (its peak so far) of a process, in bytes; undefined once it is gone. */
export function residentSet (pid: number): { now: number, peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1]) * 1024
    return { now: field('VmRSS'), peak: field('VmHWM') }
  } catch {
    return undefined
  }
}

function childrenOf (pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((id) => id !== '').map(Number)
  } catch {
    return []
  }
}

/** `npm start`'s arguments to node (its Node flags and the gateway's module), from package.json. */
export function startArguments (): string[] {
  const manifest = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { scripts: { start: string } }
  return manifest.scripts.start.split(/\s+/).slice(1).map((arg) => arg.startsWith('-') ? arg : join(packageRoot(), arg))
}

export interface Gateway {
  url: string
  process: ChildProcess
  /** The highest resident set a child of the gateway reached while it started. */
  childrenPeak: number
  readyMs: number
}

export async function startGateway (env: Record<string, string>): Promise<Gateway> {
  const port = await freePort()
  const gateway = spawn(process.execPath, startArguments(), {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const started = Date.now()
  let childrenPeak = 0
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (gateway.exitCode !== null) throw new Error(`the gateway exited with code ${gateway.exitCode} before it was ready`)
    for (const child of childrenOf(gateway.pid as number)) childrenPeak = Math.max(childrenPeak, residentSet(child)?.peak ?? 0)
    const ready = await fetch(`${url}/health/ready`).then((res) => res.ok, () => false)
    if (ready) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return { url, process: gateway, childrenPeak, readyMs: Date.now() - started }
}

export async function stop (gateway: Gateway): Promise<void> {
  const exited = new Promise((resolve) => gateway.process.once('exit', resolve))
  gateway.process.kill('SIGTERM')
  await exited
}

/** After the start's work has settled (a second), the resident set now and its peak so far. */
export async function settled (gateway: Gateway): Promise<{ now: number, peak: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1000))
  return residentSet(gateway.process.pid as number) as { now: number, peak: number }
}

async function loaded (gateway: Gateway, label: string, options: RunOptions): Promise<{ row: Row, now: number, peak: number }> {
  const contender = { name: label, url: gateway.url, load: LOAD }
  const samples: number[] = []
  for (let round = 0; round < options.rounds; round++) samples.push(await requestsPerSecond(contender, options.durationSec, options))
  const { now, peak } = residentSet(gateway.process.pid as number) as { now: number, peak: number }
  return { row: { name: label, requestsPerSecond: samples.reduce((a, b) => a + b, 0) / samples.length, samples }, now, peak }
}

const mb = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: 10, ...overrides })
  if (residentSet(process.pid) === undefined) return { name, rows: [], ratios: [], notes: ['skipped: the resident set is read from /proc (Linux)'] }
  const dataDir = await mkdtemp(join(tmpdir(), 'a2a-bench-footprint-'))
  const gateways: Gateway[] = []
  try {
    const memory = await startGateway({ STATE: 'memory' })
    gateways.push(memory)
    const memoryStart = await settled(memory)
    const memoryLoad = await loaded(memory, 'gateway SendMessage, state in memory', options)
    await stop(memory)

    const embedded = { STATE: 'embedded', DATA_DIR: dataDir }
    const first = await startGateway(embedded)
    gateways.push(first)
    const firstStart = await settled(first)
    await stop(first)
    const again = await startGateway(embedded)
    gateways.push(again)
    const restart = await settled(again)
    const embeddedLoad = await loaded(again, 'gateway SendMessage, state embedded (PGlite)', options)
    await stop(again)

    const within = (description: string, bytes: number): RatioResult => ({ description: `${BUDGET_MB} MB / ${description}`, ratio: BUDGET_MB * MB / bytes, target: 1 })
    return {
      name,
      rows: [memoryLoad.row, embeddedLoad.row],
      ratios: [
        within('embedded, first start (peak)', firstStart.peak),
        within('embedded, restart (peak)', restart.peak),
        within('embedded, under load (peak)', embeddedLoad.peak)
      ],
      notes: [
        `resident set of npm start's process, now / peak: memory ${mb(memoryStart.now)} / ${mb(memoryStart.peak)} at start, ${mb(memoryLoad.now)} / ${mb(memoryLoad.peak)} after load`,
        `embedded: first start on a new DATA_DIR ${mb(firstStart.now)} / ${mb(firstStart.peak)} (ready in ${first.readyMs} ms; the child creating the database peaked at ${mb(first.childrenPeak)}), ` +
          `restart ${mb(restart.now)} / ${mb(restart.peak)} (ready in ${again.readyMs} ms), after load ${mb(embeddedLoad.now)} / ${mb(embeddedLoad.peak)}`,
        `load: ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s, a new conversation per request`
      ]
    }
  } finally {
    for (const gateway of gateways) if (gateway.process.exitCode === null && gateway.process.signalCode === null) await stop(gateway)
    await rm(dataDir, { recursive: true, force: true })
  }
}
