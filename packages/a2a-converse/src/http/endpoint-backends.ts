/**
 * What an A2A endpoint door serves its checked options (endpoint-options.ts) with: each agent's backend (its own, or
 * the local SDK backend over its executor) and the authenticator of each agent that requires a caller.
 */
import type { Authenticator } from '../auth/authenticator.js'
import { localBackend } from '../backends/local/local-backend.js'
import type { TaskEventSource } from '../backends/local/task-event-relay.js'
import type { A2ABackend } from '../protocol/backend.js'
import type { ResolvedEndpointAgent, ResolvedEndpointOptions } from './endpoint-options.js'

/** The agents that require an authenticated caller, each with the endpoint's authenticator (for the service). */
export function endpointAuthentication<R> (resolved: ResolvedEndpointOptions<R>): Map<string, Authenticator> {
  return new Map(resolved.agents
    .filter((agent) => agent.access === 'authenticated')
    .map((agent) => [agent.id, resolved.authenticator as Authenticator]))
}

/** Signs a card for a request (the door's card key; `cardSigning`). */
export type CardSigning<R> = (card: Record<string, unknown>, request: R) => Promise<Record<string, unknown>>

/**
 * Each served agent's backend: its own, or the local SDK backend over its executor. With `signCard` (the door's
 * card key) the extended card is signed last, as every card the door serves.
 */
export function endpointBackends<R> (resolved: ResolvedEndpointOptions<R>, signCard?: CardSigning<R>): Map<string, A2ABackend> {
  return new Map(resolved.agents.map((agent) => [agent.id, endpointBackend(agent, resolved.events, signCard)]))
}

/** One agent's backend: its own, or the local SDK backend over its executor (task events relayed from `events`). */
export function endpointBackend<R> (agent: ResolvedEndpointAgent<R>, events: TaskEventSource | undefined, signCard?: CardSigning<R>): A2ABackend {
  const extendedCard = agent.extendedCard
  return agent.backend ?? localBackend({
    card: agent.card,
    executor: agent.executor,
    taskStore: agent.taskStore,
    turnLock: agent.turnLock,
    events,
    push: agent.push,
    extendedCard: extendedCard === undefined
      ? undefined
      : async (context) => {
        const card = await extendedCard(context.doorRequest as R)
        return signCard === undefined ? card : await signCard(card, context.doorRequest as R)
      }
  })
}
