/**
 * One agent of an A2A endpoint door, checked and resolved: declared to the extension, with an executor or a backend,
 * its task store, turn lock, access and capabilities (the card's, or the options' where they agree), and in-process
 * push delivery when it takes push configs. The endpoint's options (endpoint-options.ts) and `putAgent` use it.
 */
import type { AgentExecutor } from '@a2a-js/sdk/server'
import type { Authenticator } from '../auth/authenticator.js'
import type { ResolvedAgent } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { createPushNotifications } from '../push/index.js'
import type { EndpointAgentOptions, ResolvedEndpointAgent } from './endpoint-options.js'

/** Cards are built per public base URL; the request handler only reads capabilities and extensions. */
const PLACEHOLDER_BASE = 'http://localhost'

/**
 * One agent of an endpoint, checked (`where` names it in errors): an agent declared to the extension, with an executor
 * or a backend. The endpoint's options use it for each agent, and `putAgent` for an agent added at runtime.
 */
export function resolveEndpointAgent<R = unknown> (
  agent: EndpointAgentOptions<R>,
  where: string,
  converse: { agents: ReadonlyMap<string, ResolvedAgent> },
  authenticator: Authenticator | undefined
): ResolvedEndpointAgent<R> {
  if (agent === null || typeof agent !== 'object') throw new InvalidOptionError(where, 'must be an object')
  const declared = typeof agent.id === 'string' ? converse.agents.get(agent.id) : undefined
  if (declared === undefined) {
    throw new InvalidOptionError(`${where}.id`, 'must name an agent declared to the converse plugin')
  }
  const { executor, backend } = agent
  if (backend !== undefined) {
    if (executor !== undefined) throw new InvalidOptionError(`${where}.backend`, 'takes the place of executor: give one of them')
    if (backend === null || typeof backend !== 'object' || typeof backend.call !== 'function' ||
      typeof backend.stream !== 'function' || typeof backend.toError !== 'function' || typeof backend.facts !== 'object') {
      throw new InvalidOptionError(`${where}.backend`, 'must be an A2ABackend (facts, call, stream and toError)')
    }
  } else if (executor === null || typeof executor !== 'object' ||
    typeof executor.execute !== 'function' || typeof executor.cancelTask !== 'function') {
    throw new InvalidOptionError(`${where}.executor`, 'must be an AgentExecutor (execute and cancelTask methods)')
  }
  const store = agent.taskStore
  if (store !== undefined && (store === null || typeof store !== 'object' ||
    typeof store.load !== 'function' || typeof store.save !== 'function' || typeof store.list !== 'function')) {
    throw new InvalidOptionError(`${where}.taskStore`, 'must be a TaskStore (load, save and list methods)')
  }
  const turnLock = agent.turnLock
  if (turnLock !== undefined && (turnLock === null || typeof turnLock !== 'object' || typeof turnLock.acquire !== 'function')) {
    throw new InvalidOptionError(`${where}.turnLock`, 'must be a TaskTurnLock (an acquire method)')
  }
  if (agent.extendedCard !== undefined && typeof agent.extendedCard !== 'function') {
    throw new InvalidOptionError(`${where}.extendedCard`, 'must be a function of the request')
  }
  const access = agent.access ?? (authenticator === undefined ? 'walk-in' : 'authenticated')
  if (access !== 'walk-in' && access !== 'authenticated') throw new InvalidOptionError(`${where}.access`, 'must be "walk-in" or "authenticated"')
  if (access === 'authenticated' && authenticator === undefined) {
    throw new InvalidOptionError(`${where}.access`, 'is "authenticated", which needs the endpoint\'s authenticator option')
  }
  const card = declared.cardFor({ publicUrl: PLACEHOLDER_BASE })
  // The converse plugin's cards always carry capabilities (it adds its extension entry there).
  const cardCapabilities = card.capabilities as Record<string, unknown>
  const wanted = agent.capabilities === undefined ? {} : agent.capabilities
  if (wanted === null || typeof wanted !== 'object') {
    throw new InvalidOptionError(`${where}.capabilities`, 'must be an object')
  }
  const capabilities = {
    ...cardCapabilities,
    streaming: capability(where, 'streaming', wanted.streaming, cardCapabilities.streaming, true),
    pushNotifications: capability(where, 'pushNotifications', wanted.pushNotifications, cardCapabilities.pushNotifications, false)
  }
  let { push } = agent
  let taskStore = store
  if (push === undefined && capabilities.pushNotifications && backend === undefined) {
    // Delivery in this process, safe by default (packages/a2a-converse/src/push/url-guard.ts).
    ({ push, taskStore } = createPushNotifications().forAgent(agent.id, store))
  }
  return {
    id: agent.id,
    executor: executor as AgentExecutor,
    backend,
    taskStore,
    turnLock,
    card: { ...card, capabilities },
    extendedCard: agent.extendedCard,
    access,
    push
  }
}

function capability (where: string, name: string, option: unknown, onCard: unknown, fallback: boolean): boolean {
  if (option !== undefined && typeof option !== 'boolean') {
    throw new InvalidOptionError(`${where}.capabilities.${name}`, 'must be a boolean')
  }
  if (option !== undefined && typeof onCard === 'boolean' && option !== onCard) {
    throw new InvalidOptionError(`${where}.capabilities.${name}`, `contradicts the card's capabilities.${name}`)
  }
  return option ?? (typeof onCard === 'boolean' ? onCard : fallback)
}
