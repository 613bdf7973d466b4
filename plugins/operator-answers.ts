/**
 * The operator API's knowledge-gaps view (docs/knowledge-gaps.md): answers by coverage over a window, and the
 * questions an agent could not answer, grouped. Read from the store's answer log, so every instance on one database
 * answers alike. Registered by operator-api.ts inside its scope.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { inAnswerLogSpan } from 'a2a-converse/runtime'
import { ANSWER_WINDOW_NAMES, decodeGroupCursor, encodeGroupCursor, type AnswerLog, type AnswerWindow } from 'a2a-converse/runtime'
import { agentParams, notFound, type AgentParams, type TraceOf } from './operator-scope.js'

/** Question groups per page of the knowledge-gaps list: default and most. */
export const DEFAULT_GAPS_PAGE_SIZE = 20
export const MAX_GAPS_PAGE_SIZE = 100
/** The window when the query names none. */
export const DEFAULT_ANSWER_WINDOW: AnswerWindow = '24h'

interface WindowQuery { window?: AnswerWindow }
interface GapsQuery extends WindowQuery { limit?: string, cursor?: string }

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

/** GET …/answers and …/answers/unanswered; without an answer log both answer 404 saying so. */
export function answerRoutes (fastify: FastifyInstance, agents: ReadonlySet<string>, answers: AnswerLog | undefined, traceOf: TraceOf): void {
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
}
