/**
 * What every operator route shares, set on the operator API's encapsulated scope: parameters and bodies checked as
 * sent, one HTTP SERVER span per request, the operator key's check, and the state store's unavailability as a 503.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Ajv } from 'ajv'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_CODES, isConverseError } from 'a2a-converse'
import { endHttpServerSpan, startHttpServerSpan } from 'a2a-converse/service'
import type { Context } from 'a2a-converse/service'

/** An agent id in a path (every agent route's parameters). */
export const agentParams = {
  type: 'object',
  required: ['agentId'],
  properties: { agentId: { type: 'string', maxLength: 128 } }
} as const

export interface AgentParams { agentId: string }

/** A 404 with the API's JSON body. */
export const notFound = (reply: FastifyReply, what: string) =>
  reply.code(404).send({ statusCode: 404, error: 'Not Found', message: what })

/**
 * Bodies and parameters are checked as sent: Fastify's default validator would turn `{"text": 42}` into "42" and
 * drop unknown members silently; here both are a 400.
 */
const ajv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: false })

function digest (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** A request's span context while its span is recorded (the parent of the store calls it makes), else undefined. */
export type TraceOf = (request: FastifyRequest) => Context | undefined

/** Sets the scope's validator and hooks; returns where each request's span context is found. */
export function operatorScope (fastify: FastifyInstance, apiKey: string, agents: ReadonlySet<string>): TraceOf {
  const expected = digest(apiKey)
  fastify.setValidatorCompiler(({ schema }) => ajv.compile(schema))

  // One HTTP SERVER span per request (docs/observability.md, "Spans"), started before the key is checked: a 401 is a
  // request too. It ends when the response closes: sent, a hijacked live stream ended, or the client gone first.
  const traced = new WeakMap<FastifyRequest, Context | undefined>()
  const startRequestSpan = (request: FastifyRequest, startTime?: number) => {
    const { agentId } = request.params as { agentId?: string }
    return startHttpServerSpan({
      method: request.method,
      route: request.routeOptions.url,
      scheme: request.protocol,
      headers: request.headers,
      agentId: agentId !== undefined && agents.has(agentId) ? agentId : undefined,
      startTime
    })
  }
  fastify.addHook('onRequest', (request, reply, done) => {
    const { span, context } = startRequestSpan(request)
    // A span not recorded (no SDK: the API's no-op; or sampled out) has nothing to end: no listener for it, and
    // nothing under it.
    const recording = span.isRecording()
    traced.set(request, recording ? context : undefined)
    if (recording) reply.raw.once('close', () => { endHttpServerSpan(span, reply.raw.headersSent ? reply.raw.statusCode : undefined) })
    done()
  })
  // A hook of an enclosing scope answered before ours ran (the gateway app's rate limit, a 429): its span, from the
  // request's start, ends here.
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!traced.has(request)) endHttpServerSpan(startRequestSpan(request, Date.now() - reply.elapsedTime).span, reply.statusCode)
    done()
  })

  fastify.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization
    // The scheme word is case-insensitive (RFC 9110 §11.1); the token is compared as sent.
    const token = typeof header === 'string' && header.slice(0, 7).toLowerCase() === 'bearer ' ? header.slice(7) : undefined
    // Hash both sides so the comparison is constant-time whatever the token's length.
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      reply.header('www-authenticate', 'Bearer')
      return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'a valid operator bearer token is required' })
    }
  })

  // The state store unreachable: 503 (try again), not a 500; the driver's detail stays in the log.
  fastify.setErrorHandler((error: Error & { code?: string, statusCode?: number }, request, reply) => {
    if (isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE)) {
      request.log.warn({ err: error }, 'operator API: the state store is unreachable')
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: 'the state store is unreachable; try again later' })
    }
    return reply.send(error)
  })
  return (request) => traced.get(request)
}
