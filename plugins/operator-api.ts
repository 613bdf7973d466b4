import { createHash, timingSafeEqual } from 'node:crypto'
import { Ajv } from 'ajv'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { InvalidOptionError } from '../src/core/errors.js'
import type { Inbox } from '../src/runtime/inbox.js'

export interface OperatorApiOptions {
  /** Bearer token operators send; compared in constant time. */
  apiKey: string
  /** Agent ids served by this gateway (unknown ids answer 404). */
  agentIds: readonly string[]
  inbox: Inbox
}

interface ConversationParams { agentId: string, contextId: string }

const params = {
  type: 'object',
  required: ['agentId', 'contextId'],
  properties: {
    agentId: { type: 'string', maxLength: 128 },
    contextId: { type: 'string', minLength: 1, maxLength: 256 }
  }
} as const

const replyBody = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: { text: { type: 'string', minLength: 1, maxLength: 20000 } }
} as const

/**
 * Bodies and parameters are checked as sent: Fastify's default validator would turn `{"text": 42}` into "42" and
 * drop unknown members silently; here both are a 400.
 */
const ajv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: false })

function digest (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/**
 * The human-takeover API under /api/v1/agents/:agentId/conversations/:contextId. Encapsulated: its auth hook
 * guards only these routes. Register it only when an operator key is configured.
 */
export default async function operatorApi (fastify: FastifyInstance, options: OperatorApiOptions): Promise<void> {
  if (typeof options.apiKey !== 'string' || options.apiKey.length < 16) {
    throw new InvalidOptionError('apiKey', 'must be a string of at least 16 characters')
  }
  const expected = digest(options.apiKey)
  const agents = new Set(options.agentIds)
  const { inbox } = options
  fastify.setValidatorCompiler(({ schema }) => ajv.compile(schema))

  fastify.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined
    // Hash both sides so the comparison is constant-time whatever the token's length.
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      reply.header('www-authenticate', 'Bearer')
      return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'a valid operator bearer token is required' })
    }
  })

  // The state store unreachable: 503 (try again), not a 500; the driver's detail stays in the log.
  fastify.setErrorHandler((error: Error & { code?: string, statusCode?: number }, request, reply) => {
    if (error.code === 'A2A_CONVERSE_STORE_UNAVAILABLE') {
      request.log.warn({ err: error }, 'operator API: the state store is unreachable')
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: 'the state store is unreachable; try again later' })
    }
    return reply.send(error)
  })

  const notFound = (reply: FastifyReply, what: string) =>
    reply.code(404).send({ statusCode: 404, error: 'Not Found', message: what })

  const base = '/api/v1/agents/:agentId/conversations/:contextId'

  fastify.get<{ Params: ConversationParams }>(base, { schema: { params } }, async (request, reply) => {
    const { agentId, contextId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    const view = await inbox.view(agentId, contextId)
    return view ?? notFound(reply, `unknown conversation "${contextId}"`)
  })

  for (const action of ['takeover', 'release'] as const) {
    fastify.post<{ Params: ConversationParams }>(`${base}/${action}`, { schema: { params } }, async (request, reply) => {
      const { agentId, contextId } = request.params
      if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
      const view = action === 'takeover' ? await inbox.takeover(agentId, contextId) : await inbox.release(agentId, contextId)
      return view ?? notFound(reply, `unknown conversation "${contextId}"`)
    })
  }

  fastify.post<{ Params: ConversationParams, Body: { text: string } }>(`${base}/messages`, {
    schema: { params, body: replyBody }
  }, async (request, reply) => {
    const { agentId, contextId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    const result = await inbox.reply(agentId, contextId, request.body.text)
    if (result === undefined) return notFound(reply, `unknown conversation "${contextId}"`)
    if (result === 'not_human_owned') {
      return reply.code(409).send({ statusCode: 409, error: 'Conflict', message: 'take the conversation over before replying' })
    }
    return reply.code(201).send(result)
  })
}
