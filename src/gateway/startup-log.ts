/**
 * What the gateway says in its log once configured: one line of what it serves and how (never a credential), and
 * the warning about walk-in agents behind TRUST_PROXY=true. Apart from app.ts, which composes the app.
 */
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { AgentAccess } from './agent-access.js'
import type { AgentDefinition } from './agent-definitions.js'
import type { GatewayConfig } from './config.js'
import type { GatewayMetrics } from './metrics.js'
import { METRICS_PATH } from './metrics-endpoint.js'
import type { GatewayState } from './state.js'

/** TRUST_PROXY=true with walk-in agents: each walk-in picks its own address, and with it its per-address limits. */
export function warnTrustedWalkIns (app: FastifyInstance, config: GatewayConfig, definitions: AgentDefinition[], access: AgentAccess): void {
  const walkIns = definitions.filter((definition) => !access.required.has(definition.id)).map((definition) => definition.id)
  if (config.trustProxy === true && walkIns.length > 0) {
    app.log.warn({ walkIns }, 'TRUST_PROXY=true believes any client\'s X-Forwarded-For: a walk-in picks its own address, ' +
      'and with it its per-address limits (rate, streams, open tasks). Set TRUST_PROXY to the load balancer\'s addresses or CIDRs')
  }
}

/** One line saying what this gateway serves and how (never a credential). */
export function logConfigured (
  app: FastifyInstance, config: GatewayConfig, definitions: AgentDefinition[], state: GatewayState, access: AgentAccess, metrics: GatewayMetrics | undefined
): void {
  const operatorOn = config.operatorApiKey !== undefined
  app.log.info({
    agents: definitions.map((definition) => definition.id),
    stateStore: state.kind,
    ...(state.kind === 'embedded' ? { dataDir: resolve(config.dataDir) } : {}),
    operatorApi: operatorOn,
    // Which agents need a credential (never the credentials themselves).
    authenticated: [...access.required],
    grpc: config.grpcPort !== undefined,
    metrics: metrics === undefined ? false : config.metricsPort === undefined ? METRICS_PATH : `:${config.metricsPort}${METRICS_PATH}`,
    rateLimitStore: config.rateLimit.redisUrl === undefined ? 'memory' : 'redis',
    inbox: operatorOn ? '/inbox' : false,
    // The key id cards are signed with (never the key).
    cardSigning: config.signing?.kid ?? false
  }, 'gateway configured')
}
