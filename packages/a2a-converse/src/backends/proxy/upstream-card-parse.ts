/**
 * An upstream agent's card read into what the gateway keeps of it (upstream-card.ts reads it): the JSON-RPC endpoint
 * (the card's JSONRPC interface, protocolVersion 1.0, else a 0.3 card's JSON-RPC url) and the card the gateway
 * serves — the upstream's without its interfaces (the gateway's own are added), its signatures (the card changes,
 * so they would not hold), its converse entry (the gateway serves the extension) and the upstream's own push
 * notifications (the gateway delivers them itself when it is set up to: relayed-push-backend.ts), its other
 * extensions kept. A card that cannot be used is an UpstreamCardError naming the agent and what is wrong.
 */
import { Ajv, type ErrorObject } from 'ajv'
import type { AgentCardInput } from '../../core/converse-extension.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

/** The upstream's card could not be used; the message names the agent and what is wrong. */
export class UpstreamCardError extends ConverseError {
  readonly agentId: string
  constructor (agentId: string, problem: string) {
    super(ERROR_CODES.UPSTREAM_CARD, `agent "${agentId}": upstream card ${problem}`)
    this.agentId = agentId
  }
}

/** What the gateway keeps of a card it read. */
export interface UpstreamCard {
  /** The JSON-RPC endpoint (absolute URL). */
  endpoint: string
  /**
   * The A2A version the upstream is spoken to in: 1.0 (its card lists a JSON-RPC 1.0 interface), else 0.3 (a 0.3
   * card: `protocolVersion` 0.3.x and a JSON-RPC `url`), through the 0.3 translation (packages/a2a-converse/src/protocol/v0_3/).
   */
  protocolVersion: '1.0' | '0.3'
  /** The card the gateway serves (before its interfaces and the converse entry are added). */
  served: AgentCardInput
  capabilities: { streaming: boolean, extendedAgentCard: boolean }
  /** URIs of the upstream's extensions marked required. */
  requiredExtensions: string[]
}

/**
 * Name and description from the agents file win over the card's; `pushNotifications`: whether the gateway delivers
 * push notifications for the agent (relayed-push-backend.ts). Default false.
 */
export interface UpstreamCardOverrides { name?: string, description?: string, version?: string, pushNotifications?: boolean }

const cardSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    version: { type: 'string' },
    supportedInterfaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url', 'protocolBinding'],
        properties: { url: { type: 'string', minLength: 1 }, protocolBinding: { type: 'string' }, protocolVersion: { type: 'string' } }
      }
    },
    capabilities: {
      type: 'object',
      properties: {
        streaming: { type: 'boolean' },
        pushNotifications: { type: 'boolean' },
        extendedAgentCard: { type: 'boolean' },
        extensions: {
          type: 'array',
          items: { type: 'object', required: ['uri'], properties: { uri: { type: 'string', minLength: 1 }, required: { type: 'boolean' } } }
        }
      }
    },
    skills: { type: 'array', items: { type: 'object' } }
  }
} as const

const validateCard = new Ajv({ allErrors: false }).compile(cardSchema)

/** Parses a card (JSON text) read from `cardUrl`; throws UpstreamCardError. */
export function parseUpstreamCard (agentId: string, cardUrl: string, text: string, overrides: UpstreamCardOverrides = {}): UpstreamCard {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new UpstreamCardError(agentId, `at ${cardUrl} is not JSON`)
  }
  if (!validateCard(parsed)) {
    // ajv sets `errors` whenever validation fails.
    const [error] = validateCard.errors as ErrorObject[]
    throw new UpstreamCardError(agentId, `at ${cardUrl}: ${error.instancePath === '' ? 'the card' : error.instancePath} ${error.message as string}`)
  }
  const card = parsed as Record<string, any>
  const jsonRpc = ((card.supportedInterfaces ?? []) as Array<Record<string, string>>).find((entry) =>
    entry.protocolBinding === 'JSONRPC' && /^1\.0(?:\.\d+)?$/.test(entry.protocolVersion ?? ''))
  const v03Url = jsonRpc === undefined ? v03JsonRpcUrl(card) : undefined
  if (jsonRpc === undefined && v03Url === undefined) {
    throw new UpstreamCardError(agentId, `at ${cardUrl} has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1.0, nor a 0.3 JSON-RPC url`)
  }
  let endpoint: URL
  try {
    endpoint = new URL(jsonRpc?.url ?? v03Url as string, cardUrl)
  } catch {
    throw new UpstreamCardError(agentId, `at ${cardUrl}: the JSONRPC interface url is not a URL`)
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
    throw new UpstreamCardError(agentId, `at ${cardUrl}: the JSONRPC interface url must be http(s)`)
  }
  const capabilities = (card.capabilities ?? {}) as Record<string, any>
  const extensions = ((capabilities.extensions ?? []) as Array<{ uri: string, required?: boolean }>)
    .filter((entry) => entry.uri !== CONVERSE_EXTENSION_URI)
  // The upstream's endpoints (1.0 and 0.3 fields) are not the gateway's: its own are added.
  const {
    supportedInterfaces: _interfaces, signatures: _signatures, url: _url, preferredTransport: _preferred, additionalInterfaces: _additional,
    protocolVersion: _version, supportsAuthenticatedExtendedCard: _extended, ...rest
  } = card
  const served: AgentCardInput = {
    ...rest,
    name: overrides.name ?? card.name,
    description: overrides.description ?? card.description ?? '',
    version: overrides.version ?? card.version ?? '1.0.0',
    capabilities: { ...capabilities, pushNotifications: overrides.pushNotifications === true, extendedAgentCard: false, extensions }
  }
  return {
    endpoint: endpoint.href,
    protocolVersion: jsonRpc === undefined ? '0.3' : '1.0',
    served,
    capabilities: { streaming: capabilities.streaming === true, extendedAgentCard: false },
    requiredExtensions: extensions.filter((entry) => entry.required === true).map((entry) => entry.uri)
  }
}

/**
 * A 0.3 card's JSON-RPC URL (what the 0.3 SDK client reads): `url` when `preferredTransport` is JSONRPC (its
 * default), else a JSONRPC entry of `additionalInterfaces`; undefined for a card that is not 0.3's.
 */
function v03JsonRpcUrl (card: Record<string, any>): string | undefined {
  if (typeof card.protocolVersion !== 'string' || !/^0\.3(?:\.\d+)?$/.test(card.protocolVersion)) return undefined
  if (typeof card.url === 'string' && (card.preferredTransport ?? 'JSONRPC') === 'JSONRPC') return card.url
  const entry = (Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces as unknown[] : [])
    .find((item): item is { url: string } => typeof item === 'object' && item !== null &&
      (item as Record<string, unknown>).transport === 'JSONRPC' && typeof (item as Record<string, unknown>).url === 'string')
  return entry?.url
}

/** `<url>/.well-known/agent-card.json` (the base URL's path kept). */
export function cardUrlOf (url: string): string {
  return new URL('.well-known/agent-card.json', url.endsWith('/') ? url : `${url}/`).href
}
