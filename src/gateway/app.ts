/**
 * The gateway app: Fastify with the gateway's options, its state, and everything registered on it (registerAll,
 * the composer); the runtime is start-runtime.ts's, the cards agent-cards.ts's, the start's log startup-log.ts's.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Writable } from 'node:stream'
import type { TaskStore } from '@a2a-js/sdk/server'
import { AgentAccess } from './agent-access.js'
import type { TaskEventHub } from 'a2a-converse/runtime'
import { ConversationFeedStore } from 'a2a-converse/runtime'
import type { ConversationStore } from 'a2a-converse/runtime'
import type { TaskTurnLock } from 'a2a-converse/service'
import health, { type ReadinessCheck } from '../../plugins/health.js'
import { registerOperator } from './operator-door.js'
import { defaultAgentsFile, loadAgentDefinitions, type AgentDefinition } from './agent-definitions.js'
import type { AgentAdminOptions } from '../../plugins/operator-agents.js'
import type { StoredAgent } from 'a2a-converse/runtime'
import type { GatewayConfig } from './config.js'
import type { ExecutorFactory } from './executors.js'
import { openRateLimits } from './rate-limits.js'
import { liveAgents } from './live-agents.js'
import { agentSwitch } from './agent-switch.js'
import { registerDoors } from './doors.js'
import { servedAgents } from './served-agents.js'
import { gatewayPush } from './gateway-push.js'
import { openGatewayState, type GatewayState } from './state.js'
import { createGatewayMetrics } from './metrics.js'
import { serveMetrics } from './metrics-endpoint.js'
import { startRuntime } from './start-runtime.js'
import { registerCards } from './agent-cards.js'
import { logConfigured, warnTrustedWalkIns } from './startup-log.js'
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

declare module 'fastify' {
  interface FastifyInstance {
    /** The gRPC listener's port once the app is ready (GRPC_PORT set); undefined otherwise. */
    grpcPort: number | undefined
    /** The /metrics listener's port once the app is ready (METRICS_PORT set); undefined otherwise. */
    metricsPort: number | undefined
  }
}

export interface GatewayOptions {
  config: GatewayConfig
  /** Agents to serve; default: AGENTS_FILE, or the demo agent when that is unset. */
  agents?: AgentDefinition[]
  /** Executor factories by name, merged over the built-in ones ("conversation", "knowledge"). */
  executors?: Record<string, ExecutorFactory>
  /** Where conversations live. Default: in memory (one instance). */
  conversations?: ConversationStore
  /**
   * Task store per agent id. Default: one per agent, bounded in memory (MEMORY_MAX_TASKS …) or on PostgreSQL. A store
   * without save signals (packages/a2a-converse/src/stores/task-save-signals.ts) is wrapped so that the saves made here are signalled.
   */
  taskStores?: Record<string, TaskStore>
  /** Live task events (a person's replies to open streams). Default: in memory. */
  events?: TaskEventHub
  /** Extra readiness checks (a store's ping, say). */
  readinessChecks?: Record<string, ReadinessCheck>
  /** Where pino writes its JSON lines (tests capture them here). Default: stdout. Level: config.logLevel. */
  loggerStream?: Pick<Writable, 'write'>
  /** The MCP door's fast path for plain tools/call and tools/list (mcpEndpoint's `directToolCalls`). Default true. */
  mcpDirectToolCalls?: boolean
}

/** Builds the gateway app (not listening): cards, A2A endpoints, health, operator API. */
export async function buildGateway (options: GatewayOptions): Promise<FastifyInstance> {
  const { config } = options
  const fileAgents = options.agents ?? await loadAgentDefinitions(config.agentsFile ?? defaultAgentsFile())
  const app = Fastify({
    logger: options.loggerStream === undefined
      ? { level: config.logLevel }
      : { level: config.logLevel, stream: options.loggerStream },
    // Fastify takes a hop count too (proxy-addr); its types just do not say so.
    trustProxy: config.trustProxy as boolean | string[],
    bodyLimit: config.bodyLimit,
    // Fastify's router stops at 100 characters per parameter; a client's contextId may be longer (the operator
    // API accepts up to 128 and answers 400 beyond).
    // (Under routerOptions: the top-level option is deprecated, FSTDEP022, and warns on stderr at every start.)
    routerOptions: { maxParamLength: 1024 },
    // An incoming x-request-id is honoured when it looks like an id; anything else (long, odd bytes) is
    // replaced, so a client cannot bloat or forge structure in every log line.
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    return503OnClosing: true,
    // A slow client cannot hold a connection forever: the whole request (headers and body) within
    // requestTimeout, the headers within headersTimeout (408 and close otherwise; checked every second at
    // most). Replies and SSE streams are not bounded by these. Idle keep-alive connections close after
    // keepAliveTimeout, longer than a load balancer's idle timeout so that the balancer closes first.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs)
    }
  })
  // Beyond this many open connections, a new one is closed at once (Node's server.maxConnections).
  app.server.maxConnections = config.maxConnections
  app.addHook('onRequest', async (request, reply) => { reply.header('x-request-id', request.id) })

  // STATE: tasks, conversations and live events in the embedded database (DATA_DIR), on a PostgreSQL server, or in memory.
  const state = await openGatewayState(config, app.log)
  const events = options.events ?? state.events
  const stored = options.conversations ?? state.conversations
  // With the operator API on, every committed change of a conversation is also published for the inbox's live list.
  const conversations = config.operatorApiKey !== undefined ? new ConversationFeedStore(stored, events, app.log) : stored
  app.addHook('onClose', async () => {
    // The state closes what it opened; stores passed in as options are closed here too.
    await options.conversations?.close()
    await options.events?.close()
    await state.close()
  })
  try {
    const agents = await servedAgents(options, fileAgents, state.agents, app.log)
    await registerAll(app, options, agents.definitions, { conversations, events, state, ...agents })
  } catch (error) {
    await app.close()
    throw error
  }
  return app
}

