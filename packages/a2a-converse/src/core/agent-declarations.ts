/**
 * The agents' declarations, checked and resolved once: an id, a card, routines → the agent's tools, the extensions
 * it declares and its card per base URL (cached, bounded). The extension (converse-extension.ts) keeps the result.
 */
import { augmentAgentCard, type AgentExtensionEntry } from './card.js'
import type { AgentCardInput, ConverseAgentOptions, ConverseExtensionOptions, ResolvedAgent, WellKnownCard } from './converse-extension.js'
import { InvalidOptionError } from './errors.js'
import { validateRoutineDeclarations, type RoutineDeclaration } from './routine-declarations.js'
import { buildToolDescriptors } from './tool-descriptors.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'

const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/
const CARD_CACHE_LIMIT = 32

/** A card as written: an object with name and description strings (`option` names it in errors). */
export function checkCard (option: string, card: AgentCardInput): void {
  if (card === null || typeof card !== 'object' || typeof card.name !== 'string' || typeof card.description !== 'string') {
    throw new InvalidOptionError(option, 'must be an object with name and description strings')
  }
}

/** Every agent of the options, checked and resolved, by id (an id declared twice is refused). */
export function resolveAgents (options: ConverseExtensionOptions): Map<string, ResolvedAgent> {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object')
  if (!Array.isArray(options.agents) || options.agents.length === 0) {
    throw new InvalidOptionError('agents', 'must be a non-empty array')
  }
  const agents = new Map<string, ResolvedAgent>()
  options.agents.forEach((agent, index) => {
    const where = `agents[${index}]`
    const resolved = checkedAgent(agent, where)
    if (agents.has(resolved.id)) throw new InvalidOptionError(`${where}.id`, `"${resolved.id}" is declared twice`)
    agents.set(resolved.id, resolved)
  })
  return agents
}

/** One agent's options, checked (`where` names it in errors), resolved. */
export function checkedAgent (agent: ConverseAgentOptions, where: string): ResolvedAgent {
  if (agent === null || typeof agent !== 'object') throw new InvalidOptionError(where, 'must be an object')
  if (typeof agent.id !== 'string' || !AGENT_ID.test(agent.id)) {
    throw new InvalidOptionError(`${where}.id`, 'must match ^[A-Za-z0-9_-]{1,128}$')
  }
  const card = agent.card
  checkCard(`${where}.card`, card)
  const routines = agent.routines ?? []
  validateRoutineDeclarations(routines)
  const wellKnownCard = agent.wellKnownCard ?? 'v1'
  if (wellKnownCard !== 'v1' && wellKnownCard !== 'compat') throw new InvalidOptionError(`${where}.wellKnownCard`, 'must be "v1" or "compat"')
  return resolveAgent(agent.id, card, routines, wellKnownCard)
}

/** An agent's resolved declaration: its tools, the extensions it declares, its card per base URL. */
export function resolveAgent (id: string, card: AgentCardInput, routines: RoutineDeclaration[], wellKnownCard: WellKnownCard): ResolvedAgent {
  const tools = buildToolDescriptors(routines)
  const others: AgentExtensionEntry[] = card.capabilities?.extensions ?? []
  const declared = new Set([...others.map((entry) => entry.uri), CONVERSE_EXTENSION_URI])
  const cache = new Map<string, Record<string, unknown>>()
  return {
    id,
    routines,
    tools,
    declared,
    wellKnownCard,
    cardFor ({ publicUrl, mcpPublicUrl = publicUrl, mountPath = '', grpcUrl }) {
      const key = `${publicUrl} ${mcpPublicUrl} ${mountPath} ${grpcUrl ?? ''}`
      const cached = cache.get(key)
      if (cached !== undefined) return cached
      const built = augmentAgentCard({
        version: '1.0.0',
        defaultInputModes: ['text/plain', 'application/json'],
        defaultOutputModes: ['text/plain', 'application/json'],
        ...card,
        // JSON-RPC first (the preferred binding), HTTP+JSON under it (packages/a2a-converse/src/bindings/http-json/), then gRPC where a
        // gRPC door serves the agents: one target for every agent, each addressed by its id as the tenant.
        supportedInterfaces: card.supportedInterfaces ?? [
          { url: `${publicUrl}${mountPath}/a2a/${id}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: `${publicUrl}${mountPath}/a2a/${id}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
          ...(grpcUrl === undefined ? [] : [{ url: grpcUrl, protocolBinding: 'GRPC', tenant: id, protocolVersion: '1.0' }])
        ]
      }, { mcpUrl: `${mcpPublicUrl}${mountPath}/mcp/a/${id}`, tools, routines })
      // Host headers are client-chosen: cache a bounded number of distinct bases, build the rest each time.
      if (cache.size < CARD_CACHE_LIMIT) cache.set(key, built)
      return built
    }
  }
}
