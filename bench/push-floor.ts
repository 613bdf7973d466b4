/**
 * The floor of the push path (issue 43): what POSTing a turn's notifications costs with undici alone — the same
 * bodies and headers the gateway sent for one `book_table` turn (captured by push.ts's receiver), to the same
 * receiver, through one keep-alive undici Agent (what Node's fetch and the gateway's webhook poster are built on),
 * a turn's three one after the other as the gateway's queue per task and config posts them, `concurrency` turns at
 * once. No validation, no queue, no retry schedule, no presentation: the least a process can do to deliver them.
 *
 * Child (child-app.ts): POST /run { url, notifications, concurrency, durationSec } posts turns for that long and
 * answers the turns made; the parent reads the child's CPU around it (ChildApp.usage), so the floor is CPU per turn.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Agent, request } from 'undici'
import { startChildApp, type ChildApp } from './child-app.js'
import { median, type Row, type RunOptions } from './lib.js'

/** The push path's own CPU per turn over its floor's, at most (issue 43). */
export const FLOOR_TARGET = 1.3

/** One notification as the receiver got it: the body as sent and the headers the sender chose. */
export interface CapturedNotification {
  body: string
  headers: Record<string, string>
}

interface RunRequest {
  url: string
  notifications: CapturedNotification[]
  concurrency: number
  durationSec: number
}

/** Headers a receiver sees that the HTTP client sets itself (not the sender's choice). */
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'])

/** The headers of a received notification that its sender chose. */
export function senderHeaders (headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const chosen: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (!TRANSPORT_HEADERS.has(name) && typeof value === 'string') chosen[name] = value
  }
  return chosen
}

