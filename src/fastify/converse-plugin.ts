import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { augmentAgentCard, type AgentExtensionEntry, type CardLike } from '../core/card.js'
import { carriesEnvelopes, createEnvelopeDecorator, stripResult, type EnvelopeDecorator } from '../core/decorate.js'
import { attachedEnvelopeProvider, type EnvelopeProvider } from '../core/envelope-provider.js'
import { InvalidOptionError } from '../core/errors.js'
import { formatExtensionsHeader, negotiate } from '../core/negotiate.js'
import { validateRoutineDeclarations, type RoutineDeclaration } from '../core/routine-declarations.js'
import { buildToolDescriptors, type ToolDescriptor } from '../core/tool-descriptors.js'
import { CONVERSE_EXTENSION_URI, EXTENSIONS_HEADER } from '../core/uri.js'
import type { Metadata, WireMessage } from '../core/wire.js'
import { useKnownEnvelopeJson } from './known-envelope-serializer.js'

/** An agent card as the user writes it: supportedInterfaces and the converse parts are added per request. */
export interface AgentCardInput extends CardLike {
  name: string
  description: string
  version?: string
}

export interface ConverseAgentOptions {
  /** Path segment: the agent answers at /a2a/:id. */
  id: string
  card: AgentCardInput
  routines?: RoutineDeclaration[]
}

export type UrlOption = string | ((request: FastifyRequest) => string)

export interface ConversePluginOptions {
  agents: ConverseAgentOptions[]
  /** Where envelopes come from. Default: the envelope the agent attached under metadata[URI]. */
  provider?: EnvelopeProvider
  /** Per-object time budget of an async provider, in ms. Default 1000. */
  providerTimeoutMs?: number
  /** Public base URL written into cards. Default: the request's protocol and host (trustProxy-aware). */
  publicUrl?: UrlOption
  /** Base URL of the MCP door: an agent's mcp.url is `<mcpPublicUrl>/mcp/a/<id>`. Default: publicUrl. */
  mcpPublicUrl?: UrlOption
  /** Serve the first agent's card at /.well-known/agent-card.json too. Default true. */
  defaultAgentCard?: boolean
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

export interface ResolvedAgent {
  id: string
  routines: readonly RoutineDeclaration[]
  tools: readonly ToolDescriptor[]
  declared: ReadonlySet<string>
  /** The augmented card for these base URLs (cached per distinct pair). */
  cardFor (publicUrl: string, mcpPublicUrl: string): Record<string, unknown>
}

export interface ConverseApi {
  agents: ReadonlyMap<string, ResolvedAgent>
  defaultAgentId: string
  /** The augmented card of an agent as seen by this request (base URLs from options or the request). */
  cardFor (agentId: string, request: FastifyRequest): Record<string, unknown> | undefined
  /** Decorates (or strips) one JSON-RPC result for this request; for SSE writers, once per frame. */
  transformResult (request: FastifyRequest, method: string, result: unknown): Promise<unknown> | unknown
  /** The envelope decorator built from the plugin's provider and timeout. */
  decorator: EnvelopeDecorator
}

declare module 'fastify' {
  interface FastifyInstance { converse: ConverseApi }
  interface FastifyRequest { converse: ConverseRequestState | null }
  interface FastifyContextConfig { converse?: ConverseRouteConfig }
}

const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/
const CARD_CACHE_LIMIT = 32
/** Distinct A2A-Extensions values remembered per agent, and the longest value remembered. */
const NEGOTIATION_CACHE_LIMIT = 64
const NEGOTIATION_KEY_LIMIT = 1024

interface Negotiated {
  requested: readonly string[]
  activated: readonly string[]
  active: boolean
  /** The response header value; undefined when nothing was activated. */
  echo: string | undefined
}

const NOT_ACTIVE: Omit<ConverseRequestState, 'agentId'> = Object.freeze({ requested: [], activated: [], active: false })

async function conversePlugin (fastify: FastifyInstance, options: ConversePluginOptions): Promise<void> {
  const agents = resolveAgents(options)
  // Only an absent provider gets the default; null is rejected like every other option of the wrong type.
  const provider = options.provider === undefined ? attachedEnvelopeProvider() : options.provider
  if (provider === null || typeof provider !== 'object' || typeof provider.envelope !== 'function') {
    throw new InvalidOptionError('provider', 'must be an object with an envelope(context) method')
  }
  const timeoutMs = options.providerTimeoutMs ?? 1000
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new InvalidOptionError('providerTimeoutMs', 'must be an integer between 1 and 60000')
  }
  const publicUrl = urlOption('publicUrl', options.publicUrl, requestBaseUrl)
  const mcpPublicUrl = urlOption('mcpPublicUrl', options.mcpPublicUrl, publicUrl)
  if (options.defaultAgentCard !== undefined && typeof options.defaultAgentCard !== 'boolean') {
    throw new InvalidOptionError('defaultAgentCard', 'must be a boolean')
  }
  const decorator = createEnvelopeDecorator({ provider, timeoutMs })
  const defaultAgentId = options.agents[0].id

