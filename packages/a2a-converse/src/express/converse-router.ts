/**
 * The Express door: one router per set of agents, serving what the Fastify plugins serve — the agent cards,
 * the tools route, the A2A 1.0 JSON-RPC endpoint (JSON and SSE, the echo header on both), the HTTP+JSON binding
 * under <mount>/a2a/:agentId/rest (packages/a2a-converse/src/bindings/http-json/) and the MCP door
 * (`/mcp/a/:agentId` and its server card, packages/a2a-converse/src/mcp/mcp-service.ts) — plus
 * `decorateRoute()`, the middleware that gives a JSON-RPC route the user wrote negotiation, the echo header and
 * decoration (the Fastify plugin's `config: { converse }`).
 *
 * This module checks the options and composes the router: the card routes and the tools route here, the serving
 * routes in a2a-routes.ts, `decorateRoute()` in decorate-route.ts, what they share in route-kit.ts. Everything A2A
 * happens in the service (packages/a2a-converse/src/a2a/service.ts) and the extension
 * (packages/a2a-converse/src/core/converse-extension.ts). Paths follow the mount path (`app.use('/v1', router)` moves
 * the routes and, through `req.baseUrl`, the URLs the cards name).
 */
import type { Request, RequestHandler, Response, Router as ExpressRouter } from 'express'
import { Router } from '../peers/express.js'
import type { ServiceLogger } from '../protocol/backend.js'
import type { Authenticator } from '../auth/authenticator.js'
import type { A2AService } from '../a2a/service.js'
import { createBoundA2AService } from '../bindings/index.js'
import {
  baseUrlOf, createConverseExtension,
  type BaseUrlOption, type ConverseAgentOptions, type ConverseExtension, type ConverseExtensionOptions
} from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { JWKS_HEADERS, notServed03Body } from '../http/card-cache.js'
import { createCardSigner, JWKS_PATH } from '../auth/card-signer.js'
import { isSigningKey, type SigningKey } from '../auth/signing-key.js'
import { publicHostList, requestOrigin } from '../http/request-origin.js'
import { cardAsServed, requestedCardVersion, V03_CARD_PATH, wellKnownCardVersion } from '../core/card.js'
import { endpointAuthentication, endpointBackends } from '../http/endpoint-backends.js'
import { resolveEndpointOptions, type EndpointAgentOptions, type ResolvedEndpointOptions } from '../http/endpoint-options.js'
import type { TaskEventSource } from '../backends/local/task-event-relay.js'
import type { A2AVersion } from '../protocol/version.js'
import type { CallObserver } from '../telemetry/observer.js'
import { a2aRoutes, mcpRouteOptions } from './a2a-routes.js'
import { routeDecorator, type DecorateRouteOptions } from './decorate-route.js'
import { extendedCardSigner, guarded, loggerOf, routerLogger, sendCard, signed, unknownAgent, type RouterContext } from './route-kit.js'

export type { ConverseLocals, DecorateRouteOptions } from './decorate-route.js'

export type ExpressUrlOption = BaseUrlOption<Request>

/**
 * An agent: its declaration (id, card, routines) and, when it is to answer at POST <mount>/a2a/:id, an
 * `executor` (or a `backend`). An agent with neither has a card and tools, for a route the user writes.
 */
export interface ConverseRouterAgentOptions extends ConverseAgentOptions, Omit<EndpointAgentOptions<Request>, 'id'> {}

