/**
 * What the operator API shows of a conversation: the view (recent turns), the list's entries and the trace (every
 * turn with the envelopes). Computed from a stored conversation; nothing here reads or writes a store.
 */
import type { ConverseEnvelope, OwnershipState, RoutineState } from '../core/envelope.js'
import {
  needsPersonReasons, type ConversationCaller, type ConversationState, type ConversationSummary, type ConversationTurn,
  type NeedsPersonReason, type TurnRole
} from '../stores/conversation-store.js'
import type { RoutineEngine } from './routine-engine.js'

export interface ConversationView {
  agentId: string
  /** How the operator API addresses the conversation (for a caller's: see conversationKey). */
  contextId: string
  /** The authenticated caller the conversation belongs to, and its contextId as that caller knows it. */
  caller?: ConversationCaller
  ownership: OwnershipState
  routine?: RoutineState
  /** The most recent turns, oldest first. */
  turns: ConversationTurn[]
}

/** A conversation in the inbox's list (and in its live events). */
export interface InboxEntry {
  contextId: string
  caller?: ConversationCaller
  ownership: OwnershipState
  /** ISO 8601: the last turn, reply, takeover or release. */
  lastActivityAt: string
  /** Why it waits for a person; empty when it does not. */
  needsPerson: NeedsPersonReason[]
  /** The last turn, its text cut short. */
  lastTurn?: { role: TurnRole, at: string, text: string }
  /** Grows with every change: of two entries for one conversation, the higher is the newer. */
  version: number
}

export interface InboxPage {
  conversations: InboxEntry[]
  /** Pass as `before` for the next page; absent on the last page. */
  next?: number
}

/** One turn of the trace: who wrote it and, for the agent's turns, the envelope the client received. */
export interface TraceTurn extends ConversationTurn {
  /** `agent` or `human` for the answering side; absent for the caller's turns. */
  author?: 'agent' | 'human'
  envelope?: ConverseEnvelope
}

export interface ConversationTrace {
  agentId: string
  contextId: string
  caller?: ConversationCaller
  ownership: OwnershipState
  ownershipChangedAt?: string
  lastActivityAt: string
  needsPerson: NeedsPersonReason[]
  routine?: RoutineState
  /** Every turn the store keeps (ConversationLimits.maxTurns), oldest first. */
  turns: TraceTurn[]
  version: number
}

/** A listing's summary as the inbox shows it. */
export function inboxEntry (
  summary: Pick<ConversationSummary, 'contextId' | 'caller' | 'ownership' | 'updatedAt' | 'needsPerson' | 'lastTurn' | 'version'>
): InboxEntry {
  const entry: InboxEntry = {
    contextId: summary.contextId,
    ownership: summary.ownership,
    lastActivityAt: summary.updatedAt,
    needsPerson: summary.needsPerson,
    version: summary.version
  }
  if (summary.caller !== undefined) entry.caller = summary.caller
  if (summary.lastTurn !== undefined) entry.lastTurn = summary.lastTurn
  return entry
}

/** A conversation as the operator API shows it: its most recent turns, and its routine as the engine sees it. */
export function conversationView (state: ConversationState, recent: number, engine: RoutineEngine | undefined): ConversationView {
  const view: ConversationView = {
    agentId: state.agentId,
    contextId: state.contextId,
    ownership: state.ownership,
    turns: state.turns.slice(-recent)
  }
  if (state.caller !== undefined) view.caller = state.caller
  if (state.routine !== undefined && engine?.declaration(state.routine.routine) !== undefined) view.routine = engine.routineState(state.routine)
  return view
}

/** A conversation's every turn with the agent turns' envelopes (the operator API's trace). */
export function conversationTrace (state: ConversationState, engine: RoutineEngine | undefined): ConversationTrace {
  const trace: ConversationTrace = {
    agentId: state.agentId,
    contextId: state.contextId,
    ownership: state.ownership,
    lastActivityAt: state.updatedAt,
    needsPerson: needsPersonReasons(state),
    turns: state.turns.map((turn) => turn.role === 'user' ? turn : { ...turn, author: turn.role }),
    version: state.version
  }
  if (state.caller !== undefined) trace.caller = state.caller
  if (state.ownershipChangedAt !== undefined) trace.ownershipChangedAt = state.ownershipChangedAt
  if (state.routine !== undefined && engine?.declaration(state.routine.routine) !== undefined) trace.routine = engine.routineState(state.routine)
  return trace
}