async function registerAll (
  app: FastifyInstance,
  options: GatewayOptions,
  definitions: AgentDefinition[],
  { conversations, events, state, admin, check, served }: {
    conversations: ConversationStore,
    events: TaskEventHub,
    state: GatewayState,
    admin: AgentAdminOptions
    check: (agent: StoredAgent) => AgentDefinition,
    served: Map<string, number | 'file'>
  }
): Promise<void> {
  const { config } = options
  const access = new AgentAccess(config, definitions)
  // The agents served now (live: src/gateway/live-agents.ts changes it): the metrics' agent labels, the inbox's agents.
  const agentIds = new Set(definitions.map((definition) => definition.id))
  warnTrustedWalkIns(app, config, definitions, access)
  // Metrics exist only with METRICS_TOKEN: without it nothing is counted (no registry, no observer).
  const metrics = config.metricsToken === undefined ? undefined : createGatewayMetrics(agentIds)
  // One turn lock per agent, shared by its A2A endpoint and the inbox's task writes.
  const turnLocks = new Map<string, TaskTurnLock>()
  const turnLock = (agentId: string): TaskTurnLock => {
    let lock = turnLocks.get(agentId)
    if (lock === undefined) turnLocks.set(agentId, lock = state.taskTurnLockFor(agentId))
    return lock
  }
  const gatewayPushParts = gatewayPush(app, config, state, options.taskStores)
  const { taskStoreFor, agentPush, upstreamPush } = gatewayPushParts
  const runtime = await startRuntime(app, options, definitions, { conversations, events, state, metrics, turnLock, push: gatewayPushParts })
  await app.register(health, { checks: { ...state.readinessChecks, ...runtime.readinessChecks, ...options.readinessChecks } })
  const followCard = await registerCards(app, config, definitions, runtime, access)
  const rootAgentId = config.rootEndpoint ? definitions[0].id : undefined
  const limits = openRateLimits(config.rateLimit, app.log, metrics?.rateLimited ?? noRefusalCount)
  app.addHook('onClose', async () => await limits.close())
  await registerDoors(app, {
    config,
    mcpDirectToolCalls: options.mcpDirectToolCalls,
    limits,
    metrics,
    authenticator: access.authenticator,
    required: access.required,
    rootAgentId,
    defaultAgentId: definitions[0].id,
    events,
    agents: runtime.agents.map(({ id, executor, backend, taskStore, push }) => ({
      id,
      executor,
      backend,
      taskStore,
      push,
      turnLock: turnLock(id),
      access: access.required.has(id) ? 'authenticated' as const : 'walk-in' as const
    }))
  })
  await serveMetrics(app, config, metrics, limits.limit('metrics', config.rateLimit.operatorMax))
  // Agent changes in the state store, served live on every door (docs/agents.md).
  const live = liveAgents({
    store: state.agents,
    events,
    fileIds: new Set([...served].filter(([, version]) => version === 'file').map(([id]) => id)),
    served,
    check,
    syncMs: config.agentsSyncMs,
    log: app.log,
    ...agentSwitch({ app, config, runtime, access, agentIds, turnLock, forgetTurnLock: (agentId) => turnLocks.delete(agentId), perAgent: [taskStoreFor, agentPush, upstreamPush], followCard })
  })
  // Before the runtime closes: a switch in progress finishes first.
  app.addHook('preClose', async () => { await live.close() })
  admin.changed = live.changed
  await registerOperator(app, config, limits, {
    agentIds,
    inbox: metrics === undefined ? runtime.inbox : metrics.countedInbox(runtime.inbox),
    answers: conversations.answers,
    agentAdmin: admin
  })
  logConfigured(app, config, definitions, state, access, metrics)
}

/** Without metrics, a rate limit's refusals are not counted. */
function noRefusalCount (): void {}
