/**
 * `GET /metrics`: the registry's Prometheus text to a scraper that sends `Authorization: Bearer <METRICS_TOKEN>`
 * (401 otherwise), so the public side of a load balancer never serves it by accident. Off without METRICS_TOKEN:
 * 404 with a JSON body that says how to switch it on (as the operator API's off answer). With METRICS_PORT, served
 * on a listener of its own; the gateway's port then answers 404 saying where it is.
 *
 * Every request of the metrics path counts per client address (RATE_LIMIT_OPERATOR_MAX per window, a count of its
 * own), before the token is checked, as the operator API counts its key: past it, HTTP 429 with Retry-After, the
 * right token too — so a 429 says nothing of whether a guess was right. A scraper's address uses a few a minute.
 */
import { timingSafeEqual, createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from './config.js'
import type { GatewayMetrics } from './metrics.js'
import type { RateLimit } from './rate-limits.js'

export const METRICS_PATH = '/metrics'

const CHALLENGE = 'Bearer realm="metrics"'

function notFound (message: string): { statusCode: 404, error: 'Not Found', message: string } {
  return { statusCode: 404, error: 'Not Found', message }
}

export const METRICS_OFF = notFound('metrics are off: start the gateway with METRICS_TOKEN set to switch them on')
export const METRICS_ELSEWHERE = notFound('metrics are served on the METRICS_PORT listener')

/** Whether `authorization` is `Bearer <token>` (compared in constant time, by digest). */
function authorized (authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  if (match === null) return false
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest()
  return timingSafeEqual(digest(match[1]), digest(token))
}

/** How /metrics is served: the registry, its token, and the per-address limit of its requests. */
export interface MetricsServed {
  metrics: GatewayMetrics
  token: string
  limit: RateLimit
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** The answer to one request of the metrics path from `address`: status, headers and body. */
async function answer (
  { metrics, token, limit }: MetricsServed, address: string, authorization: string | undefined
): Promise<{ status: number, headers: Record<string, string>, body: string }> {
  const refusal = await limit.take(`address:${address}`)
  if (refusal !== undefined) {
    metrics.rateLimited('metrics')
    const message = `Rate limit exceeded; retry in ${refusal.retryAfterSec} s`
    return {
      status: 429,
      headers: { 'content-type': JSON_TYPE, 'retry-after': String(refusal.retryAfterSec) },
      body: JSON.stringify({ statusCode: 429, error: 'Too Many Requests', message })
    }
  }
  if (!authorized(authorization, token)) {
    return {
      status: 401,
      headers: { 'content-type': JSON_TYPE, 'www-authenticate': CHALLENGE },
      body: JSON.stringify({ statusCode: 401, error: 'Unauthorized', message: 'metrics need Authorization: Bearer <METRICS_TOKEN>' })
    }
  }
  const { contentType, text } = await metrics.scrape()
  return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body: text }
}

/** GET /metrics on the app: the metrics with `token`, or the 404 of `off` (metrics off, or on another port). */
export function metricsRoute (app: FastifyInstance, served: MetricsServed | { off: object }): void {
  app.get(METRICS_PATH, async (request, reply) => {
    if ('off' in served) return await reply.code(404).send(served.off)
    // request.ip: the client's address as TRUST_PROXY decides it.
    const { status, headers, body } = await answer(served, request.ip, request.headers.authorization)
    return await reply.code(status).headers(headers).send(body)
  })
}

/* c8 ignore start -- scrape() rejects only when a collect callback throws, and ours do not */
function failed (response: ServerResponse): void {
  response.writeHead(500).end()
}
/* c8 ignore stop */

export interface MetricsListener {
  readonly port: number
  close (): Promise<void>
}

/** A listener of its own (METRICS_PORT) answering GET /metrics, and 404 to anything else. */
export async function listenForMetrics (served: MetricsServed, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url as string).split('?')[0]
    if (path !== METRICS_PATH || request.method !== 'GET') {
      response.writeHead(404, { 'content-type': JSON_TYPE })
      response.end(JSON.stringify(notFound(`only GET ${METRICS_PATH} is served here`)))
      return
    }
    // The peer's address: no proxy is trusted on this listener (a scraper reaches it directly).
    answer(served, request.socket.remoteAddress as string, request.headers.authorization).then(({ status, headers, body }) => {
      response.writeHead(status, headers)
      response.end(body)
    }, failed.bind(undefined, response))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    port: (server.address() as AddressInfo).port,
    async close () {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * GET /metrics: on the app (METRICS_TOKEN), on a listener of its own (METRICS_PORT, opened when the app is ready and
 * closed with it; the app's /metrics then says where it is), or off (404).
 */
export async function serveMetrics (app: FastifyInstance, config: GatewayConfig, metrics: GatewayMetrics | undefined, limit: RateLimit): Promise<void> {
  app.decorate('metricsPort', undefined)
  if (metrics === undefined) {
    metricsRoute(app, { off: METRICS_OFF })
    return
  }
  const served = { metrics, token: config.metricsToken as string, limit }
  if (config.metricsPort === undefined) {
    metricsRoute(app, served)
    return
  }
  metricsRoute(app, { off: METRICS_ELSEWHERE })
  const listeners: MetricsListener[] = []
  app.addHook('onReady', async () => {
    const listener = await listenForMetrics(served, config.host, config.metricsPort as number)
    listeners.push(listener)
    app.metricsPort = listener.port
    app.log.info({ port: listener.port }, 'metrics listening')
  })
  app.addHook('onClose', async () => { await Promise.all(listeners.map(async (listener) => await listener.close())) })
}
