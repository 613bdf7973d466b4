/**
 * An agent published, changed or unpublished at runtime, switched on every door of this instance
 * (live-agents.ts decides when; this does it): built while the version before serves, then put in its place.
 */
import type { FastifyInstance } from 'fastify'
import type { TaskTurnLock, UpstreamAgent } from 'a2a-converse/service'
import type { AgentAccess } from './agent-access.js'
import type { AgentDefinition, UpstreamDefinition } from './agent-definitions.js'
import { ConfigError, type GatewayConfig } from './config.js'
import type { AgentRuntime } from './runtime.js'

/**
 * A proxied agent with `upstream.identity.mode: exchange` with its client secret, read from the environment variable
 * the agents file names (never from the file itself); a variable unset or empty stops the start, naming it.
 */
export function withClientSecret (definition: AgentDefinition, env: Readonly<Record<string, string | undefined>>): AgentDefinition {
  const identity = definition.upstream?.identity
  if (identity?.mode !== 'exchange') return definition
  const name = identity.clientSecretEnv as string
  const secret = env[name]
  if (secret === undefined || secret === '') {
    throw new ConfigError(name, `must be set: agent "${definition.id}" exchanges its callers' tokens with it as client secret (upstream.identity.clientSecretEnv; docs/trust.md)`)
  }
  return { ...definition, upstream: { ...definition.upstream as UpstreamDefinition, identity: { ...identity, clientSecret: secret } } }
}

export interface AgentSwitchOptions {
  app: FastifyInstance
  config: GatewayConfig
  runtime: AgentRuntime
  access: AgentAccess
  /** The agents served now (the metrics' labels, the inbox's agents). */
  agentIds: Set<string>
  turnLock: (agentId: string) => TaskTurnLock
  forgetTurnLock: (agentId: string) => void
  /** What is made per agent and kept (its task store, its push): forgotten when the agent goes. */
  perAgent: ReadonlyArray<{ forget: (agentId: string) => void }>
  /** Follows a proxied agent's card from its upstream. */
  followCard: (upstream: UpstreamAgent) => void
}

export function agentSwitch ({ app, config, runtime, access, agentIds, turnLock, forgetTurnLock, perAgent, followCard }: AgentSwitchOptions): {
  put: (definition: AgentDefinition) => Promise<void>
  remove: (agentId: string) => void
} {
  return {
    async put (definition) {
      const { id } = definition
      // check() made sure an agent that requires a caller has an authenticator here.
      const requires = access.requires(definition)
      // Built (a knowledge index, an upstream's first card read) while the version before serves every call. A proxied
      // agent that sends assertions without SIGNING_KEY and PUBLIC_URL, or exchanges tokens without its client
      // secret's variable set, fails here (not served, logged).
      const { agent, upstream, switched } = await runtime.build(withClientSecret(definition, process.env))
      access.set(definition)
      app.converse.putAgent({
        id,
        card: access.secured(id, agent.card),
        routines: agent.routines,
        wellKnownCard: definition.wellKnownCard ?? config.wellKnownCard,
        executor: agent.executor,
        backend: agent.backend,
        taskStore: agent.taskStore,
        push: agent.push,
        turnLock: turnLock(id),
        access: requires ? 'authenticated' : 'walk-in'
      })
      switched()
      agentIds.add(id)
      if (upstream !== undefined) followCard(upstream)
    },
    remove (agentId) {
      for (const made of perAgent) made.forget(agentId)
      forgetTurnLock(agentId)
      app.converse.removeAgent(agentId)
      runtime.remove(agentId)
      access.delete(agentId)
      agentIds.delete(agentId)
    }
  }
}
