/**
 * `mcpEndpoint`: the Fastify door of the MCP server each agent card points to — Streamable HTTP at
 * `<prefix>/mcp/a/:agentId` and the agent's MCP server card at `<prefix>/mcp/a/:agentId/server-card`.
 *
 * I/O only: the body is read and parsed here (with the A2A endpoint's limit), the MCP service (the v2 server SDK,
 * packages/a2a-converse/src/mcp/mcp-service.ts) writes the reply on the raw Node objects (the reply is hijacked); the tools run through
 * the A2A service `a2aEndpoint` registered. Encapsulated: its body parser (JSON only; any other media type is left
 * unread for the SDK to refuse) is its own. The SDK's Fastify adapter does not fit a plugin: docs/mcp.md.
 */
import createError from '@fastify/error'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { unknownAgentBody, type RequestBody } from '../bindings/jsonrpc/binding.js'
import { createMcpService } from '../mcp/mcp-service.js'
import { SERVER_CARD_HEADERS, serverCard } from '../mcp/server-card.js'
import { InvalidOptionError } from '../core/errors.js'
import { requestHostErrorBody } from '../http/request-origin.js'
import { RateLimitedError } from '../http/rate-limited-error.js'
import { errorResponse, rateLimited } from '../protocol/errors.js'

export interface McpEndpointOptions {
  /** Largest accepted request body in bytes. Default: the Fastify instance's bodyLimit (the A2A endpoint's default). */
  bodyLimit?: number
  /** Fastify's register option; register `converse` and `a2aEndpoint` with the same prefix. */
  prefix?: string
  /**
   * Answer plain `tools/call` and `tools/list` requests (2026-07-28 and the older revisions) through one long-lived MCP
   * server per agent and era instead of the SDK's new server per request (same replies; docs/mcp.md). Default true;
   * `false` is for comparisons.
   */
  directToolCalls?: boolean
  /** Told of every tools/call by tool name (`unknown` for a name the agent does not have): the gateway's metrics. */
  onToolCall?: (agentId: string, tool: string) => void
  /**
   * Messages in one JSON-RPC batch (the older revisions take an array) at most; a longer one is refused, HTTP 400
   * `-32600`, before any of it runs. Default 10; 1 to 100 (the SDK's own bound).
   */
  maxBatch?: number
  /**
   * Asked before a batch's messages run, with their number: undefined lets them run; a refusal is answered HTTP 429
   * with Retry-After and a JSON-RPC -32000 body (reason RATE_LIMITED), none of them run. A rate limit counts each
   * message here (this door has no limiter of its own).
   */
  admitBatch?: (request: AgentRequest, messages: number) => Promise<{ retryAfterSec: number } | undefined>
}

export type AgentRequest = FastifyRequest<{ Params: { agentId: string } }>

/** The body is not JSON: answered 400 with a -32700 body. */
const InvalidMcpJsonError = createError('A2A_CONVERSE_MCP_INVALID_JSON', 'Invalid JSON payload', 400)

/** The body errors Fastify raises before the handler, as the MCP service takes them. */
function bodyError (error: FastifyError, request: AgentRequest): RequestBody | undefined {
  if (error.code === 'A2A_CONVERSE_MCP_INVALID_JSON') return { kind: 'invalid_json' }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { kind: 'too_large', limit: request.routeOptions.bodyLimit }
  // Fastify's own client errors (a body cut short, a bad Content-Length) keep Fastify's default answer.
  return undefined
}

async function mcpEndpointPlugin (fastify: FastifyInstance, options: McpEndpointOptions): Promise<void> {
  const { converse } = fastify
  for (const name of ['onToolCall', 'admitBatch'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new InvalidOptionError(name, 'must be a function')
  }
  const { admitBatch } = options
  const bodyLimit = options.bodyLimit ?? fastify.initialConfig.bodyLimit as number
  const service = createMcpService({
    extension: converse.extension,
    services: converse.a2aServices,
    bodyLimit,
    directToolCalls: options.directToolCalls,
    onToolCall: options.onToolCall,
    maxBatch: options.maxBatch
  })

  // JSON is read and parsed here, with the limit (cheaper than the SDK's Web-stream read); any other media type is
  // left unread for the SDK, which refuses it (415).
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(body as string)
    } catch {
      done(new InvalidMcpJsonError(), undefined)
      return
    }
    done(null, parsed)
  })
  fastify.addContentTypeParser('*', (_request, _payload, done) => { done(null) })
  fastify.setErrorHandler(async (error: FastifyError, request: AgentRequest, reply) => {
    const body = bodyError(error, request)
    if (body !== undefined) return await answer(request, reply, body)
    // A rate limiter in front of the door (the gateway's): 429, Retry-After already set, the body a batch's refusal has.
    if (error instanceof RateLimitedError) return await reply.code(429).send(errorResponse(null, rateLimited(error.retryAfterSec)))
    throw error
  })

  // A Host / X-Forwarded-* that cannot go into the card's URLs (the server's identity is built from them): 400.
  const onlyServed = async (request: AgentRequest, reply: FastifyReply): Promise<void> => {
    if (!service.serves(request.params.agentId)) return await reply.code(404).send(unknownAgentBody(request.params.agentId))
    const refused = converse.hostRefusal(request)
    if (refused !== undefined) await reply.code(400).send(requestHostErrorBody(refused))
  }
  // Built from the request's headers: no shared cache may keep it (the card routes' rule, packages/a2a-converse/src/http/card-cache.ts).
  const serverCardHeaders = converse.cardsFromRequest ? { ...SERVER_CARD_HEADERS, 'cache-control': 'private, max-age=300' } : SERVER_CARD_HEADERS

  async function answer (request: AgentRequest, reply: FastifyReply, body?: RequestBody): Promise<FastifyReply> {
    reply.hijack()
    // Headers set on the reply (a request id, say) are not written by Fastify once hijacked.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
    }
    await service.handle({
      agentId: request.params.agentId,
      request: request.raw,
      response: reply.raw,
      body: body ?? (request.body === undefined ? undefined : { kind: 'json', value: request.body }),
      cardOf: () => converse.cardFor(request.params.agentId, request) as Record<string, unknown>,
      log: request.log,
      clientAddress: request.ip,
      admitBatch: admitBatch === undefined ? undefined : async (messages) => await admitBatch(request, messages)
    })
    return reply
  }

  fastify.route({
    method: ['POST', 'GET', 'DELETE'],
    url: '/mcp/a/:agentId',
    bodyLimit,
    onRequest: onlyServed,
    handler: async (request: AgentRequest, reply: FastifyReply) => await answer(request, reply)
  })

  fastify.get<{ Params: { agentId: string } }>('/mcp/a/:agentId/server-card', { onRequest: onlyServed }, async (request, reply) => {
    const card = converse.cardFor(request.params.agentId, request) as Record<string, unknown>
    return reply.headers(serverCardHeaders).send(JSON.stringify(serverCard(card)))
  })
  fastify.options('/mcp/a/:agentId/server-card', async (_request, reply) => reply.code(204).headers(SERVER_CARD_HEADERS).send())
}

/**
 * Register after `converse` and `a2aEndpoint`: `app.register(mcpEndpoint)`. Named for Fastify's dependency checks,
 * and encapsulated (a `prefix` applies).
 */
export const mcpEndpoint = fp(mcpEndpointPlugin, {
  fastify: '5.x', name: 'a2a-converse-mcp', dependencies: ['a2a-converse', 'a2a-converse-endpoint'], encapsulate: true
})
export default mcpEndpoint
