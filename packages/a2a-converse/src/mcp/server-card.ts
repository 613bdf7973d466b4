/**
 * An agent's MCP server card (SEP-2127, the experimental server-card extension's `ServerCard`), served at
 * `<mcp.url>/server-card`, and the serverInfo the MCP server announces — built from the same agent card, so the
 * two never contradict each other (the draft asks that a card agree with the live connection).
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '../peers/mcp.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'

/**
 * The revisions the door serves, newest first: 2026-07-28 (the SDK's `createMcpHandler`; its modern revisions are
 * not exported, so named here — test/library/mcp/revisions.test.ts checks `server/discover` lists exactly these) and the
 * older ones it serves statelessly (`SUPPORTED_PROTOCOL_VERSIONS`, the SDK's initialize revisions).
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(['2026-07-28'])
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS])

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json'
/** The draft's media type for a server card. */
export const SERVER_CARD_MEDIA_TYPE = 'application/mcp-server-card+json'
/** CORS for browser-based discovery (GET only, public metadata) and a cache lifetime, as the draft recommends. */
export const SERVER_CARD_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': SERVER_CARD_MEDIA_TYPE,
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET',
  'access-control-allow-headers': 'Content-Type',
  'cache-control': 'public, max-age=300'
})

/** The schema's limits on title and description. */
const TEXT_LIMIT = 100

export interface ServerIdentity {
  /** Reverse-DNS: the MCP host's labels reversed, then the agent id (`com.example.mcp/demo`). */
  name: string
  title: string
  version: string
  description: string
}

interface CardView {
  name?: unknown
  description?: unknown
  version?: unknown
  capabilities?: { extensions?: Array<{ uri?: unknown, params?: { mcp?: { url?: unknown } } }> }
}

/** The MCP endpoint URL the agent card names (`params.mcp.url` of the converse entry). */
export function mcpUrlOf (card: Record<string, unknown>): string {
  const entry = (card as CardView).capabilities?.extensions?.find((extension) => extension.uri === CONVERSE_EXTENSION_URI)
  // Every card the converse extension builds carries its entry with params.mcp.url.
  return entry?.params?.mcp?.url as string
}

/**
 * Identities by what they are made of: a door may build a new card object per request (the A2A 0.3 fields are
 * added to a copy), and the fast path keeps one Server per identity, so equal cards must give the same object.
 * Bounded: cleared when full (each card's public base URL is one entry; a Host header per request is not unbounded
 * growth then, only recomputation).
 */
const identities = new Map<string, ServerIdentity>()
const IDENTITY_LIMIT = 64

/** Name, title, version and description of an agent's MCP server, from its card. */
export function serverIdentity (card: Record<string, unknown>): ServerIdentity {
  const view = card as CardView
  const key = `${mcpUrlOf(card)}\n${String(view.name)}\n${String(view.version)}\n${String(view.description)}`
  let identity = identities.get(key)
  if (identity === undefined) {
    if (identities.size >= IDENTITY_LIMIT) identities.clear()
    identity = Object.freeze(identityOf(card))
    identities.set(key, identity)
  }
  return identity
}

function identityOf (card: Record<string, unknown>): ServerIdentity {
  const view = card as CardView
  const url = new URL(mcpUrlOf(card))
  const agentId = decodeURIComponent(url.pathname.split('/').at(-1) as string)
  const title = clip(String(view.name)) || agentId
  const description = typeof view.description === 'string' && view.description.trim() !== '' ? clip(view.description) : title
  return {
    // The schema allows 200 characters; agent ids have at most 128.
    name: `${namespaceOf(url.hostname).slice(0, 199 - agentId.length)}/${agentId}`,
    title,
    // Cards always carry a version (the extension defaults it to 1.0.0).
    version: String(view.version).slice(0, 255),
    description
  }
}

/** The server card of an agent as this request sees its card. */
export function serverCard (card: Record<string, unknown>): Record<string, unknown> {
  const { name, title, version, description } = serverIdentity(card)
  return {
    $schema: SERVER_CARD_SCHEMA,
    name,
    title,
    description,
    version,
    remotes: [{ type: 'streamable-http', url: mcpUrlOf(card), supportedProtocolVersions: [...SERVED_PROTOCOL_VERSIONS] }]
  }
}

/**
 * The host's labels reversed (`mcp.example.com` → `com.example.mcp`); an IPv6 literal's colons and brackets,
 * which the name's pattern does not allow, become hyphens.
 */
function namespaceOf (hostname: string): string {
  return hostname.replace(/[^a-zA-Z0-9.-]/g, '-').split('.').filter((label) => label !== '').reverse().join('.') || 'localhost'
}

function clip (text: string): string {
  const trimmed = text.trim()
  return trimmed.length <= TEXT_LIMIT ? trimmed : `${trimmed.slice(0, TEXT_LIMIT - 1)}…`
}
