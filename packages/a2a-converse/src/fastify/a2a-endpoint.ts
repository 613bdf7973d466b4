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
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createBoundA2AService, type BoundA2AService } from '../bindings/index.js'
import { HTTP_JSON_PATH, type HttpJsonReply } from '../bindings/http-json/binding.js'
import { unknownAgentBody, type A2AReply, type RequestBody } from '../bindings/jsonrpc/binding.js'
import { endpointAuthentication, endpointBackend, endpointBackends } from '../http/endpoint-backends.js'
import { resolveEndpointAgent } from '../http/endpoint-agent.js'
import { resolveEndpointOptions, type ResolvedEndpointOptions } from '../http/endpoint-options.js'
import { ACCEPTED_CONTENT_TYPES } from '../http/request-body.js'
import type { A2AEndpointOptions } from './a2a-endpoint-options.js'
import { endpointErrorHandler, hijackedStreams, parseJsonBody, rawTail, type Answer, type RouteRequest } from './a2a-endpoint-io.js'
import type { LiveEndpoint } from './converse-plugin.js'

export type { A2AEndpointOptions, A2AEndpointAgentOptions, A2AEndpointCapabilities } from './a2a-endpoint-options.js'
export { InvalidJsonBodyError } from './a2a-endpoint-io.js'

export { ACCEPTED_CONTENT_TYPES }

/** Agents put at runtime (converse.putAgent) or removed, on this endpoint's service and the MCP door's map. */
function liveEndpoint (fastify: FastifyInstance, resolved: ResolvedEndpointOptions<FastifyRequest>, service: BoundA2AService): LiveEndpoint {
  const { a2aServices } = fastify.converse
  return {
    put: (agent) => {
      const checked = resolveEndpointAgent(agent, 'agent', fastify.converse, resolved.authenticator)
      service.putAgent(checked.id, endpointBackend(checked, resolved.events, fastify.converse.signCard), checked.access === 'authenticated' ? resolved.authenticator : undefined)
      a2aServices.set(checked.id, service)
    },
    remove: (agentId) => {
      if (!service.removeAgent(agentId)) return
      if (a2aServices.get(agentId) === service) a2aServices.delete(agentId)
    }
  }
}

/**
 * The door's routes: JSON-RPC at /a2a/:agentId (and /, for a root agent), HTTP+JSON under /a2a/:agentId/rest; an
 * unknown agent answered 404 before the body is read.
 */
function addRoutes (
  fastify: FastifyInstance, service: BoundA2AService, bodyLimit: number | undefined, rootAgent: boolean, answer: Answer, answerHttpJson: Answer
): void {
  const handler = (request: RouteRequest, reply: FastifyReply) =>
    answer(request, reply, request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body })
  const route = {
    bodyLimit,
    // Unknown agents are answered before the body is read.
    onRequest: async (request: RouteRequest, reply: FastifyReply) => {
      if (!service.serves(request.params.agentId as string)) return reply.code(404).send(unknownAgentBody(request.params.agentId as string))
    }
  }
  // With a trailing slash too: clients (the conformance kit's among them) post to `<interface url>/`.
  fastify.post('/a2a/:agentId', route, handler)
  fastify.post('/a2a/:agentId/', route, handler)
  if (rootAgent) fastify.post('/', { bodyLimit }, handler)
  fastify.route<{ Params: { agentId: string } }>({
    // Every verb a route might be asked with: the binding answers 404 / 405 for what it does not route.
    method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'],
    url: `/a2a/:agentId${HTTP_JSON_PATH}/*`,
    bodyLimit,
    onRequest: async (request, reply) => {
      if (!service.serves(request.params.agentId)) return reply.code(404).send(unknownAgentBody(request.params.agentId))
    },
    handler: async (request, reply) =>
      await answerHttpJson(request, reply, request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body })
  })
}

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
  fastify.converse.liveEndpoints.push(liveEndpoint(fastify, resolved, service))
  const streams = hijackedStreams()
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser([...ACCEPTED_CONTENT_TYPES], { parseAs: 'string' }, parseJsonBody)
  fastify.addHook('preClose', streams.closeAll)

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
    return await streams.write(reply, result, controller)
  }

  const answer = async (request: RouteRequest, reply: FastifyReply, body: RequestBody): Promise<unknown> =>
    await serve(reply, async (signal) => await service.handle({ ...fromDoor(request, signal), body }))

  /** An HTTP+JSON request: the path after <agent>/rest goes to the binding. */
  const answerHttpJson = async (request: RouteRequest, reply: FastifyReply, body: RequestBody): Promise<unknown> =>
    await serve(reply, async (signal) => await service.handleHttpJson({ ...fromDoor(request, signal), httpMethod: request.method, path: rawTail(request), body }))

  fastify.setErrorHandler(endpointErrorHandler(answer, answerHttpJson))

  addRoutes(fastify, service, options.bodyLimit, resolved.rootAgentId !== undefined, answer, answerHttpJson)
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
