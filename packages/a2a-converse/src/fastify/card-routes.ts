/**
 * The converse plugin's GET routes: each agent's well-known cards (1.0's and 0.3's, the default agent's at the root
 * too), the signing key's JWKS, and the tools route. They read what the plugin decorated (`fastify.converse`), so a
 * card follows an agent put or removed at runtime.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { V03_CARD_PATH, wellKnownCardVersion } from '../core/card.js'
import { JWKS_PATH } from '../auth/card-signer.js'
import type { SigningKey } from '../auth/signing-key.js'
import { unknownAgentBody } from '../bindings/jsonrpc/binding.js'
import { cardReply, JWKS_HEADERS, notServed03Body } from '../http/card-cache.js'
import { requestHostErrorBody } from '../http/request-origin.js'

/** An agent's card as a request sees it, in the version asked (the plugin's cardFor). */
export type VersionedCardOf = (agentId: string, request: FastifyRequest, version: '0.3' | '1.0') => Record<string, unknown> | undefined

/** Whether an agent's A2A endpoint answers A2A 0.3 too (its cards then list or are 0.3's). */
export function serves03 (fastify: FastifyInstance, agentId: string): boolean {
  return fastify.converse.a2aServices.get(agentId)?.versions.includes('0.3') === true
}

/**
 * A card, signed last when signing (its JWKS under the card's own base URL), with its cache validators
 * (http/card-cache.ts), or 304 when the client holds it already. `Vary: A2A-Version` where the header picks the card.
 */
async function sendCard (fastify: FastifyInstance, request: FastifyRequest, reply: FastifyReply, agentId: string, card: Record<string, unknown>): Promise<FastifyReply> {
  const { signCard, cardsFromRequest } = fastify.converse
  const served = signCard === undefined ? card : await signCard(card, request)
  const { status, headers, body } = cardReply(served, request.headers['if-none-match'], serves03(fastify, agentId), cardsFromRequest)
  return reply.code(status).headers(headers).send(body)
}

/**
 * The well-known card routes: the version by the request's header (none: 1.0's, or 0.3's for a `compat` agent); the
 * `/v0.3/` ones: 0.3's card, for 0.3 clients that send none.
 */
function cardRoute (fastify: FastifyInstance, cardFor: VersionedCardOf, version?: '0.3') {
  const { agents, defaultAgentId, hostRefusal } = fastify.converse
  return async (request: FastifyRequest<{ Params: { agentId?: string } }>, reply: FastifyReply) => {
    const agentId = request.params.agentId ?? defaultAgentId
    const refused = hostRefusal(request)
    if (refused !== undefined) return reply.code(400).send(requestHostErrorBody(refused))
    const card = cardFor(agentId, request, version ?? wellKnownCardVersion(request.headers['a2a-version'], agents.get(agentId)?.wellKnownCard === 'compat'))
    if (card === undefined) return reply.code(404).send(unknownAgentBody(agentId))
    if (version !== undefined && !serves03(fastify, agentId)) return reply.code(404).send(notServed03Body(agentId))
    return await sendCard(fastify, request, reply, agentId, card)
  }
}

/** Registers the routes under the plugin's mount path; the default agent's well-known cards unless `defaultAgentCard` is false. */
export function addCardRoutes (
  fastify: FastifyInstance, cardFor: VersionedCardOf, defaultAgentCard: boolean | undefined, cardSigning: SigningKey | undefined
): void {
  const { agents, defaultAgentId, mountPath } = fastify.converse
  fastify.get(`${mountPath}/a2a/:agentId/.well-known/agent-card.json`, cardRoute(fastify, cardFor))
  fastify.get(`${mountPath}/a2a/:agentId${V03_CARD_PATH}`, cardRoute(fastify, cardFor, '0.3'))
  if (defaultAgentCard !== false) {
    fastify.get(`${mountPath}/.well-known/agent-card.json`, cardRoute(fastify, cardFor))
    fastify.get(`${mountPath}${V03_CARD_PATH}`, cardRoute(fastify, cardFor, '0.3'))
  }
  if (cardSigning !== undefined) {
    const jwks = JSON.stringify(cardSigning.jwks)
    fastify.get(`${mountPath}${JWKS_PATH}`, async (_request, reply) => await reply.headers(JWKS_HEADERS).send(jwks))
  }
  fastify.get<{ Querystring: { agentId?: string } }>(`${mountPath}/api/v1/mcp/converse/tools`, async (request, reply) => {
    const agentId = request.query.agentId ?? defaultAgentId
    const agent = agents.get(agentId)
    if (agent === undefined) return reply.code(404).send(unknownAgentBody(agentId))
    return { tools: agent.tools }
  })
}
