import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

/** A dependency the instance needs to serve requests (a store, say); false or a throw means not ready. */
export type ReadinessCheck = () => Promise<boolean> | boolean

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
    let ready = true
    await Promise.all(checks.map(async ([name, check]) => {
      const ok = await runCheck(check, timeoutMs)
      results[name] = ok ? 'ok' : 'failing'
      ready &&= ok
    }))
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks: results })
  })
}

async function runCheck (check: ReadinessCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, timeoutMs, false) })
  try {
    return await Promise.race([Promise.resolve().then(check).then((ok) => ok === true, () => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}

export default fp(health, { fastify: '5.x', name: 'gateway-health' })
