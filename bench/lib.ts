/**
 * Benchmark helpers: start Fastify apps on 127.0.0.1:0, load them with autocannon, and compare contenders
 * side by side in one process run. Rounds alternate the order (A,B then B,A, …) so drift and noise hit every
 * contender alike; each contender's figure is the median of its rounds.
 *
 * autocannon runs in a worker thread, so the servers keep the main event loop to themselves.
 */
import autocannon from 'autocannon'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'

export interface Load {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
}

export interface Contender {
  name: string
  /** Base URL, e.g. from listen(). */
  url: string
  load: Load
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
}

export interface ScenarioResult {
  name: string
  /** What the ratio compares, e.g. "with plugin / without". */
  description: string
  rows: Row[]
  /** Median over the rounds of rows[0] / rows[1] measured back to back: drift cancels out within a pair. */
  ratio: number
  /** The ratio must be at least this. */
  target: number
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

/** Listens on an ephemeral port of 127.0.0.1 and returns the base URL. */
export async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

/** One autocannon run; throws when any request failed, so a broken route cannot pass for a fast one. */
export async function requestsPerSecond (contender: Contender, durationSec: number, options: RunOptions): Promise<number> {
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
  return result.requests.average
}

/** Warms every contender up, then measures them in alternating order; medians per contender. */
export async function compare (contenders: Contender[], options: RunOptions): Promise<Row[]> {
  for (const contender of contenders) await requestsPerSecond(contender, options.warmupSec, options)
  const samples = contenders.map(() => [] as number[])
  for (let round = 0; round < options.rounds; round++) {
    const order = contenders.map((_, index) => index)
    if (round % 2 === 1) order.reverse()
    for (const index of order) samples[index].push(await requestsPerSecond(contenders[index], options.durationSec, options))
  }
  return contenders.map((contender, index) => ({
    name: contender.name,
    requestsPerSecond: median(samples[index]),
    samples: samples[index]
  }))
}

/** The median of rows[0].samples[i] / rows[1].samples[i]: each round measured both back to back. */
export function pairedRatio (rows: readonly Row[]): number {
  return median(rows[0].samples.map((sample, round) => sample / rows[1].samples[round]))
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
