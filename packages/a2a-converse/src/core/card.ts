import type { RoutineDeclaration } from './routine-declarations.js'
import type { ToolDescriptor } from './tool-descriptors.js'
import { CONVERSE_EXTENSION_DESCRIPTION, CONVERSE_EXTENSION_URI } from './uri.js'

export interface AgentExtensionEntry {
  uri: string
  description?: string
  required?: boolean
  params?: Record<string, unknown>
}

export interface AgentSkillEntry {
  id: string
  name: string
  description: string
  tags: string[]
  examples?: string[]
  inputModes?: string[]
  outputModes?: string[]
}

/** The card's `capabilities.extensions` entry for the converse extension. */
export function converseExtensionEntry (mcpUrl: string, tools: readonly ToolDescriptor[]): AgentExtensionEntry {
  return {
    uri: CONVERSE_EXTENSION_URI,
    description: CONVERSE_EXTENSION_DESCRIPTION,
    required: false,
    params: {
      mcp: { url: mcpUrl, serverCardUrl: `${mcpUrl}/server-card` },
      tools
    }
  }
}

/** Plain conversation always works; every exposed routine is a skill whose id is its toolName. */
export const ASK_AGENT_SKILL: AgentSkillEntry = Object.freeze({
  id: 'ask_agent',
  name: 'Ask the agent',
  description: 'Ask a question or start a conversation in plain language.',
  tags: Object.freeze(['conversation']) as string[]
}) as AgentSkillEntry

export function converseSkills (routines: readonly RoutineDeclaration[]): AgentSkillEntry[] {
  const skills = [ASK_AGENT_SKILL]
  for (const routine of routines) {
    if (routine.exposed !== true) continue
    skills.push({ id: routine.toolName as string, name: routine.name, description: routine.description, tags: ['routine'] })
  }
  return skills
}

/** A card-shaped object: only the members the augmentation touches are typed. */
export interface CardLike {
  capabilities?: { extensions?: AgentExtensionEntry[], [key: string]: unknown }
  skills?: AgentSkillEntry[]
  [key: string]: unknown
}

/**
 * The card with the converse extension entry and the converse skills. Any previous converse entry is replaced;
 * the card's own skills follow ours unless their id collides with one of ours.
 */
export function augmentAgentCard<T extends CardLike> (
  card: T, options: { mcpUrl: string, tools: readonly ToolDescriptor[], routines: readonly RoutineDeclaration[] }
): T & { capabilities: NonNullable<CardLike['capabilities']>, skills: AgentSkillEntry[] } {
  const ours = converseSkills(options.routines)
  const ourIds = new Set(ours.map((skill) => skill.id))
  const extensions = (card.capabilities?.extensions ?? []).filter((entry) => entry.uri !== CONVERSE_EXTENSION_URI)
  extensions.push(converseExtensionEntry(options.mcpUrl, options.tools))
  return {
    ...card,
    capabilities: { ...card.capabilities, extensions },
    skills: [...ours, ...(card.skills ?? []).filter((skill) => !ourIds.has(skill.id))]
  }
}

/** The 0.3 card's `protocolVersion`: the 0.3 line this gateway translates (A2A 0.3.0). */
export const V03_PROTOCOL_VERSION = '0.3.0'

/**
 * The fields an A2A 0.3 client reads to find the endpoint, derived from the 1.0 `supportedInterfaces`: `url` and
 * `preferredTransport` (the first JSON-RPC entry), `additionalInterfaces` (every entry of a binding served in 0.3
 * terms, as `{url, transport}`), `protocolVersion`, and the 0.3 card-level extended-card flag. They sit next to the
 * 1.0 fields on the one card: 1.0 readers ignore members they do not know (§5.7), and 0.3 readers ignore
 * `supportedInterfaces`. `transports`: the bindings a 0.3 client is answered on.
 */
