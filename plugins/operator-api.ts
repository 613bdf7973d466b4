import { createHash, timingSafeEqual } from 'node:crypto'
import { Ajv } from 'ajv'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_CODES, InvalidOptionError, isConverseError } from 'a2a-converse'
import { OWNERSHIP_STATES, type OwnershipState } from 'a2a-converse/core'
import type { Inbox } from 'a2a-converse/runtime'
import { MAX_CONVERSATION_KEY_LENGTH } from 'a2a-converse/runtime'
import { endHttpServerSpan, startHttpServerSpan } from 'a2a-converse/service'
import type { Context } from 'a2a-converse/service'
import { inAnswerLogSpan } from 'a2a-converse/runtime'
import { ANSWER_WINDOW_NAMES, decodeGroupCursor, encodeGroupCursor, type AnswerLog, type AnswerWindow } from 'a2a-converse/runtime'
import { agentRoutes, type AgentAdminOptions } from './operator-agents.js'
import {
  DEFAULT_KEEP_ALIVE_MS, DEFAULT_MAX_BUFFERED_BYTES, followConversations, type ConversationStreams
} from './operator-events.js'

export interface OperatorApiOptions {
  /** Bearer token operators send; compared in constant time. */
  apiKey: string
  /** Agent ids served by this gateway (unknown ids answer 404); a Set is read live, as it is at each request. */
  agentIds: readonly string[] | ReadonlySet<string>
  inbox: Inbox
  /**
   * The answer log of the conversation store (its `answers`): the knowledge-gaps view (GET …/answers,
   * …/answers/unanswered). Without one those routes answer 404 saying so.
   */
  answers?: AnswerLog
  /** Live streams (GET …/events) open at once; one more answers 503. Default 100. */
  maxStreams?: number
  /** How often an idle live stream gets a keep-alive comment. Default 25000 ms. */
  keepAliveMs?: number
  /** A live stream whose client left more than this unread is ended. Default 1 MiB. */
  maxBufferedBytes?: number
  /**
   * The agent routes (operator-agents.ts: publish, replace, unpublish, …) over the state store's agents. Without,
   * GET /api/v1/agents lists the served agents' ids only.
   */
  agentAdmin?: AgentAdminOptions
}

interface ConversationParams { agentId: string, contextId: string }
interface AgentParams { agentId: string }
interface WindowQuery { window?: AnswerWindow }
interface GapsQuery extends WindowQuery { limit?: string, cursor?: string }
interface ListQuery { limit?: string, cursor?: string, owner?: OwnershipState, needsPerson?: 'true' | 'false' }

/** Conversations per page of the list: default and most. */
export const DEFAULT_PAGE_SIZE = 20
export const MAX_PAGE_SIZE = 100

const agentParams = {
  type: 'object',
  required: ['agentId'],
  properties: { agentId: { type: 'string', maxLength: 128 } }
} as const

/** Query values arrive as strings; they are checked as strings (no coercion), then read. */
const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
    // A previous page's `next`: a position in the store's write order.
    cursor: { type: 'string', pattern: '^[1-9][0-9]{0,14}$' },
    owner: { type: 'string', enum: OWNERSHIP_STATES },
    needsPerson: { type: 'string', enum: ['true', 'false'] }
  }
} as const

/** Question groups per page of the knowledge-gaps list: default and most. */
export const DEFAULT_GAPS_PAGE_SIZE = 20
export const MAX_GAPS_PAGE_SIZE = 100
/** The window when the query names none. */
export const DEFAULT_ANSWER_WINDOW: AnswerWindow = '24h'

const windowQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { window: { type: 'string', enum: ANSWER_WINDOW_NAMES } }
} as const

const gapsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    window: { type: 'string', enum: ANSWER_WINDOW_NAMES },
    limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
    // A previous page's `next` (base64url; a key of 200 characters at most fits well within the bound).
    cursor: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[A-Za-z0-9_-]+$' }
  }
} as const

