/**
 * `a2aEndpoint`: the Fastify door of the A2A service — A2A 1.0 JSON-RPC at POST <prefix>/a2a/:agentId, and
 * HTTP+JSON under <prefix>/a2a/:agentId/rest (`/message:send`, `/tasks/{id}`, …: packages/a2a-converse/src/bindings/http-json/routes.ts).
 *
 * It only does I/O: reads the body (JSON, its limit, its media type), hands the request to the service
 * (packages/a2a-converse/src/a2a/service.ts: negotiation, checks, the agent's backend, decoration, the echo header) and writes the
 * JSON reply or the SSE frames. Encapsulated on purpose (not fastify-plugin wrapped): its body parser and
 * error handler apply to its own route only. Needs the `converse` plugin registered first (the agents, their
 * cards and the envelope provider come from there).
 */
import createError from '@fastify/error'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { writeStream } from '../http/node-stream-writer.js'
import { createBoundA2AService } from '../bindings/index.js'
import { HTTP_JSON_PATH, type HttpJsonReply } from '../bindings/http-json/binding.js'
import { unknownAgentBody, type A2AReply, type RequestBody, type StreamReply } from '../bindings/jsonrpc/binding.js'
import { errorResponse, internalError, invalidRequest, rateLimited, type JsonRpcError } from '../protocol/errors.js'
import { restErrorBody } from '../bindings/http-json/errors.js'
import { RateLimitedError } from '../http/rate-limited-error.js'
import { endpointAuthentication, endpointBackend, endpointBackends, resolveEndpointAgent, resolveEndpointOptions } from '../http/endpoint-options.js'
import { ACCEPTED_CONTENT_TYPES } from '../http/request-body.js'
import type { A2AEndpointOptions } from './a2a-endpoint-options.js'

export type { A2AEndpointOptions, A2AEndpointAgentOptions, A2AEndpointCapabilities } from './a2a-endpoint-options.js'

/** The body is not JSON: answered with HTTP 400 and a -32700 body. */
export const InvalidJsonBodyError = createError('A2A_CONVERSE_INVALID_JSON', 'Invalid JSON payload', 400)

export { ACCEPTED_CONTENT_TYPES }

type RouteRequest = FastifyRequest<{ Params: { agentId?: string } }>