export function v03CardFields (card: Record<string, unknown>, transports: readonly string[] = ['JSONRPC']): Record<string, unknown> {
  const interfaces = (Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces as unknown[] : [])
    .filter((entry): entry is { url: string, protocolBinding: string } =>
      typeof entry === 'object' && entry !== null && typeof (entry as Record<string, unknown>).url === 'string' &&
      transports.includes((entry as Record<string, unknown>).protocolBinding as string))
  const preferred = interfaces.find((entry) => entry.protocolBinding === 'JSONRPC') ?? interfaces[0]
  const fields: Record<string, unknown> = { protocolVersion: V03_PROTOCOL_VERSION }
  if (preferred !== undefined) {
    fields.url = preferred.url
    fields.preferredTransport = preferred.protocolBinding
    fields.additionalInterfaces = interfaces.map((entry) => ({ url: entry.url, transport: entry.protocolBinding }))
  }
  const capabilities = card.capabilities as Record<string, unknown> | undefined
  if (capabilities?.extendedAgentCard === true) fields.supportsAuthenticatedExtendedCard = true
  return fields
}

/** The bindings a 0.3 client is answered on: JSON-RPC, and HTTP+JSON (its `/v1/…` paths under the same URL). */
export const V03_TRANSPORTS = Object.freeze(['JSONRPC', 'HTTP+JSON'])

/**
 * The card a 0.3 reader gets: the 0.3 fields beside the 1.0 ones (see v03CardFields; 1.0's `supportedInterfaces`
 * kept, as the SDK's legacy card router embeds them).
 */
export function withV03Fields (card: Record<string, unknown>): Record<string, unknown> {
  return { ...card, ...v03CardFields(card, V03_TRANSPORTS) }
}

/**
 * The 1.0 card of an agent that also serves 0.3: each 1.0 interface of a binding served in 0.3 terms listed again
 * with `protocolVersion: "0.3"`, after the 1.0 ones. That is 1.0's own way to name an older version (AgentInterface's
 * `protocolVersion`, "e.g. 0.3"), so the card stays a valid 1.0 card for strict readers (the conformance kit's
 * schema refuses 0.3's top-level fields), and the 1.0 SDK client still picks the 1.0 entry of each binding.
 */
export function withV03Interfaces (card: Record<string, unknown>): Record<string, unknown> {
  const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces as Array<Record<string, unknown>> : []
  const legacy = interfaces
    .filter((entry) => V03_TRANSPORTS.includes(entry.protocolBinding as string) && entry.protocolVersion === '1.0')
    .map((entry) => ({ url: entry.url, protocolBinding: entry.protocolBinding, protocolVersion: V03_INTERFACE_VERSION }))
  return legacy.length === 0 ? card : { ...card, supportedInterfaces: [...interfaces, ...legacy] }
}

/** The `protocolVersion` of a 0.3 entry in 1.0's `supportedInterfaces` (major.minor, as 1.0's own entries say "1.0"). */
export const V03_INTERFACE_VERSION = '0.3'

/**
 * Where a 0.3 client that sends no `A2A-Version` (the 0.3 SDKs do not) finds 0.3's card: under the agent's card
 * base, `<mount>/a2a/<id>/v0.3/.well-known/agent-card.json` (and `<mount>/v0.3/…` for the default agent), so the 0.3
 * SDK's `createFromUrl('<…>/a2a/<id>/v0.3')` works unchanged.
 */
export const V03_CARD_PATH = '/v0.3/.well-known/agent-card.json'

/** Which card a card request asks for: 0.3's when `A2A-Version` names 0.3, else 1.0's (a request without one included). */
export function requestedCardVersion (a2aVersion: string | string[] | undefined): '0.3' | '1.0' {
  const value = Array.isArray(a2aVersion) ? a2aVersion[0] : a2aVersion
  return value !== undefined && /^\s*0\.3(?:\.\d+)?\s*$/.test(value) ? '0.3' : '1.0'
}

/**
 * Which card the well-known path answers: as requestedCardVersion, except that with `compat` (the agent's
 * `wellKnownCard: 'compat'`) a request without `A2A-Version` — what every 0.3 client sends — gets 0.3's card.
 */
export function wellKnownCardVersion (a2aVersion: string | string[] | undefined, compat: boolean): '0.3' | '1.0' {
  return compat && a2aVersion === undefined ? '0.3' : requestedCardVersion(a2aVersion)
}

/** An agent's card as served for `version`: unchanged when the agent serves 1.0 only. */
export function cardAsServed (card: Record<string, unknown>, serves03: boolean, version: '0.3' | '1.0'): Record<string, unknown> {
  if (!serves03) return card
  return version === '0.3' ? withV03Fields(card) : withV03Interfaces(card)
}
