/**
 * a2a-converse/core: the rest of the framework-free extension core, beside the root entry's short list — every
 * envelope enum and wire type, normalisation, the decorator's and the card's parts, the routine declarations' parts,
 * every core error. docs/library.md lists both entries' names.
 */
export {
  AUTHORS, AVAILABILITIES, COVERAGES, COVERAGE_REASONS, OWNERSHIP_STATES, ROUTINE_STATUSES, INVOCATION_OUTCOMES, SLOT_TYPES,
  ENVELOPE_MEMBERS,
  type Author, type Availability, type Coverage, type CoverageReason, type OwnershipState, type RoutineStatus,
  type InvocationOutcome, type SlotType, type AnswerCoverage, type Ownership, type PendingInput, type RoutineState,
  type Invocation, type Citation, type EnvelopeMember
} from './core/envelope.js'
export { normalizeEnvelope, type NormalizedEnvelope } from './core/normalize-envelope.js'
export { stripResult, carriesEnvelopes, type EnvelopeLogger, type TurnContext } from './core/decorate.js'
export { type CardUrls, type Negotiated, type ResolvedAgent, type ResultContext } from './core/converse-extension.js'
export { TOOL_NAME_PATTERN, type SlotDeclaration, type RoutineStepDeclaration } from './core/routine-declarations.js'
export { routineInputSchema, type ToolInputSchema } from './core/tool-descriptors.js'
export { converseSkills, ASK_AGENT_SKILL, type AgentExtensionEntry, type AgentSkillEntry, type CardLike } from './core/card.js'
export { RoutineDeclarationError, ProviderTimeoutError } from './core/errors.js'
export type * from './core/wire.js'
