/**
 * The operator API and the inbox page on the gateway (OPERATOR_API_KEY), rate-limited in a scope of their own; without
 * the key, their paths say they are off.
 */
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import inboxPage from '../../plugins/inbox-page.js'
import operatorApi, { type OperatorApiOptions } from '../../plugins/operator-api.js'
import type { GatewayConfig } from './config.js'
import { packageRoot } from './package-root.js'
import type { RateLimits } from './rate-limits.js'

/** OPERATOR_API_KEY: the operator API (rate-limited on its own) and the inbox page; without it their paths say off. */
export async function registerOperator (app: FastifyInstance, config: GatewayConfig, limits: RateLimits, api: Omit<OperatorApiOptions, 'apiKey'>): Promise<void> {
  if (config.operatorApiKey === undefined) {
    await app.register(operatorApiOff)
    return
  }
  const apiKey = config.operatorApiKey
  await app.register(async (scope) => {
    limits.apply(scope, { door: 'operator', limit: limits.limit('operator', config.rateLimit.operatorMax), key: (request) => `address:${request.ip}` })
    await scope.register(operatorApi, { apiKey, ...api })
  })
  const root = packageRoot()
  await app.register(inboxPage, { pageDir: join(root, 'web', 'inbox'), scriptDir: join(root, 'dist', 'web', 'inbox') })
}

/** Without OPERATOR_API_KEY the operator paths say so (404, JSON), rather than a bare route-not-found. */
async function operatorApiOff (app: FastifyInstance): Promise<void> {
  const off = {
    statusCode: 404,
    error: 'Not Found',
    message: 'the operator API and the inbox are off: start the gateway with OPERATOR_API_KEY set to switch them on'
  }
  for (const url of ['/api/v1/agents', '/api/v1/agents/*', '/inbox', '/inbox/*']) {
    app.all(url, async (_request, reply) => await reply.code(404).send(off))
  }
}
