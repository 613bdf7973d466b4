import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  baseUrlOf, createConverseExtension, normalizeMountPath,
  type BaseUrlOption, type ConverseAgentOptions, type ConverseExtension, type ConverseExtensionOptions, type ResolvedAgent
} from '../core/converse-extension.js'
import type { EnvelopeDecorator } from '../core/decorate.js'
import { InvalidOptionError } from '../core/errors.js'
import { createCardSigner, JWKS_PATH } from '../auth/card-signer.js'
import { isSigningKey, type SigningKey } from '../auth/signing-key.js'
import { publicHostList, requestOrigin, RequestHostError } from '../http/request-origin.js'
import type { BoundA2AService } from '../bindings/index.js'
import { cardAsServed, requestedCardVersion } from '../core/card.js'
import { addCardRoutes, serves03 } from './card-routes.js'
import { addConverseHooks } from './converse-hooks.js'
import type { EndpointAgentOptions } from '../http/endpoint-options.js'

export type { AgentCardInput, ResolvedAgent } from '../core/converse-extension.js'
export type { ConverseAgentOptions }

export type UrlOption = BaseUrlOption<FastifyRequest>

export interface ConversePluginOptions extends ConverseExtensionOptions {
  /**
   * Public base URL written into cards. Default: the request's protocol and host (trustProxy-aware), checked (http or
   * https, a host[:port] and nothing else: else 400) and the card then sent `Cache-Control: private`.
   */
  publicUrl?: UrlOption
  /**
   * With the default publicUrl, the hosts (host or host:port) a request may name for the card's URLs; another is 400.
   * Default: any valid host.
   */
  publicHosts?: readonly string[]
  /** Base URL of the MCP door: an agent's mcp.url is `<mcpPublicUrl>/mcp/a/<id>`. Default: publicUrl. */
  mcpPublicUrl?: UrlOption
  /** Serve the first agent's card at <prefix>/.well-known/agent-card.json too. Default true. */
  defaultAgentCard?: boolean
  /**
   * The gRPC target (`host:port`) of a gRPC door serving these agents (packages/a2a-converse/src/grpc/grpc-door.ts): the cards list it
   * (protocolBinding GRPC, each agent's id as its tenant). Default: none listed.
   */
  grpcUrl?: string
  /**
   * Fastify's register option: the plugin's routes (cards, tools) and the URLs its cards name (A2A endpoint,
   * MCP door) move under it. Register `a2aEndpoint` with the same prefix.
   */
  prefix?: string
  /**
   * Sign every card served (A2A 1.0 §8.4) with this key (`createSigningKey`, a2a-converse/service), and publish its
   * JWKS at `<prefix>/.well-known/jwks.json`, which each signature's `jku` names (docs/signing.md). Default: unsigned.
   */
  cardSigning?: SigningKey
}

/** Per-request negotiation result, on `request.converse` for routes marked `config: { converse }`. */
export interface ConverseRequestState {
  agentId: string
  requested: readonly string[]
  activated: readonly string[]
  /** Whether this request activated the converse extension. */
  active: boolean
}

/** What a route puts in `config.converse`: true (agent from `:agentId`) or a fixed agent. */
export type ConverseRouteConfig = true | { agentId: string }

export interface ConverseApi {
  agents: ReadonlyMap<string, ResolvedAgent>
  defaultAgentId: string
  /**
   * The augmented card of an agent as seen by this request (base URLs from options or the request). Throws a
   * RequestHostError when the request's Host / X-Forwarded-* cannot go into its URLs (`hostRefusal` says first).
   */
  cardFor (agentId: string, request: FastifyRequest): Record<string, unknown> | undefined
  /** Why this request's Host / X-Forwarded-* cannot go into a card's URLs, or undefined when they can (or are unused). */
  hostRefusal (request: FastifyRequest): RequestHostError | undefined
  /** Whether the cards' URLs come from the request (no fixed publicUrl / mcpPublicUrl): cards are then `private`. */
  cardsFromRequest: boolean
  /** Decorates (or strips) one JSON-RPC result for this request; for SSE writers, once per frame. */
  transformResult (request: FastifyRequest, method: string, result: unknown): Promise<unknown> | unknown
  /** The envelope decorator built from the plugin's provider and timeout. */
  decorator: EnvelopeDecorator
  /** The framework-free extension (negotiation, cards, decoration) every door of this app shares. */
  extension: ConverseExtension
  /** The prefix the plugin was registered with ('' when none). */
  mountPath: string
  /**
   * The A2A service answering each agent, filled by `a2aEndpoint` as it registers (the first endpoint serving an
   * agent wins); the MCP door (`mcpEndpoint`) sends its tool calls there.
   */
  a2aServices: Map<string, BoundA2AService>
  /**
   * With `cardSigning`: a card (the extended card an endpoint answers) signed for this request's base URL, as the
   * well-known cards are; undefined without a key.
   */
  signCard?: (card: Record<string, unknown>, request: FastifyRequest) => Promise<Record<string, unknown>>
  /**
   * Serves an agent from now on, or replaces a served one (a new card, routines, executor or backend, access), on
   * every door of this app: its cards (new ETags, signed anew), the tools route, the MCP door, and the first
   * `a2aEndpoint` registered (its JSON-RPC, HTTP+JSON and 0.3 bindings, and a gRPC door over its service). A call in
   * flight finishes on the agent it started with. Checked as the registration options are (InvalidOptionError, and
   * nothing changed). Needs an `a2aEndpoint` registered (and ready).
   */
  putAgent (agent: LiveAgentOptions): void
  /**
   * Stops serving an agent on every door (404, its cards too; the default agent's well-known card included: no other
   * agent takes its place). Calls in flight finish. False when it was not served.
   */
  removeAgent (agentId: string): boolean
  /** The A2A endpoints registered, in order (a2aEndpoint adds itself): the first serves agents put at runtime. */
  liveEndpoints: LiveEndpoint[]
}

