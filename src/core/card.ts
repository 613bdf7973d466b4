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
