/**
 * Options of an A2A endpoint door (Fastify's `a2aEndpoint`, the Express router; `R` is the door's request type),
 * checked once at registration: every failure names the option. Framework-free.
 */
import type { CallObserver } from '../telemetry/observer.js'
import type { AgentExecutor, TaskStore } from '@a2a-js/sdk/server'
import type { Authenticator } from '../auth/authenticator.js'
import type { A2ABackend } from '../protocol/backend.js'
import { localBackend } from '../backends/local/local-backend.js'
import { InvalidOptionError } from '../core/errors.js'
import type { TaskEventSource } from '../backends/local/task-event-relay.js'
import { A2A_VERSIONS, type A2AVersion } from '../protocol/version.js'
import type { TaskTurnLock } from '../stores/task-turn-lock.js'
import type { ResolvedAgent } from '../core/converse-extension.js'
import { createPushNotifications, type AgentPush } from '../push/index.js'

export interface EndpointCapabilities {
  /** SendStreamingMessage and SubscribeToTask. Default: the card's `capabilities.streaming`, else true. */
  streaming?: boolean
  /** The four push-config methods (and webhook delivery). Default: the card's value, else false. */
  pushNotifications?: boolean
}

export interface EndpointAgentOptions<R = unknown> {
  /** An agent id declared to the extension: the agent answers at POST <mount>/a2a/:id. */
  id: string
  /** Any @a2a-js/sdk AgentExecutor (answered through the SDK's request handler). */
  executor?: AgentExecutor
  /** Or any other source of replies (an upstream agent, say): takes the place of `executor`. */
  backend?: A2ABackend
  /** Where tasks live. Default: a new InMemoryTaskStore per agent. */
  taskStore?: TaskStore
  /**
   * Runs turns on one task (SendMessage, SendStreamingMessage naming a taskId) one at a time. Default: a
   * MemoryTaskTurnLock (this process). Instances sharing a task store need a shared one (PostgresTaskTurnLock).
   */
  turnLock?: TaskTurnLock
  capabilities?: EndpointCapabilities
  /**
   * The extended agent card (GetExtendedAgentCard) for a request, when the card declares
   * `capabilities.extendedAgentCard`. Without it such an agent answers -32007.
   */
  extendedCard?: (request: R) => Record<string, unknown> | Promise<Record<string, unknown>>
  /**
   * `authenticated`: every request needs a credential the endpoint's `authenticator` accepts (401 otherwise),
   * and tasks and conversations belong to the caller. `walk-in`: no credential is asked for or looked at.
   * Default: `authenticated` when the endpoint has an authenticator, else `walk-in`.
   */
  access?: AgentAccess
  /**
   * Push notifications of an agent whose card declares them: its config store and URL policy, with `taskStore`
   * already reporting to a deliverer (`createPushNotifications().forAgent(...)`). Default for such an agent: configs
   * in memory, the default URL policy (public https webhooks only), delivery in this process.
   */
  push?: AgentPush
}

export type AgentAccess = 'walk-in' | 'authenticated'

export interface EndpointOptions<R = unknown> {
  agents: Array<EndpointAgentOptions<R>>
  /** Authenticates requests to the agents whose `access` is `authenticated` (see packages/a2a-converse/src/auth/authenticator.ts). */
  authenticator?: Authenticator
  /** Largest accepted request body in bytes. Default: the Fastify instance's bodyLimit; the Express router's 1 MiB. */
  bodyLimit?: number
  /**
   * Also answer this agent's JSON-RPC at POST <prefix>/ — for clients that post to the very URL they are given (the
   * A2A TCK, say). Default: none (only POST <prefix>/a2a/:agentId).
   */
  rootAgentId?: string
  /**
   * Task events published after the executor returned (a person's reply, say): relayed to open streams on
   * the task, which then stay open while the task is SUBMITTED or WORKING. Default: none.
   */
  events?: TaskEventSource
  /**
   * Open streams (SendStreamingMessage, SubscribeToTask) per caller at most — per authenticated caller, else per
   * client address (the framework's `request.ip`, so its trust-proxy setting decides) — across the endpoint's
   * agents; one more is HTTP 429 with Retry-After before it opens. Default: no limit (the gateway sets
   * MAX_STREAMS_PER_CALLER).
   */
  maxStreamsPerCaller?: number
  /**
   * The A2A versions the JSON-RPC endpoint answers. Default ['0.3', '1.0']: a request without `A2A-Version` (or
   * with 0.3) is an A2A 0.3 request, translated (docs/protocol-versions.md). ['1.0']: such a request is -32009.
   */
  a2aVersions?: readonly A2AVersion[]
  /** Told of every A2A call's end and every stream's opening and end (the gateway's metrics; docs/observability.md). */
  observer?: CallObserver
}

