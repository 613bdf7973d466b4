/**
 * Which agents an instance serves at start (docs/agents.md, "Which agents an instance serves"), and the check a stored
 * agent passes to be served (at start, and for each change later: live-agents.ts).
 */
import type { FastifyBaseLogger } from 'fastify'
import type { AgentStore, StoredAgent } from 'a2a-converse/runtime'
import type { AgentAdminOptions } from '../../plugins/operator-agents.js'
import { checkAgentDefinition, type AgentDefinition } from './agent-definitions.js'
import type { GatewayOptions } from './app.js'
import { builtInExecutors } from './executors.js'

/**
 * The agents this instance serves (docs/agents.md): AGENTS_FILE's (read-only), then the state store's in id order. An id
 * in both is the file's (a warning); a stored agent this gateway cannot serve (its definition no longer valid, an
 * executor or credentials it lacks) is left out with a warning, never a failed start. Without AGENTS_FILE the demo
 * agent is served only while the store holds no agent.
 */
export async function servedAgents (options: Pick<GatewayOptions, 'config' | 'agents' | 'executors'>, fileAgents: AgentDefinition[], store: AgentStore, log: FastifyBaseLogger) {
  const { config } = options
  const executors = Object.keys({ ...builtInExecutors, ...options.executors })
  const authenticates = config.auth.apiKeys.length > 0 || config.auth.jwt !== undefined
  const fileIds = new Set(fileAgents.map((definition) => definition.id))
  const check = servableCheck(executors, authenticates, config.auth.mode)
  const published: AgentDefinition[] = []
  const served = new Map<string, number | 'file'>()
  for (const agent of await store.list()) {
    if (fileIds.has(agent.id)) {
      log.warn({ agentId: agent.id, version: agent.version }, `agent "${agent.id}" is in the state store and in AGENTS_FILE: the file's is served`)
      continue
    }
    let definition: AgentDefinition
    try {
      definition = check(agent)
    } catch (error) {
      log.warn({ agentId: agent.id, version: agent.version }, `agent "${agent.id}" version ${agent.version} in the state store is not served: ${(error as Error).message}`)
      continue
    }
    published.push(definition)
    served.set(agent.id, agent.version)
  }
  const demoOnly = options.agents === undefined && config.agentsFile === undefined
  const file = demoOnly && published.length > 0 ? [] : fileAgents
  for (const definition of file) served.set(definition.id, 'file')
  const admin: AgentAdminOptions = {
    store,
    fileAgents: file,
    served,
    executors,
    authenticates,
    defaultAuth: config.auth.mode,
    maxAgentBytes: config.maxAgentBytes,
    maxAgentDocuments: config.maxAgentDocuments
  }
  return { definitions: [...file, ...published], admin, check, served }
}

/** A stored agent's definition as this gateway can serve it; throws why not (docs/agents.md). */
export function servableCheck (executors: readonly string[], authenticates: boolean, mode: 'walk-in' | 'required') {
  return (agent: StoredAgent): AgentDefinition => {
    const definition = checkAgentDefinition(agent.definition, `agent "${agent.id}"`)
    if (definition.executor !== undefined && !executors.includes(definition.executor)) throw new Error(`executor "${definition.executor}" is not one of this gateway's (${executors.join(', ')})`)
    if ((definition.auth ?? mode) === 'required' && !authenticates) throw new Error('requires a credential, and this gateway has none to check (A2A_API_KEYS or A2A_JWT_*)')
    return definition
  }
}
