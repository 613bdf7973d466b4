/**
 * The converse extension for a set of agents, framework-free: the agents' declarations (routines, tools, the
 * extensions each declares), their cards for a base URL and a mount path, negotiation of `A2A-Extensions`
 * (cached per distinct header value) and the decoration or stripping of outgoing results.
 *
 * Every door uses one of these: the Fastify plugin, the Express router and middleware, the A2A service.
 */
import type { Context } from '../telemetry/tracing.js'
import type { CardLike } from './card.js'
import { carriesEnvelopes, createEnvelopeDecorator, stripResult, type EnvelopeDecorator, type EnvelopeLogger } from './decorate.js'
import { attachedEnvelopeProvider, type EnvelopeProvider } from './envelope-provider.js'
import { InvalidOptionError } from './errors.js'
import { checkCard, checkedAgent, resolveAgent, resolveAgents } from './agent-declarations.js'
import { formatExtensionsHeader, negotiate } from './negotiate.js'
import type { RoutineDeclaration } from './routine-declarations.js'
import type { ToolDescriptor } from './tool-descriptors.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'
import type { WireMessage } from './wire.js'

/** An agent card as the user writes it: supportedInterfaces and the converse parts are added per base URL. */
export interface AgentCardInput extends CardLike {
  name: string
  description: string
  version?: string
}

export interface ConverseAgentOptions {
  /** Path segment: the agent answers at <mount>/a2a/:id. */
  id: string
  card: AgentCardInput
  routines?: RoutineDeclaration[]
  /**
   * What the well-known card path answers a request without `A2A-Version`, for an agent that also serves 0.3:
   * `v1` (default) 1.0's strict card; `compat` the compatible card (0.3's fields beside 1.0's interfaces: what 0.3
   * clients read). docs/protocol-versions.md, "The card".
   */
  wellKnownCard?: WellKnownCard
}

/** See ConverseAgentOptions.wellKnownCard. */
export type WellKnownCard = 'v1' | 'compat'

export interface ConverseExtensionOptions {
  agents: ConverseAgentOptions[]
  /** Where envelopes come from. Default: the envelope the agent attached under metadata[URI]. */
  provider?: EnvelopeProvider
  /** Per-object time budget of an async provider, in ms. Default 1000. */
  providerTimeoutMs?: number
}

/** The outcome of negotiating one request's A2A-Extensions header with one agent. */
export interface Negotiated {
  requested: readonly string[]
  activated: readonly string[]
  /** Whether the converse extension is activated. */
  active: boolean
  /** The A2A-Extensions response header value; undefined when nothing was activated. */
  echo: string | undefined
}

/** Where a card's URLs point: the public base URLs and the path the doors are mounted under. */
export interface CardUrls {
  /** Public base URL (scheme and host, no trailing slash). */
  publicUrl: string
  /** Base URL of the MCP door. Default: publicUrl. */
  mcpPublicUrl?: string
  /** The path the A2A and MCP routes are mounted under ('' or '/v1'); default ''. */
  mountPath?: string
  /** The gRPC target (`host:port`) of a gRPC door serving these agents: listed with each agent as its `tenant`. */
  grpcUrl?: string
}

export interface ResolvedAgent {
  id: string
  routines: readonly RoutineDeclaration[]
  tools: readonly ToolDescriptor[]
  /** Extension URIs the agent declares (the card's, plus converse). */
  declared: ReadonlySet<string>
  /** What its well-known card path answers a request without `A2A-Version` (ConverseAgentOptions.wellKnownCard). */
  wellKnownCard: WellKnownCard
  /** The augmented card for these URLs (cached per distinct combination, bounded). */
  cardFor (urls: CardUrls): Record<string, unknown>
}

/** What the decoration of one result needs to know about the request. */
export interface ResultContext {
  agentId: string
  negotiated: Pick<Negotiated, 'activated' | 'active'>
  /** The JSON-RPC request (its id and params.message reach the provider). */
  body?: unknown
  log?: EnvelopeLogger
  /** The call's trace context, handed to the envelope provider. */
  traceContext?: Context
}

export interface ConverseExtension {
  /** The declared agents as they are now (putAgent and removeAgent change them). */
  agents: ReadonlyMap<string, ResolvedAgent>
  defaultAgentId: string
  decorator: EnvelopeDecorator
  /** Negotiates a request's A2A-Extensions header with an agent (undefined: no such agent). */
  negotiate (agentId: string, header: string | readonly string[] | undefined): Negotiated | undefined
  /** Decorates (activated) or strips (not activated) one JSON-RPC result of `method`. */
  transform (method: string, result: unknown, context: ResultContext): Promise<unknown> | unknown
  /**
   * Replaces a declared agent's card (an upstream agent's card read or refreshed after start): its cards, the
   * extensions it declares and their negotiation follow from the next request on. Routines stay.
   */
  setCard (agentId: string, card: AgentCardInput): void
  /**
   * Adds an agent, or replaces a declared one (its card, routines and tools), at runtime: its cards (and so their
   * ETags and signatures), tools and negotiation follow from the next request on; a request already past its lookup
   * keeps the agent it read. Checked as the `agents` option is. Returns what undoes it (the agent as it was before).
   */
  putAgent (agent: ConverseAgentOptions): () => void
  /**
   * Removes a declared agent at runtime: its cards and tools are 404 from the next request on (the default agent's
   * well-known card too: no other agent becomes the default). False when there was no such agent.
   */
  removeAgent (agentId: string): boolean
}