  function cardFor (agentId: string, request: FastifyRequest): Record<string, unknown> | undefined {
    return agents.get(agentId)?.cardFor(publicUrl(request), mcpPublicUrl(request))
  }

  function transformResult (request: FastifyRequest, method: string, result: unknown): Promise<unknown> | unknown {
    return transform(request, method, result, undefined)
  }

  /** transformResult, optionally collecting the metadata objects that received an envelope with known JSON. */
  function transform (
    request: FastifyRequest, method: string, result: unknown, knownJsonHolders: Metadata[] | undefined
  ): Promise<unknown> | unknown {
    const state = request.converse
    if (state === null || !carriesEnvelopes(method)) return result
    if (!state.active) return stripResult(method, result)
    const body = request.body as { id?: string | number | null, params?: { message?: WireMessage } } | undefined
    return decorator.decorate(method, result, {
      agentId: state.agentId,
      activated: state.activated,
      requestMessage: body?.params?.message,
      requestId: body?.id,
      log: request.log,
      knownJsonHolders
    })
  }

  fastify.decorate('converse', { agents, defaultAgentId, cardFor, transformResult, decorator })
  fastify.decorateRequest('converse', null)

  /**
   * Negotiation outcomes per agent and raw header value. Clients send the same few values, so the parse, the
   * intersection and the echo are computed once per distinct value (bounded: header values are client-chosen).
   */
  const negotiations = new Map<string, Map<string, Negotiated>>([...agents.keys()].map((id) => [id, new Map()]))

  function negotiated (agent: ResolvedAgent, header: string | string[] | undefined): Negotiated {
    const cache = negotiations.get(agent.id) as Map<string, Negotiated>
    const cacheable = typeof header === 'string' && header.length <= NEGOTIATION_KEY_LIMIT
    if (cacheable) {
      const cached = cache.get(header)
      if (cached !== undefined) return cached
    }
    const { requested, activated } = negotiate(header, agent.declared)
    // Frozen: a cached outcome is shared by every request that sent the same value.
    const outcome: Negotiated = {
      requested: Object.freeze(requested),
      activated: Object.freeze(activated),
      active: activated.includes(CONVERSE_EXTENSION_URI),
      echo: formatExtensionsHeader(activated)
    }
    if (cacheable && cache.size < NEGOTIATION_CACHE_LIMIT) cache.set(header, outcome)
    return outcome
  }

  /** The onRequest hook of one marked route: its config is read once, here, not per request. */
  function converseRequestHook (config: ConverseRouteConfig) {
    const fixedAgentId = config === true ? undefined : config.agentId
    return function onConverseRequest (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
      const agentId = fixedAgentId ?? String((request.params as { agentId?: string }).agentId ?? defaultAgentId)
      const agent = agents.get(agentId)
      if (agent === undefined) {
        request.converse = { agentId, ...NOT_ACTIVE }
        return done()
      }
      const { requested, activated, active, echo } = negotiated(agent, request.headers['a2a-extensions'])
      request.converse = { agentId, requested, activated, active }
      if (echo !== undefined) reply.header(EXTENSIONS_HEADER, echo)
      done()
    }
  }

  /**
   * The preSerialization hook of one marked route. Callback style, so a reply decorated synchronously (a sync
   * provider) costs no promise. Known envelope JSON is spliced in only where no response schema decides the text.
   */
  function converseSerializationHook (hasResponseSchema: boolean) {
    return function onConverseSerialization (
      request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void
    ): void {
      const response = payload as { result?: unknown } | null
      if (response === null || typeof response !== 'object' || !('result' in response)) return done(null, payload)
      const method = (request.body as { method?: unknown } | undefined)?.method
      if (typeof method !== 'string') return done(null, payload)
      const original = response.result
      const holders: Metadata[] | undefined = hasResponseSchema ? undefined : []
      const finish = (result: unknown) => {
        if (holders !== undefined && holders.length > 0) useKnownEnvelopeJson(reply, holders)
        done(null, result === original ? payload : { ...response, result })
      }
      const result = transform(request, method, original, holders)
      // decorate never rejects; `done` as the rejection handler only guards against the unforeseen.
      if (result instanceof Promise) result.then(finish, done)
      else finish(result)
    }
  }

