import type { FastifyInstance } from 'fastify'
import { InvalidOptionError } from 'a2a-converse'
import { OWNERSHIP_STATES, type OwnershipState } from 'a2a-converse/core'
import type { Inbox } from 'a2a-converse/runtime'
import { MAX_CONVERSATION_KEY_LENGTH } from 'a2a-converse/runtime'
import type { AnswerLog } from 'a2a-converse/runtime'
import { agentRoutes, type AgentAdminOptions } from './operator-agents.js'
import { answerRoutes } from './operator-answers.js'
import { agentParams, notFound, operatorScope, type AgentParams, type TraceOf } from './operator-scope.js'
import { DEFAULT_KEEP_ALIVE_MS, DEFAULT_MAX_BUFFERED_BYTES, eventsRoute } from './operator-events.js'

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
interface ListQuery { limit?: string, cursor?: string, owner?: OwnershipState, needsPerson?: 'true' | 'false' }

/** Conversations per page of the list: default and most. */
export const DEFAULT_PAGE_SIZE = 20
export const MAX_PAGE_SIZE = 100

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

function positiveInteger (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(name, 'must be a positive integer')
  return value
}

/** One conversation's routes: its view, its trace, takeover and release, and a person's reply. */
function conversationRoutes (fastify: FastifyInstance, agents: ReadonlySet<string>, inbox: Inbox, traceOf: TraceOf): void {
  const base = '/api/v1/agents/:agentId/conversations/:contextId'
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

/**
 * The operator API under /api/v1/agents/:agentId: human takeover of a conversation, the list of conversations, one
 * conversation's trace and the live stream of conversation events (what the inbox page uses). Encapsulated: its auth
 * hook guards only these routes. Register it only when an operator key is configured.
 */
export default async function operatorApi (fastify: FastifyInstance, options: OperatorApiOptions): Promise<void> {
  if (typeof options.apiKey !== 'string' || options.apiKey.length < 16) {
    throw new InvalidOptionError('apiKey', 'must be a string of at least 16 characters')
  }
  // A live set is read as it is at each request (the gateway's agents changing at runtime: src/gateway/live-agents.ts).
  const agents: ReadonlySet<string> = options.agentIds instanceof Set ? options.agentIds : new Set(options.agentIds)
  const { inbox } = options
  const traceOf = operatorScope(fastify, options.apiKey, agents)

  const events = {
    maxStreams: positiveInteger('maxStreams', options.maxStreams, 100),
    keepAliveMs: positiveInteger('keepAliveMs', options.keepAliveMs, DEFAULT_KEEP_ALIVE_MS),
    maxBufferedBytes: positiveInteger('maxBufferedBytes', options.maxBufferedBytes, DEFAULT_MAX_BUFFERED_BYTES)
  }

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

  answerRoutes(fastify, agents, options.answers, traceOf)
  eventsRoute(fastify, agents, inbox, events)
  conversationRoutes(fastify, agents, inbox, traceOf)
}
