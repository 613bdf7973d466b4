import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

/**
 * A dependency the instance needs to serve requests (a store, say); false or a throw means not ready, and a string
 * too, saying why (shown under `reasons`).
 */
export type ReadinessCheck = () => Promise<boolean | string> | boolean | string

export interface HealthOptions {
  checks?: Record<string, ReadinessCheck>
  /** Per-check time budget; a check that takes longer counts as failed. Default 2000 ms. */
  checkTimeoutMs?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** True from the moment the instance starts closing: /health/ready answers 503 so the LB drains it. */
    draining: boolean
  }
}

/** Liveness and readiness routes for the load balancer. */
async function health (fastify: FastifyInstance, options: HealthOptions): Promise<void> {
  const checks = Object.entries(options.checks ?? {})
  const timeoutMs = options.checkTimeoutMs ?? 2000
  fastify.decorate('draining', false)
  fastify.addHook('preClose', async () => { fastify.draining = true })

  fastify.get('/health/live', { logLevel: 'warn' }, async () => ({ status: 'ok' }))
  fastify.get('/health/ready', { logLevel: 'warn' }, async (_request, reply) => {
    if (fastify.draining) return reply.code(503).send({ status: 'draining' })
    const results: Record<string, 'ok' | 'failing'> = {}
    const reasons: Record<string, string> = {}
    let ready = true
    await Promise.all(checks.map(async ([name, check]) => {
      const outcome = await runCheck(check, timeoutMs)
      results[name] = outcome === true ? 'ok' : 'failing'
      if (typeof outcome === 'string') reasons[name] = outcome
      ready &&= outcome === true
    }))
    const body = { status: ready ? 'ready' : 'unavailable', checks: results, ...(Object.keys(reasons).length > 0 ? { reasons } : {}) }
    return reply.code(ready ? 200 : 503).send(body)
  })
}

/** true, a reason (a string) or false. */
async function runCheck (check: ReadinessCheck, timeoutMs: number): Promise<boolean | string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, timeoutMs, false) })
  try {
    return await Promise.race([Promise.resolve().then(check).then((ok) => ok === true || (typeof ok === 'string' ? ok : false), () => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}

export default fp(health, { fastify: '5.x', name: 'gateway-health' })