  // Opt-in per route, as @fastify/rate-limit does: routes without config.converse get no hooks at all.
  fastify.addHook('onRoute', (route) => {
    const config = route.config?.converse
    if (config === undefined) return
    if (config !== true && (config === null || typeof config !== 'object' || !agents.has(config.agentId))) {
      throw new InvalidOptionError(`config.converse of ${route.method} ${route.url}`, 'must be true or { agentId } naming a declared agent')
    }
    route.onRequest = [...toArray(route.onRequest), converseRequestHook(config)]
    route.preSerialization = [...toArray(route.preSerialization), converseSerializationHook(route.schema?.response !== undefined)]
  })

  fastify.get<{ Params: { agentId: string } }>('/a2a/:agentId/.well-known/agent-card.json', async (request, reply) => {
    const card = cardFor(request.params.agentId, request)
    if (card === undefined) return reply.code(404).send(unknownAgent(request.params.agentId))
    return card
  })
  if (options.defaultAgentCard !== false) {
    fastify.get('/.well-known/agent-card.json', async (request) => cardFor(defaultAgentId, request))
  }
  fastify.get<{ Querystring: { agentId?: string } }>('/api/v1/mcp/converse/tools', async (request, reply) => {
    const agentId = request.query.agentId ?? defaultAgentId
    const agent = agents.get(agentId)
    if (agent === undefined) return reply.code(404).send(unknownAgent(agentId))
    return { tools: agent.tools }
  })
}

function unknownAgent (agentId: string) {
  return { statusCode: 404, error: 'Not Found', message: `unknown agent "${agentId.slice(0, 128)}"` }
}

function toArray<T> (value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

function requestBaseUrl (request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

function urlOption (name: string, value: UrlOption | undefined, fallback: (request: FastifyRequest) => string) {
  if (value === undefined) return fallback
  if (typeof value === 'function') return value
  if (typeof value !== 'string' || !/^https?:\/\/[^/]/.test(value)) {
    throw new InvalidOptionError(name, 'must be an http(s) URL or a function of the request')
  }
  const base = value.replace(/\/+$/, '')
  return () => base
}

function resolveAgents (options: ConversePluginOptions): Map<string, ResolvedAgent> {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object')
  if (!Array.isArray(options.agents) || options.agents.length === 0) {
    throw new InvalidOptionError('agents', 'must be a non-empty array')
  }
  const agents = new Map<string, ResolvedAgent>()
  options.agents.forEach((agent, index) => {
    const where = `agents[${index}]`
    if (agent === null || typeof agent !== 'object') throw new InvalidOptionError(where, 'must be an object')
    if (typeof agent.id !== 'string' || !AGENT_ID.test(agent.id)) {
      throw new InvalidOptionError(`${where}.id`, 'must match ^[A-Za-z0-9_-]{1,128}$')
    }
    if (agents.has(agent.id)) throw new InvalidOptionError(`${where}.id`, `"${agent.id}" is declared twice`)
    const card = agent.card
    if (card === null || typeof card !== 'object' || typeof card.name !== 'string' || typeof card.description !== 'string') {
      throw new InvalidOptionError(`${where}.card`, 'must be an object with name and description strings')
    }
    const routines = agent.routines ?? []
    validateRoutineDeclarations(routines)
    agents.set(agent.id, resolveAgent(agent.id, card, routines))
  })
  return agents
}

function resolveAgent (id: string, card: AgentCardInput, routines: RoutineDeclaration[]): ResolvedAgent {
  const tools = buildToolDescriptors(routines)
  const others: AgentExtensionEntry[] = card.capabilities?.extensions ?? []
  const declared = new Set([...others.map((entry) => entry.uri), CONVERSE_EXTENSION_URI])
  const cache = new Map<string, Record<string, unknown>>()
  return {
    id,
    routines,
    tools,
    declared,
    cardFor (publicUrl, mcpPublicUrl) {
      const key = `${publicUrl} ${mcpPublicUrl}`
      const cached = cache.get(key)
      if (cached !== undefined) return cached
      const built = augmentAgentCard({
        version: '1.0.0',
        defaultInputModes: ['text/plain', 'application/json'],
        defaultOutputModes: ['text/plain', 'application/json'],
        ...card,
        supportedInterfaces: card.supportedInterfaces ??
          [{ url: `${publicUrl}/a2a/${id}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]
      }, { mcpUrl: `${mcpPublicUrl}/mcp/a/${id}`, tools, routines })
      // Host headers are client-chosen: cache a bounded number of distinct bases, build the rest each time.
      if (cache.size < CARD_CACHE_LIMIT) cache.set(key, built)
      return built
    }
  }
}

export const converse = fp(conversePlugin, { fastify: '5.x', name: 'a2a-converse' })
export default converse
