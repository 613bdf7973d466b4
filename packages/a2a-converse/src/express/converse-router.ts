/**
 * The Express door: one router per set of agents, serving what the Fastify plugins serve — the agent cards,
 * the tools route, the A2A 1.0 JSON-RPC endpoint (JSON and SSE, the echo header on both), the HTTP+JSON binding
 * under <mount>/a2a/:agentId/rest (packages/a2a-converse/src/bindings/http-json/) and the MCP door
 * (`/mcp/a/:agentId` and its server card, packages/a2a-converse/src/mcp/mcp-service.ts) — plus
 * `decorateRoute()`, the middleware that gives a JSON-RPC route the user wrote negotiation, the echo header and
 * decoration (the Fastify plugin's `config: { converse }`).
 *
 * I/O only: bodies are read by packages/a2a-converse/src/http/request-body.ts, everything A2A happens in the service
 * (packages/a2a-converse/src/a2a/service.ts) and the extension (packages/a2a-converse/src/core/converse-extension.ts). Paths follow the mount path
 * (`app.use('/v1', router)` moves the routes and, through `req.baseUrl`, the URLs the cards name).
 */
import type { NextFunction, Request, RequestHandler, Response, Router as ExpressRouter } from 'express'
import { Router } from '../peers/express.js'
import type { ServiceLogger } from '../protocol/backend.js'
import { writeStream } from '../http/node-stream-writer.js'
import type { Authenticator } from '../auth/authenticator.js'
import type { A2AService } from '../a2a/service.js'
import { createBoundA2AService } from '../bindings/index.js'
import { HTTP_JSON_PATH, type HttpJsonReply } from '../bindings/http-json/binding.js'
import { restErrorBody } from '../bindings/http-json/errors.js'
import { unknownAgentBody, type A2AReply, type RequestBody } from '../bindings/jsonrpc/binding.js'
import {
  baseUrlOf, createConverseExtension,
  type BaseUrlOption, type ConverseAgentOptions, type ConverseExtension, type ConverseExtensionOptions
} from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { EXTENSIONS_HEADER } from '../core/uri.js'
import { cardReply, JWKS_HEADERS, notServed03Body } from '../http/card-cache.js'
import { createCardSigner, JWKS_PATH, type CardSigner } from '../auth/card-signer.js'
import { isSigningKey, type SigningKey } from '../auth/signing-key.js'
import { publicHostList, requestHostErrorBody, requestOrigin, RequestHostError } from '../http/request-origin.js'
import { cardAsServed, requestedCardVersion, V03_CARD_PATH, wellKnownCardVersion } from '../core/card.js'
import { endpointAuthentication, endpointBackends, resolveEndpointOptions, type EndpointAgentOptions } from '../http/endpoint-options.js'
import { readRequestBody } from '../http/request-body.js'
import { createMcpService } from '../mcp/mcp-service.js'
import { SERVER_CARD_HEADERS, serverCard } from '../mcp/server-card.js'
import { errorResponse, internalError } from '../protocol/errors.js'
import type { TaskEventSource } from '../backends/local/task-event-relay.js'
import type { A2AVersion } from '../protocol/version.js'
import type { CallObserver } from '../telemetry/observer.js'

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

/** Per-request negotiation result, on `res.locals.converse` for routes behind `decorateRoute()`. */
export interface ConverseLocals {
  agentId: string
  requested: readonly string[]
  activated: readonly string[]
  /** Whether this request activated the converse extension. */
  active: boolean
}

