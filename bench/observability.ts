/**
 * What traces and metrics cost on the gateway's seed SendMessage, side by side in one run (issue 28):
 *
 * - off: the gateway with no OTEL_* variable and no METRICS_TOKEN (no SDK loaded, nothing counted);
 * - tracing configured, not sampled: the SDK started from OTEL_* (OTLP to a loopback receiver) with
 *   OTEL_TRACES_SAMPLER=always_off: every span is created and dropped at once;
 * - tracing sampled: the same with always_on, the batch span processor exporting OTLP/protobuf to a loopback
 *   receiver in this process (which reads each export and answers 200);
 * - metrics on: METRICS_TOKEN set (every call counted in the app's prom-client registry), no scrape during the run.
 *
 * Targets: not sampled ≥ 0.97 × off, sampled ≥ 0.85 × off, metrics ≥ 0.97 × off. Each server in its own child
 * process (see gateway.ts for the fairness rules); each ratio is the median of per-round ratios.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkReply, DEFAULT_CONNECTIONS, spawnServer, stopServer, type Child } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'observability'
export const UNSAMPLED_TARGET = 0.97
export const SAMPLED_TARGET = 0.85
export const METRICS_TARGET = 0.97

/** An OTLP/HTTP sink on loopback: reads each export whole, answers 200 with an empty ExportTraceServiceResponse. */
async function startReceiver (): Promise<{ endpoint: string, exports: () => number, bytes: () => number, close: () => Promise<void> }> {
  let exports = 0
  let bytes = 0
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => { bytes += chunk.length })
    request.on('end', () => {
      exports++
      response.writeHead(200, { 'content-type': 'application/x-protobuf' })
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    bytes: () => bytes,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const receiver = await startReceiver()
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'bench' }
  const children: Child[] = []
  try {
    children.push(await spawnServer('gateway'))
    children.push(await spawnServer('gateway', [], { ...otel, OTEL_TRACES_SAMPLER: 'always_off' }))
    children.push(await spawnServer('gateway', [], { ...otel, OTEL_TRACES_SAMPLER: 'always_on' }))
    children.push(await spawnServer('gateway', [], { BENCH_METRICS_TOKEN: 'bench-metrics-token-0123456789' }))
    const names = [
      'gateway, no tracing, no metrics',
      'gateway, tracing configured, not sampled',
      'gateway, tracing sampled, batch OTLP to loopback',
      'gateway, METRICS_TOKEN set (/metrics on)'
    ]
    const contenders: Contender[] = children.map((child, index) => ({
      name: names[index],
      url: child.url,
      load: { method: 'POST', path: child.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
      usage: child.usage
    }))
    for (const contender of contenders) await checkReply(contender)
    const rows = await compare(contenders, options)
    const cpu = rows.map((row, index) => `${['off', 'unsampled', 'sampled', 'metrics'][index]} ${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`)
    return {
      name,
      rows,
      ratios: [
        { description: 'tracing configured, not sampled / off', ratio: pairedRatio(rows, 1, 0), target: UNSAMPLED_TARGET },
        { description: 'tracing sampled, batch exporter / off', ratio: pairedRatio(rows, 2, 0), target: SAMPLED_TARGET },
        { description: '/metrics on / off', ratio: pairedRatio(rows, 3, 0), target: METRICS_TARGET }
      ],
      notes: [
        `server CPU per request (median): ${cpu.join(', ')}`,
        `CPU-based ratios: unsampled ${pairedRatio(rows, 1, 0, true).toFixed(3)}, sampled ${pairedRatio(rows, 2, 0, true).toFixed(3)}, metrics ${pairedRatio(rows, 3, 0, true).toFixed(3)}`,
        `the receiver got ${receiver.exports()} OTLP exports (${(receiver.bytes() / 1e6).toFixed(1)} MB) from the sampled server`,
        `each server in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
    await receiver.close()
  }
}
