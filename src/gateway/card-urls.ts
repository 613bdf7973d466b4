/**
 * Where the agents' cards are, for the line the gateway logs once it listens (app.ts's "gateway configured" line
 * names the agents, the state store and the optional APIs before that; the listen address is known only now).
 */
import type { GatewayConfig } from './config.js'

/** `listening`: the address Fastify listens on; an unspecified host (0.0.0.0, ::) reads as localhost. */
export function cardUrls (agentIds: readonly string[], config: Pick<GatewayConfig, 'publicUrl'>, listening: URL): string[] {
  const local = new URL(listening)
  if (local.hostname === '0.0.0.0' || local.hostname === '[::]') local.hostname = 'localhost'
  const base = config.publicUrl ?? local.origin
  return [`${base}/.well-known/agent-card.json`, ...agentIds.map((id) => `${base}/a2a/${id}/.well-known/agent-card.json`)]
}