export interface DecorateRouteOptions {
  /** The agent of this route. Default: the `:agentId` route parameter, else the first agent. */
  agentId?: string
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
const NOT_ACTIVE = Object.freeze({ requested: Object.freeze([]), activated: Object.freeze([]), active: false })
/** The tail of an HTTP+JSON request's baseUrl (the sub-router at <mount>/a2a/<id>/rest): what is left is the mount. */
const HTTP_JSON_MOUNT = new RegExp(`/a2a/[^/]+${HTTP_JSON_PATH}$`)
const STDERR_LOGGER: ServiceLogger = Object.freeze({
  error: (object: object, message: string) => console.error(message, object),
  warn: (object: object, message: string) => console.warn(message, object),
  info: () => {}
})

export function converseRouter (options: ConverseRouterOptions): ConverseRouter {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object')
  const extension = createConverseExtension(options)
  const { agents, defaultAgentId } = extension
  const publicHosts = publicHostList('publicHosts', options.publicHosts)
  const publicUrl = baseUrlOf('publicUrl', options.publicUrl, (request: Request) => requestOrigin(request.protocol, request.host, publicHosts))
  const mcpPublicUrl = baseUrlOf('mcpPublicUrl', options.mcpPublicUrl, publicUrl)
  const cardsFromRequest = typeof options.publicUrl !== 'string' || (options.mcpPublicUrl !== undefined && typeof options.mcpPublicUrl !== 'string')
  const serverCardHeaders = cardsFromRequest ? { ...SERVER_CARD_HEADERS, 'cache-control': 'private, max-age=300' } : SERVER_CARD_HEADERS
  if (options.defaultAgentCard !== undefined && typeof options.defaultAgentCard !== 'boolean') {
    throw new InvalidOptionError('defaultAgentCard', 'must be a boolean')
  }
  if (options.mcpDirectToolCalls !== undefined && typeof options.mcpDirectToolCalls !== 'boolean') {
    throw new InvalidOptionError('mcpDirectToolCalls', 'must be a boolean')
  }
  if (options.bodyLimit !== undefined && (!Number.isSafeInteger(options.bodyLimit) || options.bodyLimit < 1)) {
    throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  }
  // Only an absent logger gets the default; null is rejected like every other option of the wrong type.
  const logger = options.logger === undefined ? STDERR_LOGGER : options.logger
  if (logger === null || typeof logger !== 'object' || ['error', 'warn', 'info'].some((level) => typeof (logger as unknown as Record<string, unknown>)[level] !== 'function')) {
    throw new InvalidOptionError('logger', 'must be a pino-compatible logger (error, warn and info methods)')
  }
  if (options.mcpAdmitBatch !== undefined && typeof options.mcpAdmitBatch !== 'function') {
    throw new InvalidOptionError('mcpAdmitBatch', 'must be a function')
  }
  if (options.onMcpToolCall !== undefined && typeof options.onMcpToolCall !== 'function') {
    throw new InvalidOptionError('onMcpToolCall', 'must be a function')
  }
  if (options.cardSigning !== undefined && !isSigningKey(options.cardSigning)) throw new InvalidOptionError('cardSigning', 'must be a key made by createSigningKey')
  const signer = options.cardSigning === undefined ? undefined : createCardSigner(options.cardSigning)
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  // Only agents given an executor or a backend answer at the endpoint; error messages keep their index.
  const servedIndexes = options.agents.flatMap((agent, index) => agent.executor !== undefined || agent.backend !== undefined ? [index] : [])
  const resolved = servedIndexes.length === 0
    ? undefined
    : resolveEndpointOptions<Request>(
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
  // The extended card signed as the well-known cards are, its jku under the router's mount (an HTTP+JSON request is
  // in the sub-router at <mount>/a2a/<id>/rest, whose baseUrl says so).
  const signExtended = signer === undefined
    ? undefined
    : async (card: Record<string, unknown>, request: Request) => {
      const mount = request.baseUrl.replace(HTTP_JSON_MOUNT, '')
      return await signer.sign(card, `${publicUrl(request)}${mount}${JWKS_PATH}`)
    }
  const backends = resolved === undefined ? new Map() : endpointBackends(resolved, signExtended)
  const rootAgentId = resolved?.rootAgentId
  const service = createBoundA2AService({
    extension,
    backends,
    authenticated: resolved === undefined ? undefined : endpointAuthentication(resolved),
    maxStreamsPerCaller: resolved?.maxStreamsPerCaller,
    versions: resolved?.a2aVersions,
    observer: resolved?.observer
  })
  /** Open streams, so that close() can end them. */
  const streams = new Map<AbortController, Promise<void>>()
  const served03 = (agentId: string): boolean => backends.has(agentId) && service.versions.includes('0.3')

  function logFor (request: Request): ServiceLogger {
    const own = (request as Request & { log?: ServiceLogger }).log
    return own !== undefined && typeof own.error === 'function' ? own : logger
  }

  /**
   * An agent's card. One whose endpoint also answers A2A 0.3 lists its 0.3 interfaces the 1.0 way, or is 0.3's card
   * for a request that asks for 0.3 (docs/protocol-versions.md, "The card").
   */
  function cardFor (agentId: string, request: Request, version = requestedCardVersion(request.headers?.['a2a-version'])): Record<string, unknown> | undefined {
    const card = agents.get(agentId)?.cardFor({ publicUrl: publicUrl(request), mcpPublicUrl: mcpPublicUrl(request), mountPath: request.baseUrl })
    return card === undefined ? undefined : cardAsServed(card, served03(agentId), version)
  }

  async function answer (request: Request, response: Response): Promise<void> {
    // The path's agent, or the root endpoint's.
    const agentId = (request.params.agentId as string | undefined) ?? rootAgentId as string
    // Unknown agents are answered before the body is read.
    if (!service.serves(agentId)) {
      response.status(404).json(unknownAgentBody(agentId))
      return
    }
    const body = request.readableEnded ? alreadyRead(request) : await readRequestBody(request, bodyLimit)
    if (body === undefined) return
    await serve(response, async (signal) => await service.handle({ ...fromDoor(request, agentId, signal), body }),
      (reply) => response.status(reply.status).set(reply.headers).json(reply.body))
  }

  /** What every binding's request carries from the door: the agent, headers, query, signal, log, the client. */
  function fromDoor (request: Request, agentId: string, signal: AbortSignal) {
    return { agentId, headers: request.headers, query: request.query as Record<string, unknown>, signal, log: logFor(request), doorRequest: request, clientAddress: request.ip }
  }

  /** Asks a binding and writes its answer: `writeJson` for JSON, else the frames of a stream. */
  async function serve<Reply extends A2AReply | HttpJsonReply> (
    response: Response, ask: (signal: AbortSignal) => Promise<Reply>, writeJson: (reply: Extract<Reply, { kind: 'json' }>) => void
  ): Promise<void> {
    const controller = new AbortController()
    // A client that goes away before its JSON reply cancels what the backend is waiting for (an upstream request).
    const abort = (): void => controller.abort()
    response.once('close', abort)
    const reply = await ask(controller.signal)
    response.off('close', abort)
    if (reply.kind === 'json') {
      writeJson(reply as Extract<Reply, { kind: 'json' }>)
      return
    }
    const done = writeStream(response, reply, controller)
    streams.set(controller, done)
    await done
    streams.delete(controller)
  }

  /** An HTTP+JSON request: read the body (none for GET), the binding answers, JSON (none for a 204) or frames. */
  async function answerHttpJson (request: Request, response: Response): Promise<void> {
    const agentId = request.params.agentId as string
    if (!service.serves(agentId)) {
      response.status(404).json(unknownAgentBody(agentId))
      return
    }
    let body: RequestBody | undefined = { kind: 'absent' }
    if (request.method !== 'GET') body = request.readableEnded ? alreadyRead(request) : await readRequestBody(request, bodyLimit)
    if (body === undefined) return
    await serve(response, async (signal) => await service.handleHttpJson({
      ...fromDoor(request, agentId, signal),
      httpMethod: request.method,
      // The path after <mount>/a2a/<id>/rest as sent (mounted with `use`, `req.path` is that rest and is not decoded:
      // the binding decodes each segment, and answers one that cannot be decoded itself).
      path: request.path,
      body
    }), (reply) => {
      response.status(reply.status).set(reply.headers)
      if (reply.body === undefined) response.end()
      else response.json(reply.body)
    })
  }

  const router = Router() as ConverseRouter
  if (backends.size > 0) {
    const endpoint = guarded(answer, logFor, (response) => {
      response.status(500).json(errorResponse(null, internalError()))
    })
    router.post('/a2a/:agentId', endpoint)
    if (rootAgentId !== undefined) router.post('/', endpoint)
    const httpJson = guarded(answerHttpJson, logFor, (response) => {
      response.status(500).json(restErrorBody(internalError(), 500))
    })
    // Every verb and path under it: the binding answers 404 / 405 for what it does not route.
    router.use(`/a2a/:agentId${HTTP_JSON_PATH}`, httpJson)
    mcpRoutes(router)
  }
  /**
   * The well-known card routes: the version by the request's header (none: 1.0's, or 0.3's for a `compat` agent); the
   * `/v0.3/` ones: 0.3's card, for 0.3 clients that send none.
   */
  function cardRoute (version?: '0.3') {
    return guarded(async (request, response) => {
      const agentId = (request.params.agentId as string | undefined) ?? defaultAgentId
      const card = cardFor(agentId, request, version ?? wellKnownCardVersion(request.headers['a2a-version'], agents.get(agentId)?.wellKnownCard === 'compat'))
      if (card === undefined) response.status(404).json(unknownAgentBody(agentId))
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
  router.get('/api/v1/mcp/converse/tools', guarded((request, response) => {
    const asked = request.query.agentId
    const agentId = asked === undefined ? defaultAgentId : String(asked)
    const agent = agents.get(agentId)
    if (agent === undefined) response.status(404).json(unknownAgentBody(agentId))
    else response.json({ tools: agent.tools })
  }, logFor))

  /** The MCP door to the served agents, through the same A2A service. */
  function mcpRoutes (target: ExpressRouter): void {
    const mcp = createMcpService({
      extension,
      services: new Map([...backends.keys()].map((id) => [id, service])),
      bodyLimit,
      directToolCalls: options.mcpDirectToolCalls,
      onToolCall: options.onMcpToolCall,
      maxBatch: options.mcpMaxBatch
    })
    const admitBatch = options.mcpAdmitBatch
    const served = (handler: (request: Request, response: Response, agentId: string) => void | Promise<void>) =>
      guarded(async (request, response) => {
        const agentId = request.params.agentId as string
        if (!mcp.serves(agentId)) response.status(404).json(unknownAgentBody(agentId))
        else await handler(request, response, agentId)
      }, logFor)
    const answer = served(async (request, response, agentId) => {
      // The server's identity is built from the card's URLs: a Host that cannot go into them is 400 (`guarded`).
      publicUrl(request)
      mcpPublicUrl(request)
      // Read by the A2A endpoint's rules; another media type stays unread for the SDK to refuse.
      let body: RequestBody | undefined
      if (request.method === 'POST') {
        body = request.readableEnded ? alreadyRead(request) : await readRequestBody(request, bodyLimit)
        // The client left before sending all of it.
        if (body === undefined) return
      }
      await mcp.handle({
        agentId,
        request,
        response,
        body,
        cardOf: () => cardFor(agentId, request) as Record<string, unknown>,
        log: logFor(request),
        clientAddress: request.ip,
        admitBatch: admitBatch === undefined ? undefined : async (messages) => await admitBatch(request, messages)
      })
    })
    target.post('/mcp/a/:agentId', answer)
    target.get('/mcp/a/:agentId', answer)
    target.delete('/mcp/a/:agentId', answer)
    target.get('/mcp/a/:agentId/server-card', served((request, response, agentId) => {
      response.set(serverCardHeaders).send(JSON.stringify(serverCard(cardFor(agentId, request) as Record<string, unknown>)))
    }))
    target.options('/mcp/a/:agentId/server-card', (_request, response) => { response.status(204).set(SERVER_CARD_HEADERS).end() })
  }

  function decorateRoute (routeOptions: DecorateRouteOptions = {}): RequestHandler {
    const fixedAgentId = routeOptions?.agentId
    if (fixedAgentId !== undefined && !agents.has(fixedAgentId)) {
      throw new InvalidOptionError('decorateRoute agentId', 'must name a declared agent')
    }
    return function converseRoute (request: Request, response: Response, next: NextFunction): void {
      const agentId = fixedAgentId ?? (request.params as { agentId?: string }).agentId ?? defaultAgentId
      const negotiated = extension.negotiate(agentId, request.headers['a2a-extensions'])
      const state: ConverseLocals = negotiated === undefined
        ? { agentId, ...NOT_ACTIVE }
        : { agentId, requested: negotiated.requested, activated: negotiated.activated, active: negotiated.active }
      response.locals.converse = state
      if (negotiated?.echo !== undefined) response.setHeader(EXTENSIONS_HEADER, negotiated.echo)
      const json = response.json.bind(response)
      response.json = function converseJson (payload: unknown): Response {
        const rpc = payload as { result?: unknown } | null
        const method = (request.body as { method?: unknown } | undefined)?.method
        if (rpc === null || typeof rpc !== 'object' || !('result' in rpc) || typeof method !== 'string') return json(payload)
        const result = transformFor(response, method, rpc.result)
        if (!(result instanceof Promise)) return json(result === rpc.result ? payload : { ...rpc, result })
        // decorate never rejects; a failing send (an unserializable body) goes to Express's error handling.
        result.then((decorated) => { json({ ...rpc, result: decorated }) }).catch(next)
        return response
      }
      next()
    }
  }

  function transformFor (response: Response, method: string, result: unknown): Promise<unknown> | unknown {
    const state = response.locals.converse as ConverseLocals | undefined
    if (state === undefined) return result
    return extension.transform(method, result, { agentId: state.agentId, negotiated: state, body: response.req.body, log: logFor(response.req) })
  }

  async function close (): Promise<void> {
    const open = [...streams]
    for (const [controller] of open) controller.abort()
    await Promise.all(open.map(([, done]) => done))
  }

  return Object.assign(router, { extension, cardFor, decorateRoute, transformResult: transformFor, close, service: service as A2AService })
}

/** The body a parser mounted before the router already read: its parsed value (absent when it left none). */
function alreadyRead (request: Request): RequestBody {
  return request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body }
}

/**
 * A route handler whose failures (a user's publicUrl function throwing, an unserializable reply) are logged
 * and answered 500 without a stack — never Express's default HTML error page.
 */
function guarded (
  handler: (request: Request, response: Response) => void | Promise<void>,
  logFor: (request: Request) => ServiceLogger,
  fail: (response: Response) => void = (response) => {
    response.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  }
): RequestHandler {
  return async function converseHandler (request, response) {
    try {
      await handler(request, response)
    } catch (error) {
      // Nothing is written before a handler's last step, so the headers are still unsent here.
      if (error instanceof RequestHostError) {
        response.status(400).json(requestHostErrorBody(error))
        return
      }
      logFor(request).error({ err: error }, 'a2a-converse route failed')
      fail(response)
    }
  }
}

/** The card signed last (its JWKS at `jku`), when the router signs; else as it is. */
async function signed (signer: CardSigner | undefined, card: Record<string, unknown>, jku: string): Promise<Record<string, unknown>> {
  return signer === undefined ? card : await signer.sign(card, jku)
}

/** A card with its cache validators (http/card-cache.ts), or 304 when the client holds it already. */
function sendCard (request: Request, response: Response, card: Record<string, unknown>, varies: boolean, fromRequest: boolean): void {
  const { status, headers, body } = cardReply(card, request.headers['if-none-match'], varies, fromRequest)
  response.status(status).set(headers)
  if (body === undefined) response.end()
  else response.send(body)
}
