/**
 * Big bodies and everyone else (issue 41, finding 9): one caller keeps 8 maximum-size SendMessages in flight (one
 * text part filling BODY_LIMIT, 1 MiB, a fresh messageId each; a question at its start), while another caller sends
 * GetTask one at a time. Reported, per round, with and without the big messages: the other caller's GetTask
 * latency (p50, p99), the big messages per second and the gateway's CPU per big message.
 *
 * Target: the other caller's GetTask p99 ≤ 50 ms under that load (ratio: 50 ms / p99 ≥ 1), on the 2-core machine
 * kind. The two callers are walk-ins from different addresses (127.0.0.1 and 127.0.0.2), so nothing per caller
 * mixes them. The gateway runs in its own process (gateway-server.ts, `gateway`: memory state, no rate limit); the
 * big messages are sent from a worker thread (big-bodies-load.ts), the GetTask probe from this thread.
 */
import { Worker } from 'node:worker_threads'
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'undici'
import { spawnServer, stopServer, type Child } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { median, runOptions, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'big-bodies'
export const TARGET_P99_MS = 50
export const IN_FLIGHT = 8
/** The gateway's default BODY_LIMIT. */
export const BODY_BYTES = 1_048_576

/** The p-quantile of sorted-or-not values (nearest rank). */
function quantile (values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]
}

/** GetTask of one task, one at a time, every 10 ms, for `seconds`: each call's latency in ms. */
async function probe (url: string, taskId: string, seconds: number, dispatcher: Agent): Promise<number[]> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } })
  const latencies: number[] = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const started = performance.now()
    const response = await request(url, { method: 'POST', headers: { ...SEED_HEADERS }, body, dispatcher })
    const reply = await response.body.json() as { result?: { id?: string } }
    if (reply.result?.id !== taskId) throw new Error(`GetTask failed: ${JSON.stringify(reply).slice(0, 200)}`)
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return latencies
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ durationSec: 3, rounds: 4, ...overrides })
  const child: Child = await spawnServer('gateway')
  const other = new Agent({ localAddress: '127.0.0.2', connections: 1 })
  const load = new Worker(new URL('./big-bodies-load.js', import.meta.url), {
    workerData: { url: child.url + child.path, inFlight: IN_FLIGHT, bodyBytes: BODY_BYTES, headers: SEED_HEADERS }
  })
  try {
    const url = child.url + child.path
    const opened = await request(url, {
      method: 'POST',
      headers: { ...SEED_HEADERS },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'I would like to book a table' }] } } }),
      dispatcher: other
    })
    const taskId = (await opened.body.json() as { result: { task: { id: string } } }).result.task.id
    await probe(url, taskId, options.warmupSec, other)
    const alone: number[][] = []
    const loaded: number[][] = []
    const bigPerSecond: number[] = []
    const cpuPerBig: number[] = []
    for (let round = 0; round < options.rounds; round++) {
      alone.push(await probe(url, taskId, options.durationSec, other))
      const before = await child.usage()
      load.postMessage('start')
      const sent = new Promise<{ done: number, seconds: number, failed: string | undefined }>((resolve) => load.once('message', resolve))
      loaded.push(await probe(url, taskId, options.durationSec, other))
      load.postMessage('stop')
      const { done, seconds, failed } = await sent
      if (failed !== undefined) throw new Error(`a big SendMessage failed: ${failed}`)
      const after = await child.usage()
      bigPerSecond.push(done / seconds)
      // The probe's own GetTasks are counted in the process's CPU too: each costs ~0.2 ms, a few hundred per round.
      cpuPerBig.push((after.cpuMicros - before.cpuMicros) / Math.max(1, done) / 1000)
    }
    const p = (rounds: number[][], q: number): number => median(rounds.map((latencies) => quantile(latencies, q)))
    const p99Loaded = p(loaded, 0.99)
    return {
      name,
      rows: [
        { name: `SendMessage of ${BODY_BYTES} bytes, ${IN_FLIGHT} in flight (caller A)`, requestsPerSecond: median(bigPerSecond), samples: bigPerSecond },
        { name: 'GetTask one at a time (caller B), alone', requestsPerSecond: median(alone.map((l) => l.length / options.durationSec)), samples: alone.map((l) => l.length / options.durationSec) },
        { name: 'GetTask one at a time (caller B), under caller A\'s load', requestsPerSecond: median(loaded.map((l) => l.length / options.durationSec)), samples: loaded.map((l) => l.length / options.durationSec) }
      ],
      ratios: [{ description: `${TARGET_P99_MS} ms / caller B's GetTask p99 under ${IN_FLIGHT} big messages`, ratio: TARGET_P99_MS / p99Loaded, target: 1 }],
      notes: [
        `caller B's GetTask, median over rounds: alone p50 ${p(alone, 0.5).toFixed(1)} ms, p99 ${p(alone, 0.99).toFixed(1)} ms; ` +
          `under load p50 ${p(loaded, 0.5).toFixed(1)} ms, p99 ${p99Loaded.toFixed(1)} ms (rounds' p99: ${loaded.map((l) => quantile(l, 0.99).toFixed(0)).join(' ')})`,
        `gateway CPU per big message (median): ${median(cpuPerBig).toFixed(1)} ms`,
        `gateway in its own process (memory state); ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await load.terminate()
    await other.close()
    await stopServer(child)
  }
}
