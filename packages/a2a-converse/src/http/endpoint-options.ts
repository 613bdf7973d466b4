/**
 * Options of an A2A endpoint door (Fastify's `a2aEndpoint`, the Express router; `R` is the door's request type),
 * checked once at registration: every failure names the option. Framework-free.
 */
import type { CallObserver } from '../telemetry/observer.js'
import type { AgentExecutor, TaskStore } from '@a2a-js/sdk/server'
import type { Authenticator } from '../auth/authenticator.js'
import type { A2ABackend } from '../protocol/backend.js'
import { InvalidOptionError } from '../core/errors.js'
import { resolveEndpointAgent } from './endpoint-agent.js'
import type { TaskEventSource } from '../backends/local/task-event-relay.js'
import { A2A_VERSIONS, type A2AVersion } from '../protocol/version.js'
import type { TaskTurnLock } from '../stores/task-turn-lock.js'
import type { ResolvedAgent } from '../core/converse-extension.js'
import type { AgentPush } from '../push/index.js'

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
