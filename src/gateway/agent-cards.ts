/**
 * The agents' cards on the app: the converse extension over the runtime's agents (cards, the JWKS, the tools
 * routes), and a proxied agent's card followed as its upstream changes it. Apart from app.ts, which composes the app.
 */
import type { FastifyInstance } from 'fastify'
import { converse } from 'a2a-converse/fastify'
import type { UpstreamAgent } from 'a2a-converse/service'
import type { AgentAccess } from './agent-access.js'
import type { GatewayConfig } from './config.js'
import type { AgentDefinition } from './agent-definitions.js'
import type { AgentRuntime } from './runtime.js'

/**
 * The converse extension over the runtime's agents (cards, the JWKS, the tools routes); returns how a proxied agent's
 * card is followed: as read now (it may have been read since the runtime started), then every change (until a change of
 * the agent retires that upstream: runtime.ts stops its card).
 */
export async function registerCards (
  app: FastifyInstance, config: GatewayConfig, definitions: AgentDefinition[], runtime: AgentRuntime, access: AgentAccess
): Promise<(upstream: UpstreamAgent) => void> {
  const wellKnown = new Map(definitions.map((definition) => [definition.id, definition.wellKnownCard]))
  await app.register(converse, {
    agents: runtime.agents.map(({ id, card, routines }) => ({ id, card: access.secured(id, card), routines, wellKnownCard: wellKnown.get(id) ?? config.wellKnownCard })),
    publicUrl: config.publicUrl,
    mcpPublicUrl: config.mcpPublicUrl,
    publicHosts: config.publicHosts,
    grpcUrl: config.publicGrpcUrl,
    provider: runtime.envelopeProvider,
    providerTimeoutMs: config.providerTimeoutMs,
    // Every card signed last, after each rewrite (a proxied agent's included), and the JWKS published (docs/signing.md).
    cardSigning: config.signing
  })
  const followCard = (upstream: UpstreamAgent): void => {
    upstream.cards.onChange((card) => app.converse.extension.setCard(upstream.agentId, access.secured(upstream.agentId, card.served)))
  }
  for (const upstream of runtime.upstreams) followCard(upstream)
  return followCard
}
