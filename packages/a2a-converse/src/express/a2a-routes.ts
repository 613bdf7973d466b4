/**
 * The Express door's serving routes: the A2A 1.0 JSON-RPC endpoint (JSON and SSE), the HTTP+JSON binding under
 * <mount>/a2a/:agentId/rest (packages/a2a-converse/src/bindings/http-json/) and the MCP door (`/mcp/a/:agentId` and
 * its server card). I/O only: bodies are read by packages/a2a-converse/src/http/request-body.ts and everything A2A
 * happens in the service (packages/a2a-converse/src/a2a/service.ts).
 */
import type { Request, Response, Router as ExpressRouter } from 'express'
import { writeStream } from '../http/node-stream-writer.js'
import { HTTP_JSON_PATH, type HttpJsonReply } from '../bindings/http-json/binding.js'
import { restErrorBody } from '../bindings/http-json/errors.js'
import type { A2AReply, RequestBody } from '../bindings/jsonrpc/binding.js'
import { createMcpService } from '../mcp/mcp-service.js'
import { SERVER_CARD_HEADERS, serverCard } from '../mcp/server-card.js'
import { errorResponse, internalError } from '../protocol/errors.js'
import type { ConverseRouterOptions } from './converse-router.js'
import { bodyOf, guarded, unknownAgent, type RouterContext } from './route-kit.js'

/** The options of the MCP door (converse-router.ts's `mcp*` options). */
export interface McpRouteOptions {
  directToolCalls?: boolean
  onToolCall?: (agentId: string, tool: string) => void
  maxBatch?: number
  admitBatch?: (request: Request, messages: number) => Promise<{ retryAfterSec: number } | undefined>
  /** The server card's headers (private caching when the card's URLs come from the request). */
  serverCardHeaders: Record<string, string>
}

/** The MCP door's options, from the router's (`mcp…`); its server card `private` when the cards come from the request. */
export function mcpRouteOptions (options: ConverseRouterOptions, cardsFromRequest: boolean): McpRouteOptions {
  return {
    directToolCalls: options.mcpDirectToolCalls,
    onToolCall: options.onMcpToolCall,
    maxBatch: options.mcpMaxBatch,
    admitBatch: options.mcpAdmitBatch,
    serverCardHeaders: cardsFromRequest ? { ...SERVER_CARD_HEADERS, 'cache-control': 'private, max-age=300' } : SERVER_CARD_HEADERS
  }
}

/** The agents the routes serve, the root endpoint's agent and the MCP door's options. */
export interface A2ARouteOptions {
  agentIds: readonly string[]
  rootAgentId: string | undefined
  mcp: McpRouteOptions
}

/**
 * Adds the JSON-RPC endpoint (and POST <mount>/ for `rootAgentId`), the HTTP+JSON binding and the MCP door for the
 * served agents. `close()` ends the streams open on them and settles when they have ended.
 */
export function a2aRoutes (router: ExpressRouter, context: RouterContext, { agentIds, rootAgentId, mcp }: A2ARouteOptions): { close: () => Promise<void> } {
  const { service, bodyLimit, logFor } = context
  /** Open streams, so that close() can end them. */
  const streams = new Map<AbortController, Promise<void>>()

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

  async function answerJsonRpc (request: Request, response: Response): Promise<void> {
    // The path's agent, or the root endpoint's.
    const agentId = (request.params.agentId as string | undefined) ?? rootAgentId as string
    // Unknown agents are answered before the body is read.
    if (!service.serves(agentId)) return unknownAgent(response, agentId)
    const body = await bodyOf(request, bodyLimit)
    if (body === undefined) return
    await serve(response, async (signal) => await service.handle({ ...fromDoor(request, agentId, signal), body }),
      (reply) => response.status(reply.status).set(reply.headers).json(reply.body))
  }

  /** An HTTP+JSON request: read the body (none for GET), the binding answers, JSON (none for a 204) or frames. */
  async function answerHttpJson (request: Request, response: Response): Promise<void> {
    const agentId = request.params.agentId as string
    if (!service.serves(agentId)) return unknownAgent(response, agentId)
    const body: RequestBody | undefined = request.method === 'GET' ? { kind: 'absent' } : await bodyOf(request, bodyLimit)
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

  const endpoint = guarded(answerJsonRpc, logFor, (response) => {
    response.status(500).json(errorResponse(null, internalError()))
  })
  router.post('/a2a/:agentId', endpoint)
  if (rootAgentId !== undefined) router.post('/', endpoint)
  // Every verb and path under it: the binding answers 404 / 405 for what it does not route.
  router.use(`/a2a/:agentId${HTTP_JSON_PATH}`, guarded(answerHttpJson, logFor, (response) => {
    response.status(500).json(restErrorBody(internalError(), 500))
  }))
  mcpRoutes(router, context, agentIds, mcp)

  return {
    async close () {
      const open = [...streams]
      for (const [controller] of open) controller.abort()
      await Promise.all(open.map(([, done]) => done))
    }
  }
}

/** The MCP door to the served agents, through the same A2A service. */
function mcpRoutes (router: ExpressRouter, context: RouterContext, agentIds: readonly string[], options: McpRouteOptions): void {
  const { extension, service, bodyLimit, logFor, cardFor } = context
  const mcp = createMcpService({
    extension,
    services: new Map(agentIds.map((id) => [id, service])),
    bodyLimit,
    directToolCalls: options.directToolCalls,
    onToolCall: options.onToolCall,
    maxBatch: options.maxBatch
  })
  const admitBatch = options.admitBatch
  const served = (handler: (request: Request, response: Response, agentId: string) => void | Promise<void>) =>
    guarded(async (request, response) => {
      const agentId = request.params.agentId as string
      if (!mcp.serves(agentId)) unknownAgent(response, agentId)
      else await handler(request, response, agentId)
    }, logFor)
  const answer = served(async (request, response, agentId) => {
    // The server's identity is built from the card's URLs: a Host that cannot go into them is 400 (`guarded`).
    context.publicUrl(request)
    context.mcpPublicUrl(request)
    // Read by the A2A endpoint's rules; another media type stays unread for the SDK to refuse.
    let body: RequestBody | undefined
    if (request.method === 'POST') {
      body = await bodyOf(request, bodyLimit)
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
  router.post('/mcp/a/:agentId', answer)
  router.get('/mcp/a/:agentId', answer)
  router.delete('/mcp/a/:agentId', answer)
  router.get('/mcp/a/:agentId/server-card', served((request, response, agentId) => {
    response.set(options.serverCardHeaders).send(JSON.stringify(serverCard(cardFor(agentId, request) as Record<string, unknown>)))
  }))
  router.options('/mcp/a/:agentId/server-card', (_request, response) => { response.status(204).set(SERVER_CARD_HEADERS).end() })
}
