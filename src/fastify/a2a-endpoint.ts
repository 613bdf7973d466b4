/**
 * `a2aEndpoint`: A2A 1.0 JSON-RPC at POST /a2a/:agentId, any @a2a-js/sdk AgentExecutor behind it.
 *
 * Encapsulated on purpose (not fastify-plugin wrapped): its JSON body parser and error handler apply to its
 * own route only, so malformed JSON, a wrong Content-Type or an oversized body get JSON-RPC error bodies here
 * without changing how the rest of the app answers. Needs the `converse` plugin registered first: the route
 * is marked `config: { converse: true }`, so negotiation, the A2A-Extensions echo and the decoration of JSON
 * replies come from there; SSE frames are decorated here through `fastify.converse.transformResult`.
 */
import createError from '@fastify/error'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { A2ADispatcher } from '../jsonrpc/dispatch.js'
import type { CheckedRequest } from '../jsonrpc/check-request.js'
import {
  contentTypeNotSupported, errorResponse, internalError, invalidRequest, parseError
} from '../jsonrpc/errors.js'
import { STREAMING_METHODS } from '../jsonrpc/methods.js'
import { relayTaskEvents } from '../jsonrpc/task-event-relay.js'
import { A2A_VERSION_HEADER, requestedVersion } from '../jsonrpc/version.js'
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { openSseStream, type SseStream } from './a2a-endpoint-sse.js'
import {
  resolveEndpointOptions, type A2AEndpointAgentOptions, type A2AEndpointOptions
} from './a2a-endpoint-options.js'
import type { ConverseRequestState } from './converse-plugin.js'

export type { A2AEndpointOptions, A2AEndpointAgentOptions, A2AEndpointCapabilities } from './a2a-endpoint-options.js'

/** The body is not JSON: answered with HTTP 400 and a -32700 body. */
export const InvalidJsonBodyError = createError('A2A_CONVERSE_INVALID_JSON', 'Invalid JSON payload', 400)

/** The JSON-RPC request media types accepted (application/a2a+json leniently, see docs/a2a-endpoint.md). */
export const ACCEPTED_CONTENT_TYPES: readonly string[] = Object.freeze(['application/json', 'application/a2a+json'])

interface EndpointAgent {
  dispatcher: A2ADispatcher
  extendedCard?: A2AEndpointAgentOptions['extendedCard']
}

type RouteRequest = FastifyRequest<{ Params: { agentId: string } }>

async function a2aEndpointPlugin (fastify: FastifyInstance, options: A2AEndpointOptions): Promise<void> {
  const resolved = resolveEndpointOptions(options, fastify.hasDecorator('converse') ? fastify.converse : undefined)
  const events = resolved.events
  const agents = new Map<string, EndpointAgent>(resolved.agents.map((agent) => [agent.id, {
    dispatcher: new A2ADispatcher({ card: agent.card, executor: agent.executor, taskStore: agent.taskStore, events }),
    extendedCard: agent.extendedCard
  }]))
  const streams = new Set<SseStream>()

  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser([...ACCEPTED_CONTENT_TYPES], { parseAs: 'string' }, (_request, body, done) => {
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

  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    switch (error.code) {
      case 'A2A_CONVERSE_INVALID_JSON':
        return reply.code(400).send(errorResponse(null, parseError()))
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(errorResponse(null, contentTypeNotSupported(request.headers['content-type'])))
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(errorResponse(null, invalidRequest(
          [{ field: 'request', description: `must not exceed ${request.routeOptions.bodyLimit} bytes` }], 'Request payload too large')))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      // A client error raised elsewhere (an auth hook, a bad Content-Length): its status, a JSON-RPC body.
      return reply.code(status).send(errorResponse(null, invalidRequest([{ field: 'request', description: error.message }], error.message)))
    }
    request.log.error({ err: error }, 'A2A endpoint failed')
    return reply.code(500).send(errorResponse(null, internalError()))
  })

  // Open streams end cleanly when the app closes, so close() (and the process) can finish.
  fastify.addHook('preClose', async () => {
    const open = [...streams]
    for (const stream of open) stream.close()
    await Promise.all(open.map((stream) => stream.done))
  })

  async function requireAgent (request: RouteRequest, reply: FastifyReply): Promise<unknown> {
    const agentId = request.params.agentId
    if (agents.has(agentId)) return undefined
    return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `unknown agent "${agentId.slice(0, 128)}"` })
  }

  async function handle (request: RouteRequest, reply: FastifyReply): Promise<unknown> {
    const agent = agents.get(request.params.agentId) as EndpointAgent
    if (request.body === undefined) {
      // POST without Content-Type and without a body: nothing to parse.
      return reply.code(400).send(errorResponse(null, parseError()))
    }
    const state = request.converse as ConverseRequestState
    const version = requestedVersion(request.headers['a2a-version'], (request.query as Record<string, unknown>)[A2A_VERSION_HEADER])
    const checked = agent.dispatcher.check(request.body, { version, activated: state.activated })
    if (!checked.ok) return checked.response
    const rpc = checked.request
    const context = agent.dispatcher.createContext(rpc, { requestedExtensions: state.requested, version, headers: request.headers })
    if (STREAMING_METHODS.has(rpc.method)) return stream(request, reply, agent, rpc, context)
    const extendedCard = agent.extendedCard
    return agent.dispatcher.call(rpc, context, {
      log: request.log,
      extendedCard: extendedCard === undefined ? undefined : () => extendedCard(request)
    })
  }

  async function stream (request: RouteRequest, reply: FastifyReply, agent: EndpointAgent, rpc: CheckedRequest, context: ServerCallContext) {
    let { source, release } = agent.dispatcher.open(rpc, context)
    if (events !== undefined) {
      const releaseSdk = release
      const relay = relayTaskEvents(source, events, rpc.method === 'SubscribeToTask' ? rpc.params.id as string : undefined, releaseSdk)
      source = relay.source
      release = () => {
        releaseSdk()
        relay.release()
      }
    }
    reply.hijack()
    const sse = openSseStream({
      raw: reply.raw,
      headers: reply.getHeaders(),
      id: rpc.id,
      source,
      release,
      transform: (result) => fastify.converse.transformResult(request, rpc.method, result),
      toError: (error) => agent.dispatcher.toError(error, rpc, request.log)
    })
    streams.add(sse)
    await sse.done
    streams.delete(sse)
  }

  fastify.post<{ Params: { agentId: string } }>('/a2a/:agentId', {
    config: { converse: true },
    bodyLimit: options.bodyLimit,
    onRequest: requireAgent
  }, handle)
}

/** Register after `converse`: `app.register(a2aEndpoint, { agents: [{ id: 'demo', executor }] })`. */
export const a2aEndpoint = a2aEndpointPlugin
export default a2aEndpoint