export interface ResolvedEndpointOptions<R = unknown> {
  agents: Array<ResolvedEndpointAgent<R>>
  authenticator?: Authenticator
  rootAgentId?: string
  events?: TaskEventSource
  /** 0: no limit. */
  maxStreamsPerCaller: number
  a2aVersions: readonly A2AVersion[]
  observer?: CallObserver
}

/** One agent after checking: the card the SDK request handler gets, with the effective capabilities. */
export interface ResolvedEndpointAgent<R = unknown> {
  id: string
  executor: AgentExecutor
  backend?: A2ABackend
  taskStore?: TaskStore
  turnLock?: TaskTurnLock
  card: Record<string, unknown>
  extendedCard?: EndpointAgentOptions<R>['extendedCard']
  access: AgentAccess
  push?: AgentPush
}

/** Cards are built per public base URL; the request handler only reads capabilities and extensions. */
const PLACEHOLDER_BASE = 'http://localhost'
const OBSERVER_METHODS = ['callEnded', 'streamOpened', 'streamClosed'] as const

/**
 * `converse`: the agents declared to the extension (the Fastify plugin's, or the Express router's own);
 * `optionOf`: how an error names `agents[index]` (the Express router passes only its served agents).
 */
export function resolveEndpointOptions<R = unknown> (
  options: EndpointOptions<R>,
  converse: { agents: ReadonlyMap<string, ResolvedAgent> } | undefined,
  optionOf: (index: number) => string = (index) => `agents[${index}]`
): ResolvedEndpointOptions<R> {
  if (converse === undefined) {
    throw new InvalidOptionError('agents', 'need the converse plugin: register it before a2aEndpoint')
  }
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object')
  if (options.bodyLimit !== undefined && (!Number.isSafeInteger(options.bodyLimit) || options.bodyLimit < 1)) {
    throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  }
  const maxStreamsPerCaller = options.maxStreamsPerCaller ?? 0
  if (!Number.isSafeInteger(maxStreamsPerCaller) || maxStreamsPerCaller < 0) {
    throw new InvalidOptionError('maxStreamsPerCaller', 'must be an integer ≥ 0 (0: no limit)')
  }
  const a2aVersions = options.a2aVersions ?? A2A_VERSIONS
  if (!Array.isArray(a2aVersions) || !a2aVersions.includes('1.0') || a2aVersions.some((version) => !A2A_VERSIONS.includes(version))) {
    throw new InvalidOptionError('a2aVersions', 'must be [\'1.0\'] or [\'0.3\', \'1.0\'] (1.0 is always served)')
  }
  const events = options.events
  if (events !== undefined && (events === null || typeof events !== 'object' || typeof events.subscribe !== 'function')) {
    throw new InvalidOptionError('events', 'must be a task event hub (a subscribe(taskId, listener) method)')
  }
  const authenticator = options.authenticator
  if (authenticator !== undefined && (authenticator === null || typeof authenticator !== 'object' || typeof authenticator.authenticate !== 'function')) {
    throw new InvalidOptionError('authenticator', 'must be an Authenticator (createAuthenticator)')
  }
  const observer = options.observer
  if (observer !== undefined && (observer === null || typeof observer !== 'object' ||
    OBSERVER_METHODS.some((method) => typeof (observer as unknown as Record<string, unknown>)[method] !== 'function'))) {
    throw new InvalidOptionError('observer', 'must be an object with callEnded, streamOpened and streamClosed methods')
  }
  if (!Array.isArray(options.agents) || options.agents.length === 0) {
    throw new InvalidOptionError('agents', 'must be a non-empty array')
  }
  const seen = new Set<string>()
  const agents = options.agents.map((agent, index) => {
    const where = optionOf(index)
    const checked = resolveEndpointAgent(agent, where, converse, authenticator)
    if (seen.has(checked.id)) throw new InvalidOptionError(`${where}.id`, `"${checked.id}" is served twice`)
    seen.add(checked.id)
    return checked
  })
  const rootAgentId = options.rootAgentId
  if (rootAgentId !== undefined && !seen.has(rootAgentId)) {
    throw new InvalidOptionError('rootAgentId', 'must name one of the agents served here')
  }
  return { agents, events, rootAgentId, authenticator, maxStreamsPerCaller, a2aVersions, observer }
}

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

/** The agents that require an authenticated caller, each with the endpoint's authenticator (for the service). */
export function endpointAuthentication<R> (resolved: ResolvedEndpointOptions<R>): Map<string, Authenticator> {
  return new Map(resolved.agents
    .filter((agent) => agent.access === 'authenticated')
    .map((agent) => [agent.id, resolved.authenticator as Authenticator]))
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
