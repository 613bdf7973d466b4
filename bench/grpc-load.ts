/**
 * The gRPC load generator of the bindings scenario: a worker thread (like autocannon's, so the parent's event loop
 * stays free) keeping `connections` SendMessage calls in flight on one grpc-js channel (HTTP/2 multiplexes them on
 * one connection, where autocannon opens one HTTP/1.1 connection each) for `durationSec`, with the seed's message,
 * `a2a-version: 1.0` and the converse extension. Resolves to completed calls per second; any failed call fails the
 * run, as a non-2xx fails an autocannon run.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import * as grpc from '@grpc/grpc-js'
import { SendMessageRequest } from '@a2a-js/sdk'
import { A2AService } from '@a2a-js/sdk/server/grpc'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { SEED_REQUEST } from './lib.js'

interface Job { target: string, tenant: string, durationSec: number, connections: number }
type Outcome = { ok: true, completed: number, elapsedSec: number } | { ok: false, error: string }

/** Runs one measurement in a worker thread: the calls completed and the seconds it took. */
export async function grpcLoad (job: Job): Promise<{ completed: number, elapsedSec: number }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: job })
  const outcome = await new Promise<Outcome>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  await worker.terminate()
  if (!outcome.ok) throw new Error(`gRPC SendMessage: ${outcome.error}`)
  return outcome
}

async function load ({ target, tenant, durationSec, connections }: Job): Promise<Outcome> {
  const Client = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService')
  const client = new Client(target, grpc.credentials.createInsecure()) as unknown as Record<string, Function> & grpc.Client
  const request = SendMessageRequest.fromJSON({ ...(JSON.parse(SEED_REQUEST) as { params: object }).params, tenant })
  const metadata = new grpc.Metadata()
  metadata.set('a2a-version', '1.0')
  metadata.set('a2a-extensions', CONVERSE_EXTENSION_URI)
  const started = performance.now()
  const until = started + durationSec * 1000
  const state: { completed: number, failure?: string } = { completed: 0 }
  const one = async (): Promise<void> => await new Promise<void>((resolve) => {
    client.sendMessage(request, metadata, (error: grpc.ServiceError | null) => {
      if (error !== null) state.failure ??= `${error.code} ${error.details}`
      else state.completed++
      resolve()
    })
  })
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until && state.failure === undefined) await one()
  }))
  const { completed, failure } = state
  const elapsedSec = (performance.now() - started) / 1000
  client.close()
  return failure === undefined ? { ok: true, completed, elapsedSec } : { ok: false, error: failure }
}

if (!isMainThread) parentPort?.postMessage(await load(workerData as Job))