/** Distinct A2A-Extensions values remembered per agent, and the longest value remembered. */
const NEGOTIATION_CACHE_LIMIT = 64
const NEGOTIATION_KEY_LIMIT = 1024
const MOUNT_PATH = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/

export function createConverseExtension (options: ConverseExtensionOptions): ConverseExtension {
  const agents = resolveAgents(options)
  const decorator = optionsDecorator(options)

  // Clients send the same few values, so the parse, the intersection and the echo are computed once per distinct
  // value (bounded: header values are client-chosen).
  const negotiations = new Map<string, Map<string, Negotiated>>([...agents.keys()].map((id) => [id, new Map()]))

  function negotiateFor (agentId: string, header: string | readonly string[] | undefined): Negotiated | undefined {
    const agent = agents.get(agentId)
    if (agent === undefined) return undefined
    const cache = negotiations.get(agentId) as Map<string, Negotiated>
    const cacheable = typeof header === 'string' && header.length <= NEGOTIATION_KEY_LIMIT
    if (cacheable) {
      const cached = cache.get(header)
      if (cached !== undefined) return cached
    }
    const { requested, activated } = negotiate(header, agent.declared)
    // Frozen: a cached outcome is shared by every request that sent the same value.
    const outcome: Negotiated = Object.freeze({
      requested: Object.freeze(requested),
      activated: Object.freeze(activated),
      active: activated.includes(CONVERSE_EXTENSION_URI),
      echo: formatExtensionsHeader(activated)
    })
    if (cacheable && cache.size < NEGOTIATION_CACHE_LIMIT) cache.set(header, outcome)
    return outcome
  }

  function transform (method: string, result: unknown, context: ResultContext): Promise<unknown> | unknown {
    if (!carriesEnvelopes(method)) return result
    if (!context.negotiated.active) return stripResult(method, result)
    const body = context.body as { id?: string | number | null, params?: { message?: WireMessage } } | null | undefined
    return decorator.decorate(method, result, {
      agentId: context.agentId,
      activated: context.negotiated.activated,
      requestMessage: body?.params?.message,
      requestId: body?.id,
      log: context.log,
      traceContext: context.traceContext
    })
  }

  function setCard (agentId: string, card: AgentCardInput): void {
    const agent = agents.get(agentId)
    if (agent === undefined) throw new InvalidOptionError('agentId', `"${agentId}" is not a declared agent`)
    checkCard(`agents["${agentId}"].card`, card)
    agents.set(agentId, resolveAgent(agentId, card, agent.routines as RoutineDeclaration[], agent.wellKnownCard))
    negotiations.get(agentId)?.clear()
  }

  function putAgent (agent: ConverseAgentOptions): () => void {
    const resolved = checkedAgent(agent, 'agent')
    const previous = agents.get(resolved.id)
    agents.set(resolved.id, resolved)
    negotiations.set(resolved.id, new Map())
    return () => {
      if (previous === undefined) {
        removeAgent(resolved.id)
        return
      }
      agents.set(resolved.id, previous)
      negotiations.set(resolved.id, new Map())
    }
  }

  function removeAgent (agentId: string): boolean {
    negotiations.delete(agentId)
    return agents.delete(agentId)
  }

  return { agents, defaultAgentId: options.agents[0].id, decorator, negotiate: negotiateFor, transform, setCard, putAgent, removeAgent }
}

/** The envelope decorator of the options' provider and timeout, each checked. */
function optionsDecorator (options: ConverseExtensionOptions): EnvelopeDecorator {
  // Only an absent provider gets the default; null is rejected like every other option of the wrong type.
  const provider = options.provider === undefined ? attachedEnvelopeProvider() : options.provider
  if (provider === null || typeof provider !== 'object' || typeof provider.envelope !== 'function') {
    throw new InvalidOptionError('provider', 'must be an object with an envelope(context) method')
  }
  const timeoutMs = options.providerTimeoutMs ?? 1000
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new InvalidOptionError('providerTimeoutMs', 'must be an integer between 1 and 60000')
  }
  return createEnvelopeDecorator({ provider, timeoutMs })
}

/** A base URL option of a door: a fixed http(s) URL, or a function of the door's request. */
export type BaseUrlOption<Request> = string | ((request: Request) => string)

/**
 * The function a door calls per request for a base URL option: the fixed URL (trailing slashes dropped), the
 * option's own function, or `fallback` when unset. A value of another kind names the option.
 */
export function baseUrlOf<Request> (
  name: string, value: BaseUrlOption<Request> | undefined, fallback: (request: Request) => string
): (request: Request) => string {
  if (value === undefined) return fallback
  if (typeof value === 'function') return value
  if (typeof value !== 'string' || !/^https?:\/\/[^/]/.test(value)) {
    throw new InvalidOptionError(name, 'must be an http(s) URL or a function of the request')
  }
  const base = value.replace(/\/+$/, '')
  return () => base
}

/** '' or a path of segments without a trailing slash ('/v1'); anything else names the option. */
export function normalizeMountPath (option: string, value: unknown): string {
  if (value === undefined || value === '' || value === '/') return ''
  if (typeof value !== 'string') throw new InvalidOptionError(option, 'must be a path string such as "/v1"')
  const trimmed = value.replace(/\/+$/, '')
  if (!MOUNT_PATH.test(trimmed)) throw new InvalidOptionError(option, 'must be a path such as "/v1" (segments, no query)')
  return trimmed
}