export interface ConverseRouterOptions extends Omit<ConverseExtensionOptions, 'agents'> {
  agents: ConverseRouterAgentOptions[]
  /**
   * Public base URL written into cards. Default: the request's protocol and host (Express's `trust proxy` applies),
   * checked (http or https, a host[:port] and nothing else: else 400) and the card then sent `Cache-Control: private`.
   */
  publicUrl?: ExpressUrlOption
  /** With the default publicUrl, the hosts (host or host:port) a request may name; another is 400. Default: any valid host. */
  publicHosts?: readonly string[]
  /** Base URL of the MCP door: an agent's mcp.url is `<mcpPublicUrl><mount>/mcp/a/<id>`. Default: publicUrl. */
  mcpPublicUrl?: ExpressUrlOption
  /** Serve the first agent's card at <mount>/.well-known/agent-card.json too. Default true. */
  defaultAgentCard?: boolean
  /** Largest accepted request body of the A2A endpoint and the MCP door, in bytes. Default 1048576 (1 MiB). */
  bodyLimit?: number
  /** The MCP door's fast path for plain tools/call and tools/list, every revision (see mcpEndpoint's `directToolCalls`). Default true. */
  mcpDirectToolCalls?: boolean
  /** Task events published after an executor returned, relayed to open streams (see a2aEndpoint). */
  events?: TaskEventSource
  /** Also answer this agent's JSON-RPC at POST <mount>/ (see a2aEndpoint). Default: none. */
  rootAgentId?: string
  /**
   * Authenticates requests to agents whose `access` is `authenticated` (the default once this is set); see
   * a2aEndpoint. Rate limiting is the Express app's own (express-rate-limit, say): the router has none.
   */
  authenticator?: Authenticator
  /**
   * Open streams per caller (else per client address, Express's `req.ip`) at most; one more is HTTP 429 with
   * Retry-After before it opens (see a2aEndpoint). Default: no limit.
   */
  maxStreamsPerCaller?: number
  /** The A2A versions the JSON-RPC endpoint answers (see a2aEndpoint). Default ['0.3', '1.0']. */
  a2aVersions?: readonly A2AVersion[]
  /** pino-compatible. Default: errors and warnings to stderr. A request's own `req.log` (pino-http) wins. */
  logger?: ServiceLogger
  /**
   * Told of every A2A call's end and every stream's opening and end, on every binding of the router (a2aEndpoint's
   * `observer`): what metrics of one's own count from (docs/observability.md "Metrics in an app of one's own").
   */
  observer?: CallObserver
  /** Told of each MCP tools/call the router's MCP door answers, by agent and tool (`unknown`: a tool the agent has not). */
  onMcpToolCall?: (agentId: string, tool: string) => void
  /** Messages in one MCP JSON-RPC batch at most (see mcpEndpoint's `maxBatch`): 1 to 100, default 10. */
  mcpMaxBatch?: number
  /**
   * Asked before an MCP batch's messages run, with their number (see mcpEndpoint's `admitBatch`): a rate limiter in
   * front of the router counts the HTTP request once; this is where it counts the batch's other messages.
   */
  mcpAdmitBatch?: (request: Request, messages: number) => Promise<{ retryAfterSec: number } | undefined>
  /**
   * Sign every card served (A2A 1.0 §8.4) with this key (`createSigningKey`, a2a-converse/service), and publish its
   * JWKS at `<mount>/.well-known/jwks.json`, which each signature's `jku` names (docs/signing.md). Default: unsigned.
   */
  cardSigning?: SigningKey
}

export interface ConverseRouter extends ExpressRouter {
  /** The framework-free extension (agents, negotiation, decoration) this router uses. */
  readonly extension: ConverseExtension
  /**
   * The augmented card of an agent as seen by this request: base URLs from the options or the request, the mount
   * path from `request.baseUrl` (a route added to this router sees the router's).
   */
  cardFor (agentId: string, request: Request): Record<string, unknown> | undefined
  /** Negotiation, the echo header and decoration of `res.json` for a JSON-RPC route the user wrote. */
  decorateRoute (options?: DecorateRouteOptions): RequestHandler
  /** Decorates (or strips) one result on a `decorateRoute()` route; for SSE writers, once per frame. */
  transformResult (response: Response, method: string, result: unknown): Promise<unknown> | unknown
  /** Ends the open SSE streams of the endpoint (call before `server.close()`); settles when they have ended. */
  close (): Promise<void>
  /** The A2A service answering the router's agents: what another door (the gRPC door, `serveGrpc`) serves them with. */
  readonly service: A2AService
}

const DEFAULT_BODY_LIMIT = 1024 * 1024