const params = {
  type: 'object',
  required: ['agentId', 'contextId'],
  properties: {
    agentId: { type: 'string', maxLength: 128 },
    // A conversation's key (a contextId within the A2A check's id limit, or a caller's key: conversationKey) and
    // no U+0000: no conversation can have another one.
    contextId: { type: 'string', minLength: 1, maxLength: MAX_CONVERSATION_KEY_LENGTH, pattern: '^[^\\u0000]*$' }
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

function positiveInteger (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer')
  return value
}

function digest (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/**
 * The operator API under /api/v1/agents/:agentId: human takeover of a conversation, the list of conversations, one
 * conversation's trace and the live stream of conversation events (what the inbox page uses). Encapsulated: its auth
 * hook guards only these routes. Register it only when an operator key is configured.
 */
export default async function operatorApi (fastify: FastifyInstance, options: OperatorApiOptions): Promise<void> {
  if (typeof options.apiKey !== 'string' || options.apiKey.length < 16) {
    throw new InvalidOptionError('apiKey', 'must be a string of at least 16 characters')
  }
  const expected = digest(options.apiKey)
  // A live set is read as it is at each request (the gateway's agents changing at runtime: src/gateway/live-agents.ts).
  const agents: ReadonlySet<string> = options.agentIds instanceof Set ? options.agentIds : new Set(options.agentIds)
  const { inbox } = options
  fastify.setValidatorCompiler(({ schema }) => ajv.compile(schema))

  const maxStreams = positiveInteger('maxStreams', options.maxStreams, 100)
  const keepAliveMs = positiveInteger('keepAliveMs', options.keepAliveMs, DEFAULT_KEEP_ALIVE_MS)
  const maxBufferedBytes = positiveInteger('maxBufferedBytes', options.maxBufferedBytes, DEFAULT_MAX_BUFFERED_BYTES)
  const streams: ConversationStreams = new Set()
  // Open live streams end when the server closes (they would hold it open).
  fastify.addHook('preClose', async () => { for (const stream of streams) stream.close() })

  // One HTTP SERVER span per request (docs/observability.md, "Spans"), started before the key is checked: a 401 is a
  // request too. It ends when the response closes: sent, a hijacked live stream ended, or the client gone first.
  // `traced` holds each request's span context while its span is recorded: the parent of the store calls it makes.
  const traced = new WeakMap<FastifyRequest, Context | undefined>()
  const traceOf = (request: FastifyRequest): Context | undefined => traced.get(request)
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

  const notFound = (reply: FastifyReply, what: string) =>
    reply.code(404).send({ statusCode: 404, error: 'Not Found', message: what })

  const base = '/api/v1/agents/:agentId/conversations/:contextId'

  // The agents an operator can pick (and a cheap way for the inbox to check its key); with the agent routes, every
  // agent with its state.
  if (options.agentAdmin !== undefined) {
    agentRoutes(fastify, options.agentAdmin)
  } else {
    fastify.get('/api/v1/agents', async () => ({ agents: [...agents].map((id) => ({ id })) }))
  }

  fastify.get<{ Params: AgentParams, Querystring: ListQuery }>('/api/v1/agents/:agentId/conversations', {
    schema: { params: agentParams, querystring: listQuery }
  }, async (request, reply) => {
    const { agentId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    const { limit, cursor, owner, needsPerson } = request.query
    const page = await inbox.list(agentId, {
      limit: limit === undefined ? DEFAULT_PAGE_SIZE : Number(limit),
      before: cursor === undefined ? undefined : Number(cursor),
      ownership: owner,
      needsPerson: needsPerson === undefined ? undefined : needsPerson === 'true'
    }, traceOf(request))
    return { conversations: page.conversations, ...(page.next !== undefined ? { next: String(page.next) } : {}) }
  })

  // The knowledge-gaps view (docs/knowledge-gaps.md): answers by coverage over a window, and the questions the agent
  // could not answer, grouped. Read from the store's answer log, so every instance on one database answers alike.
  const answers = options.answers
  const noAnswerLog = (reply: FastifyReply) => notFound(reply, 'this gateway\'s conversation store keeps no answer log')

  fastify.get<{ Params: AgentParams, Querystring: WindowQuery }>('/api/v1/agents/:agentId/answers', {
    schema: { params: agentParams, querystring: windowQuery }
  }, async (request, reply) => {
    const { agentId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    if (answers === undefined) return noAnswerLog(reply)
    const window = request.query.window ?? DEFAULT_ANSWER_WINDOW
    return await inAnswerLogSpan(answers, 'series', agentId, traceOf(request), async () => await answers.series(agentId, window))
  })

  fastify.get<{ Params: AgentParams, Querystring: GapsQuery }>('/api/v1/agents/:agentId/answers/unanswered', {
    schema: { params: agentParams, querystring: gapsQuery }
  }, async (request, reply) => {
    const { agentId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    if (answers === undefined) return noAnswerLog(reply)
    const { window = DEFAULT_ANSWER_WINDOW, limit, cursor } = request.query
    const after = cursor === undefined ? undefined : decodeGroupCursor(cursor)
    if (cursor !== undefined && after === undefined) {
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: 'querystring/cursor is not a cursor this API gave (a page\'s `next`)' })
    }
    const query = { window, limit: limit === undefined ? DEFAULT_GAPS_PAGE_SIZE : Number(limit), after }
    const page = await inAnswerLogSpan(answers, 'unanswered', agentId, traceOf(request), async () => await answers.unanswered(agentId, query))
    return { window, questions: page.groups, ...(page.next !== undefined ? { next: encodeGroupCursor(page.next) } : {}) }
  })

  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId/events', { schema: { params: agentParams } }, async (request, reply) => {
    const { agentId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    if (streams.size >= maxStreams) {
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: `too many open inbox streams (${maxStreams}); try again later` })
    }
    reply.hijack()
    followConversations({ raw: reply.raw, agentId, inbox, streams, headers: reply.getHeaders(), keepAliveMs, maxBufferedBytes })
  })

  fastify.get<{ Params: ConversationParams }>(`${base}/trace`, { schema: { params } }, async (request, reply) => {
    const { agentId, contextId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    const trace = await inbox.trace(agentId, contextId, traceOf(request))
    return trace ?? notFound(reply, `unknown conversation "${contextId}"`)
  })

  fastify.get<{ Params: ConversationParams }>(base, { schema: { params } }, async (request, reply) => {
    const { agentId, contextId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    const view = await inbox.view(agentId, contextId, traceOf(request))
    return view ?? notFound(reply, `unknown conversation "${contextId}"`)
  })

  for (const action of ['takeover', 'release'] as const) {
    fastify.post<{ Params: ConversationParams }>(`${base}/${action}`, { schema: { params } }, async (request, reply) => {
      const { agentId, contextId } = request.params
      if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
      const view = action === 'takeover' ? await inbox.takeover(agentId, contextId, traceOf(request)) : await inbox.release(agentId, contextId, traceOf(request))
      return view ?? notFound(reply, `unknown conversation "${contextId}"`)
    })
  }

  fastify.post<{ Params: ConversationParams, Body: { text: string } }>(`${base}/messages`, {
    schema: { params, body: replyBody }
  }, async (request, reply) => {
    const { agentId, contextId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    // An unpaired surrogate becomes U+FFFD, as in an A2A message's text (packages/a2a-converse/src/protocol/well-formed.ts).
    const result = await inbox.reply(agentId, contextId, request.body.text.toWellFormed(), traceOf(request))
    if (result === undefined) return notFound(reply, `unknown conversation "${contextId}"`)
    if (result === 'not_human_owned') {
      return reply.code(409).send({ statusCode: 409, error: 'Conflict', message: 'take the conversation over before replying' })
    }
    if (result === 'inbox_full') {
      return reply.code(409).send({
        statusCode: 409,
        error: 'Conflict',
        message: 'the conversation already holds the most undelivered replies it can keep; they reach the client with its next message'
      })
    }
    return reply.code(201).send(result)
  })
}