/** An agent put at runtime: its declaration (id, card, routines) and how its A2A endpoint serves it. */
export interface LiveAgentOptions extends ConverseAgentOptions, Omit<EndpointAgentOptions<FastifyRequest>, 'id'> {}

/** What an A2A endpoint does with an agent put or removed at runtime (a2aEndpoint's own). */
export interface LiveEndpoint {
  put (agent: EndpointAgentOptions<FastifyRequest>): void
  remove (agentId: string): void
}

declare module 'fastify' {
  interface FastifyInstance { converse: ConverseApi }
  interface FastifyRequest { converse: ConverseRequestState | null }
  interface FastifyContextConfig { converse?: ConverseRouteConfig }
}

/** The plugin's own options, checked at registration (the extension checks its own). */
function checkPluginOptions (options: ConversePluginOptions): void {
  const grpcUrl = options.grpcUrl
  if (grpcUrl !== undefined && (typeof grpcUrl !== 'string' || grpcUrl === '')) throw new InvalidOptionError('grpcUrl', 'must be a non-empty string (host:port)')
  if (options.defaultAgentCard !== undefined && typeof options.defaultAgentCard !== 'boolean') {
    throw new InvalidOptionError('defaultAgentCard', 'must be a boolean')
  }
  if (options.cardSigning !== undefined && !isSigningKey(options.cardSigning)) throw new InvalidOptionError('cardSigning', 'must be a key made by createSigningKey')
}

async function conversePlugin (fastify: FastifyInstance, options: ConversePluginOptions): Promise<void> {
  const extension = createConverseExtension(options)
  const { agents, decorator, defaultAgentId } = extension
  const mountPath = normalizeMountPath('prefix', options.prefix)
  const publicHosts = publicHostList('publicHosts', options.publicHosts)
  const publicUrl = baseUrlOf('publicUrl', options.publicUrl, (request: FastifyRequest) => requestOrigin(request.protocol, request.host, publicHosts))
  const mcpPublicUrl = baseUrlOf('mcpPublicUrl', options.mcpPublicUrl, publicUrl)
  const cardsFromRequest = typeof options.publicUrl !== 'string' || (options.mcpPublicUrl !== undefined && typeof options.mcpPublicUrl !== 'string')
  checkPluginOptions(options)
  const { grpcUrl } = options
  const signer = options.cardSigning === undefined ? undefined : createCardSigner(options.cardSigning)

  /**
   * An agent's card. One whose endpoint also answers A2A 0.3 lists its 0.3 interfaces the 1.0 way, or is 0.3's card
   * for a request that asks for 0.3 (docs/protocol-versions.md, "The card").
   */
  function cardFor (agentId: string, request: FastifyRequest, version = requestedCardVersion(request.headers?.['a2a-version'])): Record<string, unknown> | undefined {
    const card = agents.get(agentId)?.cardFor({ publicUrl: publicUrl(request), mcpPublicUrl: mcpPublicUrl(request), mountPath, grpcUrl })
    return card === undefined ? undefined : cardAsServed(card, serves03(fastify, agentId), version)
  }

  function hostRefusal (request: FastifyRequest): RequestHostError | undefined {
    try {
      publicUrl(request)
      mcpPublicUrl(request)
      return undefined
    } catch (error) {
      if (error instanceof RequestHostError) return error
      throw error
    }
  }

  function transformResult (request: FastifyRequest, method: string, result: unknown): Promise<unknown> | unknown {
    const state = request.converse
    if (state === null) return result
    return extension.transform(method, result, { agentId: state.agentId, negotiated: state, body: request.body, log: request.log })
  }

  const signCard = signer === undefined
    ? undefined
    : async (card: Record<string, unknown>, request: FastifyRequest) => await signer.sign(card, `${publicUrl(request)}${mountPath}${JWKS_PATH}`)
  const liveEndpoints: LiveEndpoint[] = []

  function putAgent (agent: LiveAgentOptions): void {
    const endpoint = liveEndpoints[0]
    if (endpoint === undefined) throw new InvalidOptionError('putAgent', 'needs an a2aEndpoint registered to serve the agent')
    const { card, routines, wellKnownCard, ...served } = agent
    const undo = extension.putAgent({ id: agent.id, card, routines, wellKnownCard })
    try {
      endpoint.put(served)
    } catch (error) {
      undo()
      throw error
    }
  }

  function removeAgent (agentId: string): boolean {
    for (const endpoint of liveEndpoints) endpoint.remove(agentId)
    return extension.removeAgent(agentId)
  }

  fastify.decorate('converse', {
    agents, defaultAgentId, cardFor, hostRefusal, cardsFromRequest, transformResult, decorator, extension, mountPath, a2aServices: new Map(), signCard, putAgent, removeAgent, liveEndpoints
  })
  fastify.decorateRequest('converse', null)
  addConverseHooks(fastify, extension, transformResult)
  addCardRoutes(fastify, cardFor, options.defaultAgentCard, options.cardSigning)
}

export const converse = fp(conversePlugin, { fastify: '5.x', name: 'a2a-converse' })
export default converse