async function a2aEndpointPlugin (fastify: FastifyInstance, options: A2AEndpointOptions): Promise<void> {
  // fastify-plugin's dependency check has made sure the converse plugin is there.
  const resolved = resolveEndpointOptions<FastifyRequest>(options, fastify.converse)
  const backends = endpointBackends(resolved, fastify.converse.signCard)
  const service = createBoundA2AService({
    extension: fastify.converse.extension,
    backends,
    authenticated: endpointAuthentication(resolved),
    maxStreamsPerCaller: resolved.maxStreamsPerCaller,
    versions: resolved.a2aVersions,
    observer: resolved.observer
  })
  // The MCP door answers through the same service (same backends, same task stores and locks).
  const { a2aServices } = fastify.converse
  for (const agentId of backends.keys()) {
    if (!a2aServices.has(agentId)) a2aServices.set(agentId, service)
  }
  // Agents put at runtime (converse.putAgent): served by the first endpoint registered.
  fastify.converse.liveEndpoints.push({
    put: (agent) => {
      const checked = resolveEndpointAgent(agent, 'agent', fastify.converse, resolved.authenticator)
      service.putAgent(checked.id, endpointBackend(checked, resolved.events, fastify.converse.signCard), checked.access === 'authenticated' ? resolved.authenticator : undefined)
      a2aServices.set(checked.id, service)
    },
    remove: (agentId) => {
      if (!service.removeAgent(agentId)) return
      if (a2aServices.get(agentId) === service) a2aServices.delete(agentId)
    }
  })
  /** Open streams, so that closing the app ends them (and close() can finish). */
  const streams = new Map<AbortController, Promise<void>>()

  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser([...ACCEPTED_CONTENT_TYPES], { parseAs: 'string' }, (_request, body, done) => {
    // An empty body is no body (the official HTTP+JSON client sends Content-Type on a bodiless `:cancel`).
    if (body === '') {
      done(null, undefined)
      return
    }
    let parsed: unknown
    try {
      // JSON.parse makes `__proto__` / `constructor` plain own data members: inert, never a prototype.
      parsed = JSON.parse(body as string)
    } catch {
      done(new InvalidJsonBodyError(), undefined)
      return
    }
    done(null, parsed)
  })

  fastify.setErrorHandler((error: FastifyError, request: RouteRequest, reply) => {
    const body = bodyError(error, request)
    if (body !== undefined) return isHttpJson(request) ? answerHttpJson(request, reply, body) : answer(request, reply, body)
    // The binding's error body: JSON-RPC's, or HTTP+JSON's (AIP-193) on its routes.
    const send = (status: number, rpcError: JsonRpcError) => isHttpJson(request)
      ? reply.code(status).send(restErrorBody(rpcError, status))
      : reply.code(status).send(errorResponse(null, rpcError))
    // A rate limiter in front of the route (the gateway's): 429, Retry-After already set.
    if (error instanceof RateLimitedError) return send(429, rateLimited(error.retryAfterSec))
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      // A client error raised elsewhere (an auth hook, a bad Content-Length): its status.
      return send(status, invalidRequest([{ field: 'request', description: error.message }], error.message))
    }
    request.log.error({ err: error }, 'A2A endpoint failed')
    return send(500, internalError())
  })

  fastify.addHook('preClose', async () => {
    const open = [...streams]
    for (const [controller] of open) controller.abort()
    await Promise.all(open.map(([, done]) => done))
  })

  /** The agent a request is for: the path's, or the root endpoint's. */
  const agentOf = (request: RouteRequest): string => request.params.agentId ?? resolved.rootAgentId as string

  /** What every binding's request carries from the door: the agent, headers, query, signal, log, the client. */
  const fromDoor = (request: RouteRequest, signal: AbortSignal) => ({
    agentId: agentOf(request),
    headers: request.headers,
    query: request.query as Record<string, unknown>,
    signal,
    log: request.log,
    doorRequest: request,
    clientAddress: request.ip
  })

  /** Asks a binding and writes its answer: JSON (none for a 204), or the frames of a stream. */
  async function serve (reply: FastifyReply, ask: (signal: AbortSignal) => Promise<A2AReply | HttpJsonReply>): Promise<unknown> {
    const controller = new AbortController()
    // A client that goes away before its JSON reply cancels what the backend is waiting for (an upstream request).
    const abort = (): void => controller.abort()
    reply.raw.once('close', abort)
    const result = await ask(controller.signal)
    reply.raw.off('close', abort)
    if (result.kind === 'json') return reply.code(result.status).headers(result.headers).send(result.body)
    return await writeHijacked(reply, result, controller)
  }

  const answer = async (request: RouteRequest, reply: FastifyReply, body: RequestBody): Promise<unknown> =>
    await serve(reply, async (signal) => await service.handle({ ...fromDoor(request, signal), body }))

  /** An HTTP+JSON request: the path after <agent>/rest goes to the binding. */
  const answerHttpJson = async (request: RouteRequest, reply: FastifyReply, body: RequestBody): Promise<unknown> =>
    await serve(reply, async (signal) => await service.handleHttpJson({ ...fromDoor(request, signal), httpMethod: request.method, path: rawTail(request), body }))

  /** Writes SSE frames on the raw response, the stream known to close() until it ends. */
  async function writeHijacked (reply: FastifyReply, result: StreamReply, controller: AbortController): Promise<FastifyReply> {
    reply.hijack()
    // Headers set on the reply (a request id, say) are not written by Fastify once hijacked.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
    }
    const done = writeStream(reply.raw, result, controller)
    streams.set(controller, done)
    await done
    streams.delete(controller)
    return reply
  }

  const handler = (request: RouteRequest, reply: FastifyReply) =>
    answer(request, reply, request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body })
  const route = {
    bodyLimit: options.bodyLimit,
    // Unknown agents are answered before the body is read.
    onRequest: async (request: RouteRequest, reply: FastifyReply) => {
      if (!service.serves(request.params.agentId as string)) return reply.code(404).send(unknownAgentBody(request.params.agentId as string))
    }
  }
  // With a trailing slash too: clients (the conformance kit's among them) post to `<interface url>/`.
  fastify.post('/a2a/:agentId', route, handler)
  fastify.post('/a2a/:agentId/', route, handler)
  if (resolved.rootAgentId !== undefined) fastify.post('/', { bodyLimit: options.bodyLimit }, handler)
  fastify.route<{ Params: { agentId: string } }>({
    // Every verb a route might be asked with: the binding answers 404 / 405 for what it does not route.
    method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'],
    url: `/a2a/:agentId${HTTP_JSON_PATH}/*`,
    bodyLimit: options.bodyLimit,
    onRequest: async (request, reply) => {
      if (!service.serves(request.params.agentId)) return reply.code(404).send(unknownAgentBody(request.params.agentId))
    },
    handler: async (request, reply) =>
      await answerHttpJson(request, reply, request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body })
  })
}

/**
 * The path after <prefix>/a2a/<id>/rest as sent, percent-encoded: the binding decodes each segment once (Fastify's
 * wildcard parameter is decoded, `%2F` included, so a task id with a slash would split).
 */
function rawTail (request: RouteRequest): string {
  const fixed = (request.routeOptions.url as string).split('/').length - 1
  return `/${request.url.split('?', 1)[0].split('/').slice(fixed).join('/')}`
}

function isHttpJson (request: RouteRequest): boolean {
  return request.routeOptions.url?.endsWith(`${HTTP_JSON_PATH}/*`) === true
}

/** The body errors Fastify raises before the handler, as the service's RequestBody. */
function bodyError (error: FastifyError, request: RouteRequest): RequestBody | undefined {
  switch (error.code) {
    case 'A2A_CONVERSE_INVALID_JSON':
      return { kind: 'invalid_json' }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { kind: 'unsupported_media_type', contentType: request.headers['content-type'] }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'too_large', limit: request.routeOptions.bodyLimit }
    default:
      return undefined
  }
}

/**
 * Register after `converse`: `app.register(a2aEndpoint, { agents: [{ id: 'demo', executor }] })`. Named for
 * Fastify's dependency checks, and still encapsulated (its parser and error handler stay its own; a `prefix`
 * applies).
 */
export const a2aEndpoint = fp(a2aEndpointPlugin, {
  fastify: '5.x', name: 'a2a-converse-endpoint', dependencies: ['a2a-converse'], encapsulate: true
})
export default a2aEndpoint
