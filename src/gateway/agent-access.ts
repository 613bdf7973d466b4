/**
 * Who may call each agent, and what its card says about it: the gateway's authenticator (when credentials are
 * configured), the agents that require a caller, and those that take only a JWT (they forward or exchange the caller's
 * own token upstream: an API key is refused there). Live: an agent published or changed at runtime is set again.
 */
import { createAuthenticator, type Authenticator } from 'a2a-converse/service'
import { cardSecurity, type CardSecurity } from 'a2a-converse/service'
import type { AgentDefinition } from './agent-definitions.js'
import { ConfigError, type GatewayConfig } from './config.js'

/** Whether an agent forwards (`passthrough`) or exchanges (`exchange`) the caller's own token upstream (docs/trust.md). */
function takesCallerToken (definition: AgentDefinition): boolean {
  const mode = definition.upstream?.identity?.mode
  return mode === 'passthrough' || mode === 'exchange'
}

export class AgentAccess {
  /** The agents that require a caller (read live by the doors). */
  readonly required = new Set<string>()
  readonly #tokenOnly = new Set<string>()
  readonly authenticator: Authenticator | undefined
  readonly #mode: GatewayConfig['auth']['mode']

  /** Refuses an agent that requires a caller when no credential is configured (A2A_API_KEYS or A2A_JWT_*). */
  constructor (config: GatewayConfig, definitions: readonly AgentDefinition[]) {
    const { apiKeys, jwt, mode } = config.auth
    this.#mode = mode
    this.authenticator = apiKeys.length > 0 || jwt !== undefined ? createAuthenticator({ apiKeys, jwt }) : undefined
    for (const definition of definitions) {
      if (this.requires(definition) && this.authenticator === undefined) {
        throw new ConfigError('A2A_API_KEYS', `or A2A_JWT_* must be set: agent "${definition.id}" requires authentication (auth: required)`)
      }
      this.set(definition)
    }
  }

  /** Whether the definition requires a caller (its `auth`, else A2A_AUTH). */
  requires (definition: AgentDefinition): boolean {
    return (definition.auth ?? this.#mode) === 'required'
  }

  set (definition: AgentDefinition): void {
    if (this.requires(definition)) this.required.add(definition.id)
    else this.required.delete(definition.id)
    if (takesCallerToken(definition)) this.#tokenOnly.add(definition.id)
    else this.#tokenOnly.delete(definition.id)
  }

  delete (agentId: string): void {
    this.required.delete(agentId)
    this.#tokenOnly.delete(agentId)
  }

  /**
   * The card with the schemes the gateway accepts when the agent requires a caller (a proxied agent's too: the caller
   * authenticates to the gateway, never to the upstream); only the JWT scheme for an agent that takes the caller's token.
   */
  secured<T extends object> (agentId: string, card: T): T {
    if (!this.required.has(agentId)) return card
    const accepts = (this.authenticator as Authenticator).accepts
    const security: CardSecurity = cardSecurity(this.#tokenOnly.has(agentId) ? { ...accepts, apiKeys: false } : accepts)
    return { ...card, ...security }
  }
}
