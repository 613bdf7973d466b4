/**
 * The line the gateway logs once it listens: the agents it serves, the URLs of their cards, where state lives and
 * which optional APIs are on. Nothing secret: the database is named by host and schema, never by its URL.
 */
import type { GatewayConfig } from './config.js'

export interface StartupSummary {
  agents: string[]
  cards: string[]
  stateStore: string
  operatorApi: boolean
}

/** `listening`: the address Fastify listens on; an unspecified host (0.0.0.0, ::) reads as localhost. */
export function startupSummary (agentIds: readonly string[], config: GatewayConfig, listening: URL): { summary: StartupSummary, msg: string } {
  const local = new URL(listening)
  if (local.hostname === '0.0.0.0' || local.hostname === '[::]') local.hostname = 'localhost'
  const base = config.publicUrl ?? local.origin
  const cards = [`${base}/.well-known/agent-card.json`, ...agentIds.map((id) => `${base}/a2a/${id}/.well-known/agent-card.json`)]
  const stateStore = config.databaseUrl === undefined
    ? 'memory'
    : `postgresql (${new URL(config.databaseUrl).host || 'localhost'}, schema ${config.databaseSchema ?? 'from the search path'})`
  const operatorApi = config.operatorApiKey !== undefined
  const summary = { agents: [...agentIds], cards, stateStore, operatorApi }
  const msg = `serving ${agentIds.join(', ')}; cards at ${cards.join(' ')}; state: ${stateStore}; ` +
    `operator API: ${operatorApi ? 'on' : 'off'}`
  return { summary, msg }
}
