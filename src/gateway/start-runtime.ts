/**
 * The runtime over the agents served at start (src/gateway/runtime.ts builds it), closed with the app, with push
 * delivery started and watched, and what proxied agents sign identity assertions with. Apart from app.ts, which
 * composes the app from this and the doors.
 */
import type { FastifyInstance } from 'fastify'
import type { SigningKey, TaskTurnLock } from 'a2a-converse/service'
import type { ConversationStore, TaskEventHub } from 'a2a-converse/runtime'
import type { AgentDefinition } from './agent-definitions.js'
import { withClientSecret } from './agent-switch.js'
import type { GatewayOptions } from './app.js'
import { ConfigError, type GatewayConfig } from './config.js'
import type { GatewayPush } from './gateway-push.js'
import type { GatewayMetrics } from './metrics.js'
import { buildAgentRuntime, type AgentRuntime } from './runtime.js'
import type { GatewayState } from './state.js'

/** The runtime over the agents served at start, closed with the app; push delivery started and watched. */
export async function startRuntime (
  app: FastifyInstance,
  options: GatewayOptions,
  definitions: AgentDefinition[],
  { conversations, events, state, metrics, turnLock, push }: {
    conversations: ConversationStore
    events: TaskEventHub
    state: GatewayState
    metrics: GatewayMetrics | undefined
    turnLock: (agentId: string) => TaskTurnLock
    push: GatewayPush
  }
): Promise<AgentRuntime> {
  const { config } = options
  // What proxied agents sign assertions with: checked for the agents served at start, kept for those published later.
  const assertions = upstreamAssertions(config, definitions) ??
    (config.signing !== undefined && config.publicUrl !== undefined ? { key: config.signing, issuer: config.publicUrl } : undefined)
  const runtime = await buildAgentRuntime({
    // The runtime's definitions only: the secret goes to the upstream agent, nowhere else (the operator API, logs).
    definitions: definitions.map((definition) => withClientSecret(definition, process.env)),
    executors: options.executors,
    maxReadChars: config.maxReadChars,
    conversations,
    events,
    upstreamOwnership: state.upstreamOwnership,
    taskStoreFor: push.taskStoreFor,
    turnLockFor: turnLock,
    push: push.agentPush,
    upstreamPush: push.upstreamPush,
    log: app.log,
    envelopeProviderUrl: config.envelopeProviderUrl,
    providerTimeoutMs: config.providerTimeoutMs,
    proxyTakeover: config.operatorApiKey !== undefined,
    assertions
  })
  app.addHook('onClose', async () => { await runtime.close() })
  const outboxStats = state.startPushDelivery?.(push.push.delivery)
  metrics?.watchPush(push.push.deliverer.stats)
  metrics?.watchPush(outboxStats)
  metrics?.watchPool(state.pool)

  return runtime
}

/**
 * What proxied agents with `upstream.identity.mode: assertion` sign with: the card key, and PUBLIC_URL as the
 * assertions' `iss` (an upstream verifies it against one fixed value, so it cannot come from each request's Host).
 */
function upstreamAssertions (config: GatewayConfig, definitions: AgentDefinition[]): { key: SigningKey, issuer: string } | undefined {
  const asserting = definitions.find((definition) => definition.upstream?.identity?.mode === 'assertion')
  if (asserting === undefined) return undefined
  const why = `agent "${asserting.id}" sends the caller's identity upstream (upstream.identity.mode: assertion; docs/trust.md)`
  if (config.signing === undefined) throw new ConfigError('SIGNING_KEY', `must be set: ${why}, signed with it`)
  if (config.publicUrl === undefined) throw new ConfigError('PUBLIC_URL', `must be set: ${why}, issued by it`)
  return { key: config.signing, issuer: config.publicUrl }
}
