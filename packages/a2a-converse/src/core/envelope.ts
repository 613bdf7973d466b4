/** The converse envelope v1: what travels under `metadata[CONVERSE_EXTENSION_URI]` on agent objects. */

export const AUTHORS = ['agent', 'human'] as const
export const AVAILABILITIES = ['assessed', 'not_recorded', 'failed', 'invalid'] as const
export const COVERAGES = ['answered', 'partial', 'unanswered', 'unclear'] as const
export const COVERAGE_REASONS = [
  'sufficient_evidence',
  'insufficient_evidence',
  'conflicting_evidence',
  'ambiguous_request',
  'intentional_scope_boundary'
] as const
export const OWNERSHIP_STATES = ['ai_owned', 'human_owned'] as const
export const ROUTINE_STATUSES = ['active', 'waiting_for_input', 'waiting_for_approval', 'completed', 'abandoned'] as const
export const INVOCATION_OUTCOMES = ['started', 'reentered', 'declined', 'not_started', 'unknown_tool'] as const
/** Slot types a routine may declare; each is a JSON Schema primitive type. */
export const SLOT_TYPES = ['string', 'integer', 'number', 'boolean'] as const

export type Author = typeof AUTHORS[number]
export type Availability = typeof AVAILABILITIES[number]
export type Coverage = typeof COVERAGES[number]
export type CoverageReason = typeof COVERAGE_REASONS[number]
export type OwnershipState = typeof OWNERSHIP_STATES[number]
export type RoutineStatus = typeof ROUTINE_STATUSES[number]
export type InvocationOutcome = typeof INVOCATION_OUTCOMES[number]
export type SlotType = typeof SLOT_TYPES[number]

export interface AnswerCoverage {
  availability: Availability
  /** Present when availability is `assessed`. */
  coverage?: Coverage
  /** Present when availability is `assessed`. */
  reason?: CoverageReason
  originatingTurnId?: string
  originatingRequestId?: string
}

export interface Ownership {
  state: OwnershipState
  /** True when a person owns the conversation and the agent generated nothing for the turn. */
  suppressed: boolean
}

export interface PendingInput {
  key: string
  type: SlotType
  required: boolean
  description: string
}

export interface RoutineState {
  /** Only when the routine is exposed as a tool. */
  toolName?: string
  name: string
  status: RoutineStatus
  pendingInput: PendingInput[]
}

export interface Invocation {
  toolName: string
  outcome: InvocationOutcome
}

export interface Citation {
  documentId: string
  chunkId: string
  title: string
  /** Only when the document has one. */
  sourceUrl?: string
}

/** A complete envelope as emitted on the wire. */
export interface ConverseEnvelope {
  author?: Author
  answerCoverage: AnswerCoverage
  ownership?: Ownership
  routine?: RoutineState
  invocation?: Invocation
  citations?: Citation[]
}

/** What a provider returns: any subset of the envelope; the decorator fills the defaults. */
export type EnvelopeDraft = Partial<ConverseEnvelope>

/** The members of the envelope, in wire order. */
export const ENVELOPE_MEMBERS = ['author', 'answerCoverage', 'ownership', 'routine', 'invocation', 'citations'] as const
export type EnvelopeMember = typeof ENVELOPE_MEMBERS[number]