/** Child: the floor's poster. */
export async function buildFloorPoster (): Promise<FastifyInstance> {
  // As the gateway's poster: one Agent, keep-alive (webhook-post.ts).
  const dispatcher = new Agent({ keepAliveTimeout: 4000 })
  const app = Fastify({ bodyLimit: 1 << 20 })
  app.addHook('onClose', async () => { await dispatcher.close() })
  app.post('/run', async (req) => {
    const { url, notifications, concurrency, durationSec } = req.body as RunRequest
    const until = Date.now() + durationSec * 1000
    let turns = 0
    const worker = async (): Promise<void> => {
      while (Date.now() < until) {
        for (const { body, headers } of notifications) {
          // A delivery id per notification, as the gateway makes one.
          const response = await request(url, { method: 'POST', headers: { ...headers, 'a2a-notification-id': randomUUID() }, body, dispatcher })
          await response.body.dump()
          if (response.statusCode !== 200) throw new Error(`the receiver answered ${response.statusCode}`)
        }
        turns++
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    return { turns }
  })
  return app
}

/** The header of the in-process floor's turns (push.ts): the gateway POSTs the captured notifications after their reply. */
export const IN_PROCESS_FLOOR_HEADER = 'x-bench-push-floor'

/**
 * The floor in the gateway's own process: `app` (the memory gateway push.ts measures) made to POST, after the reply
 * of each request carrying IN_PROCESS_FLOOR_HEADER, the notifications a PUT /bench/push-floor { url, notifications }
 * gave it — with undici alone, through one keep-alive Agent, one after the other, not awaited by the reply: what the
 * gateway's push path does at the least, sharing the process (its event loop, its garbage collector) with the turns
 * as the path does. Its CPU per turn less the same turn's without the header is the floor's cost.
 */
export function withInProcessFloor (app: FastifyInstance): FastifyInstance {
  const dispatcher = new Agent({ keepAliveTimeout: 4000 })
  let floor: { url: string, notifications: CapturedNotification[] } | undefined
  app.addHook('onClose', async () => { await dispatcher.close() })
  app.put('/bench/push-floor', async (req) => {
    floor = req.body as { url: string, notifications: CapturedNotification[] }
    return {}
  })
  const post = async (url: string, notifications: CapturedNotification[]): Promise<void> => {
    for (const { body, headers } of notifications) {
      const response = await request(url, { method: 'POST', headers: { ...headers, 'a2a-notification-id': randomUUID() }, body, dispatcher })
      await response.body.dump()
    }
  }
  app.addHook('onResponse', async (req) => {
    if (floor === undefined || req.headers[IN_PROCESS_FLOOR_HEADER] === undefined) return
    post(floor.url, floor.notifications).catch((error: unknown) => { app.log.error(error) })
  })
  return app
}

/** One round of the floor: CPU µs per turn (its notifications) and turns per second. */
export async function floorRound (poster: ChildApp, run: RunRequest): Promise<{ cpuMicrosPerTurn: number, turnsPerSecond: number }> {
  const before = await poster.usage()
  const reply = await fetch(`${poster.url}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(run) })
  if (!reply.ok) throw new Error(`the floor's poster failed: ${await reply.text()}`)
  const { turns } = await reply.json() as { turns: number }
  const after = await poster.usage()
  return { cpuMicrosPerTurn: (after.cpuMicros - before.cpuMicros) / Math.max(1, turns), turnsPerSecond: turns / run.durationSec }
}

/** The order of a `book_table` turn's notifications (the receiver's kinds). */
const TURN_KINDS = ['TASK_STATE_SUBMITTED', 'artifactUpdate', 'TASK_STATE_COMPLETED']

/** A `book_table` turn's notifications as the receiver got them, in the order they are sent. */
export function turnNotifications (received: Record<string, CapturedNotification>): CapturedNotification[] {
  const notifications = TURN_KINDS.map((kind) => received[kind])
  if (notifications.some((notification) => notification === undefined)) throw new Error(`the receiver got no ${TURN_KINDS.join(' / ')} (it got ${Object.keys(received).join(', ')})`)
  return notifications
}

/** The median over the rounds of rows[a]'s CPU per turn less rows[b]'s. */
export function cpuDifference (rows: Row[], a: number, b: number): number {
  const [minuend, subtrahend] = [rows[a].cpuSamples as number[], rows[b].cpuSamples as number[]]
  return median(minuend.map((sample, round) => sample - subtrahend[round]))
}

/**
 * The push path's own CPU per turn (with a config minus without, per round, the median) against its floor: the
 * turn's notifications as the receiver got them, POSTed by push-floor.ts's child for as many rounds, as long each, at
 * the load's concurrency (the median of its CPU per turn).
 */
export async function pushFloor (
  rows: Row[], received: Record<string, CapturedNotification>, hook: string, options: RunOptions, children: ChildApp[]
): Promise<{ ownMicros: number, floorMicros: number, note: string }> {
  const notifications = turnNotifications(received)
  const ownMicros = cpuDifference(rows, 0, 1)
  const poster = await startChildApp(new URL('./push-floor.js', import.meta.url).href, 'buildFloorPoster')
  children.push(poster)
  await floorRound(poster, { url: hook, notifications, concurrency: options.connections, durationSec: options.warmupSec })
  const rounds: Array<{ cpuMicrosPerTurn: number, turnsPerSecond: number }> = []
  for (let round = 0; round < options.rounds; round++) {
    rounds.push(await floorRound(poster, { url: hook, notifications, concurrency: options.connections, durationSec: options.durationSec }))
  }
  const floorMicros = median(rounds.map((round) => round.cpuMicrosPerTurn))
  const note = `push path's own cost: ${ownMicros.toFixed(1)} µs of gateway CPU per turn (with − without, median of per-round differences); ` +
    `floor: ${floorMicros.toFixed(1)} µs per turn's ${notifications.length} notifications (undici alone, same bodies and headers, same receiver, ` +
    `${options.connections} at once, ${median(rounds.map((round) => round.turnsPerSecond)).toFixed(0)} turns/s, its own process); ` +
    `cost / floor ${(ownMicros / floorMicros).toFixed(2)} (target ≤ ${FLOOR_TARGET}: ${ownMicros <= FLOOR_TARGET * floorMicros ? 'ok' : 'MISSED'})`
  return { ownMicros, floorMicros, note }
}