export function converseRouter (options: ConverseRouterOptions): ConverseRouter {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object')
  const extension = createConverseExtension(options)
  checkFlags(options)
  const publicHosts = publicHostList('publicHosts', options.publicHosts)
  const publicUrl = baseUrlOf('publicUrl', options.publicUrl, (request: Request) => requestOrigin(request.protocol, request.host, publicHosts))
  const mcpPublicUrl = baseUrlOf('mcpPublicUrl', options.mcpPublicUrl, publicUrl)
  const cardsFromRequest = typeof options.publicUrl !== 'string' || (options.mcpPublicUrl !== undefined && typeof options.mcpPublicUrl !== 'string')
  const logFor = loggerOf(routerLogger(options.logger))
  if (options.cardSigning !== undefined && !isSigningKey(options.cardSigning)) throw new InvalidOptionError('cardSigning', 'must be a key made by createSigningKey')
  const signer = options.cardSigning === undefined ? undefined : createCardSigner(options.cardSigning)
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const resolved = servedAgents(options, extension)
  const backends = resolved === undefined ? new Map() : endpointBackends(resolved, extendedCardSigner(signer, publicUrl))
  const service = createBoundA2AService({
    extension,
    backends,
    authenticated: resolved === undefined ? undefined : endpointAuthentication(resolved),
    maxStreamsPerCaller: resolved?.maxStreamsPerCaller,
    versions: resolved?.a2aVersions,
    observer: resolved?.observer
  })
  const served03 = (agentId: string): boolean => backends.has(agentId) && service.versions.includes('0.3')

  /**
   * An agent's card. One whose endpoint also answers A2A 0.3 lists its 0.3 interfaces the 1.0 way, or is 0.3's card
   * for a request that asks for 0.3 (docs/protocol-versions.md, "The card").
   */
  function cardFor (agentId: string, request: Request, version = requestedCardVersion(request.headers?.['a2a-version'])): Record<string, unknown> | undefined {
    const card = extension.agents.get(agentId)?.cardFor({ publicUrl: publicUrl(request), mcpPublicUrl: mcpPublicUrl(request), mountPath: request.baseUrl })
    return card === undefined ? undefined : cardAsServed(card, served03(agentId), version)
  }

  const context: RouterContext = { extension, service, bodyLimit, publicUrl, mcpPublicUrl, cardFor, logFor }
  const router = Router() as ConverseRouter
  const { close } = backends.size === 0
    ? { close: async () => {} }
    : a2aRoutes(router, context, {
      agentIds: [...backends.keys()],
      rootAgentId: resolved?.rootAgentId,
      mcp: mcpRouteOptions(options, cardsFromRequest)
    })

  /**
   * The well-known card routes: the version by the request's header (none: 1.0's, or 0.3's for a `compat` agent); the
   * `/v0.3/` ones: 0.3's card, for 0.3 clients that send none.
   */
  function cardRoute (version?: '0.3') {
    return guarded(async (request, response) => {
      const agentId = (request.params.agentId as string | undefined) ?? extension.defaultAgentId
      const card = cardFor(agentId, request, version ?? wellKnownCardVersion(request.headers['a2a-version'], extension.agents.get(agentId)?.wellKnownCard === 'compat'))
      if (card === undefined) unknownAgent(response, agentId)
      else if (version !== undefined && !served03(agentId)) response.status(404).json(notServed03Body(agentId))
      else sendCard(request, response, await signed(signer, card, `${publicUrl(request)}${request.baseUrl}${JWKS_PATH}`), served03(agentId), cardsFromRequest)
    }, logFor)
  }
  router.get('/a2a/:agentId/.well-known/agent-card.json', cardRoute())
  router.get(`/a2a/:agentId${V03_CARD_PATH}`, cardRoute('0.3'))
  if (options.defaultAgentCard !== false) {
    router.get('/.well-known/agent-card.json', cardRoute())
    router.get(V03_CARD_PATH, cardRoute('0.3'))
  }
  if (options.cardSigning !== undefined) {
    const jwks = JSON.stringify(options.cardSigning.jwks)
    router.get(JWKS_PATH, (_request, response) => { response.set(JWKS_HEADERS).send(jwks) })
  }
  router.get('/api/v1/mcp/converse/tools', toolsRoute(extension, logFor))

  const { decorateRoute, transformResult } = routeDecorator(extension, logFor)
  return Object.assign(router, { extension, cardFor, decorateRoute, transformResult, close, service: service as A2AService })
}

/** The tools route: an agent's routine tools (`?agentId=`, default: the first agent), as the card lists them. */
function toolsRoute (extension: ConverseExtension, logFor: RouterContext['logFor']) {
  return guarded((request, response) => {
    const asked = request.query.agentId
    const agentId = asked === undefined ? extension.defaultAgentId : String(asked)
    const agent = extension.agents.get(agentId)
    if (agent === undefined) unknownAgent(response, agentId)
    else response.json({ tools: agent.tools })
  }, logFor)
}

/** The boolean, size and function options, each failure naming its option. */
function checkFlags (options: ConverseRouterOptions): void {
  for (const name of ['defaultAgentCard', 'mcpDirectToolCalls'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new InvalidOptionError(name, 'must be a boolean')
  }
  if (options.bodyLimit !== undefined && (!Number.isSafeInteger(options.bodyLimit) || options.bodyLimit < 1)) {
    throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  }
  for (const name of ['mcpAdmitBatch', 'onMcpToolCall'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new InvalidOptionError(name, 'must be a function')
  }
}

/** The endpoint's options for the agents given an executor or a backend (only they answer); messages keep their index. */
function servedAgents (options: ConverseRouterOptions, extension: ConverseExtension): ResolvedEndpointOptions<Request> | undefined {
  const servedIndexes = options.agents.flatMap((agent, index) => agent.executor !== undefined || agent.backend !== undefined ? [index] : [])
  if (servedIndexes.length === 0) return undefined
  return resolveEndpointOptions<Request>(
    {
      agents: servedIndexes.map((index) => options.agents[index]),
      bodyLimit: options.bodyLimit,
      events: options.events,
      rootAgentId: options.rootAgentId,
      authenticator: options.authenticator,
      maxStreamsPerCaller: options.maxStreamsPerCaller,
      a2aVersions: options.a2aVersions,
      observer: options.observer
    },
    extension,
    (index) => `agents[${servedIndexes[index]}]`
  )
}
