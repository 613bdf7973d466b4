/**
 * The gateway's A2A doors (docs/identities.md, "One count per caller"): the A2A endpoint (JSON-RPC, HTTP+JSON, 0.3)
 * and the MCP door in one Fastify scope whose rate limiter counts first, then the caller's share of the work; the
 * gRPC door (GRPC_PORT) on the same A2A service and the same count. app.ts registers them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { a2aEndpoint, type A2AEndpointAgentOptions } from 'a2a-converse/fastify'
import { mcpEndpoint } from 'a2a-converse/mcp'
import type { GrpcDoor } from 'a2a-converse/grpc'
import type { TaskEventHub } from 'a2a-converse/runtime'
import type { A2AService, Authenticator } from 'a2a-converse/service'
import type { GatewayConfig } from './config.js'
import type { GatewayMetrics } from './metrics.js'
import type { RateLimits, RateRefusal } from './rate-limits.js'
import { callerShare, requestBytes, type CallerShare } from './caller-share.js'

export interface DoorOptions {
  config: GatewayConfig
  mcpDirectToolCalls: boolean | undefined
  limits: RateLimits
  metrics: GatewayMetrics | undefined
  authenticator: Authenticator | undefined
  /** The agents that require a caller (live: changes as agents are published). */
  required: ReadonlySet<string>
  rootAgentId: string | undefined
  /** The agent whose A2A service the gRPC door serves (every agent's: one service). */
  defaultAgentId: string
  events: TaskEventHub
  agents: A2AEndpointAgentOptions[]
}

export async function registerDoors (app: FastifyInstance, options: DoorOptions): Promise<void> {
  const { config, mcpDirectToolCalls, limits, metrics, authenticator, required, rootAgentId, events, agents } = options
  /**
   * What the A2A doors count a request under: the caller, where the agent requires one and the credential is valid
   * (the service reuses this authentication: see createAuthenticator); else the client address.
   */
  const limitKey = async (agentId: string | undefined, headers: Record<string, string | string[] | undefined>, address: string): Promise<string> => {
    if (authenticator !== undefined && agentId !== undefined && required.has(agentId)) {
      const caller = await authenticator.authenticate(headers).catch(() => undefined)
      if (caller !== undefined) return `caller:${caller.id}`
    }
    return `address:${address}`
  }
  // ONE count per caller for every door and binding (JSON-RPC, HTTP+JSON, 0.3, MCP, gRPC), in memory or in Redis.
  const callerLimit = limits.limit('a2a', config.rateLimit.max)
  /** An HTTP request's key, worked out once for the limit and the share. */
  const keys = new WeakMap<FastifyRequest, Promise<string>>()
  const requestKey = async (request: FastifyRequest): Promise<string> => {
    let key = keys.get(request)
    if (key === undefined) {
      key = limitKey((request.params as { agentId?: string }).agentId ?? rootAgentId, request.headers, request.ip)
      keys.set(request, key)
    }
    return await key
  }
  const share = callerShare(config.maxBytesInFlightPerCaller)
  // Each door in a scope of its own, its limiter first: it counts before anything else looks at the request.
  await app.register(async (scope) => {
    limits.apply(scope, { door: 'a2a', limit: callerLimit, key: requestKey })
    // Then the caller's share of the work (caller-share.ts): a request past it waits, its body unread.
    holdCallerShare(scope, share, requestKey, config.bodyLimit)
    await scope.register(a2aEndpoint, {
      agents,
      authenticator,
      bodyLimit: config.bodyLimit,
      events,
      rootAgentId,
      maxStreamsPerCaller: config.maxStreamsPerCaller,
      a2aVersions: config.a2aVersions,
      observer: metrics?.observer
    })
    // The MCP door every card names (params.mcp): the same agents through the same A2A service and limit. A batch's
    // HTTP request took one from the limit above; its other messages take one each before any of them runs.
    await scope.register(mcpEndpoint, {
      bodyLimit: config.bodyLimit,
      directToolCalls: mcpDirectToolCalls,
      onToolCall: metrics?.toolCalled,
      maxBatch: config.mcpMaxBatch,
      admitBatch: async (request, messages) => {
        if (messages < 2) return undefined
        const refusal = await callerLimit.take(await limitKey(request.params.agentId, request.headers, request.ip), messages - 1)
        if (refusal !== undefined) metrics?.rateLimited('a2a')
        return refusal
      }
    })
  })
  registerGrpcDoor(app, options, async (key) => await callerLimit.take(key), limitKey)
}

/** A request's share of its caller's work in flight: held until its response closes; the client gone first, nothing. */
function holdCallerShare (scope: FastifyInstance, share: CallerShare, requestKey: (request: FastifyRequest) => Promise<string>, bodyLimit: number): void {
  scope.addHook('onRequest', async (request, reply) => {
    const gone = new AbortController()
    const leave = (): void => { gone.abort() }
    reply.raw.once('close', leave)
    const release = await share.hold(await requestKey(request), requestBytes(request.headers, bodyLimit), gone.signal)
    reply.raw.off('close', leave)
    // The client left while it waited: nothing is held, and nothing more is done for it.
    if (release === undefined) {
      reply.hijack()
      return
    }
    // 'close' comes when the response is done, a stream's included, or when the connection is lost.
    reply.raw.once('close', release)
  })
}

/** The gRPC door (GRPC_PORT): the same A2A service as the HTTP doors, the same count of the same limit. */
function registerGrpcDoor (
  app: FastifyInstance,
  options: DoorOptions,
  take: (key: string) => Promise<RateRefusal | undefined>,
  limitKey: (agentId: string | undefined, headers: Record<string, string | string[] | undefined>, address: string) => Promise<string>
): void {
  const { config, metrics, rootAgentId, defaultAgentId } = options
  app.decorate('grpcPort', undefined)
  if (config.grpcPort === undefined) return
  const doors: GrpcDoor[] = []
  app.addHook('onReady', async () => {
    // Loaded only here: a gateway without GRPC_PORT never loads grpc-js.
    const { serveGrpc } = await import('a2a-converse/grpc')
    const door = await serveGrpc({
      service: app.converse.a2aServices.get(defaultAgentId) as A2AService,
      host: config.host,
      port: config.grpcPort as number,
      defaultAgentId: rootAgentId,
      maxMessageBytes: config.bodyLimit,
      admit: async ({ agentId, headers, clientAddress }) => {
        const refusal = await take(await limitKey(agentId, headers, clientAddress))
        if (refusal !== undefined) metrics?.rateLimited('a2a-grpc')
        return refusal
      },
      log: app.log
    })
    doors.push(door)
    app.grpcPort = door.port
    app.log.info({ port: door.port }, 'gRPC listening')
  })
  // Before the HTTP server closes: open gRPC streams end and in-flight calls finish, as the HTTP ones do.
  app.addHook('preClose', async () => { await Promise.all(doors.map(async (door) => await door.close())) })
}
