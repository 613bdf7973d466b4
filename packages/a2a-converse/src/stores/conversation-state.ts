/**
 * What every conversation store does alike with the states it keeps (conversation-store.ts's types): the store key
 * of a caller's conversation, a new state, the limits applied on write, why a conversation needs a person, a
 * listing's summary and filters, the task ids a state names, and the error of a closed store.
 */
import { ConverseError, ERROR_CODES } from '../core/errors.js'
import type {
  ConversationLimits, ConversationListOptions, ConversationState, ConversationSummary, NeedsPersonReason
} from './conversation-store.js'

/** Characters of the last turn's text a listing shows. */
export const SUMMARY_TEXT_LENGTH = 200

export const DEFAULT_CONVERSATION_LIMITS: Readonly<ConversationLimits> = Object.freeze({
  maxTurns: 50,
  maxInbox: 50,
  maxTextLength: 8000
})

/**
 * The store key of a caller's conversation: conversations are keyed (agentId, key), and each caller's contextIds
 * are its own, so another caller's contextId starts a conversation of the new caller. `<caller id, URI-encoded
 * (so without "/")>/<contextId>`: two callers' keys never meet. A walk-in's key is its contextId.
 */
/** The longest key: a caller id of 128 characters URI-encoded (3 each at most), "/", a contextId of 128. */
export const MAX_CONVERSATION_KEY_LENGTH = 3 * 128 + 1 + 128

export function conversationKey (callerId: string | undefined, contextId: string): string {
  return callerId === undefined ? contextId : `${encodeURIComponent(callerId)}/${contextId}`
}

/** The contextId the conversation's client knows (the key of a walk-in's conversation is its contextId). */
export function clientContextId (state: Pick<ConversationState, 'contextId' | 'caller'>): string {
  return state.caller?.contextId ?? state.contextId
}

/** A new conversation's state, AI-owned with no turns: what an `update` fn usually starts from. */
export function newConversationState (agentId: string, contextId: string, at: Date = new Date()): ConversationState {
  const iso = at.toISOString()
  return { agentId, contextId, ownership: 'ai_owned', turns: [], inbox: [], version: 0, createdAt: iso, updatedAt: iso }
}

/**
 * The state with the limits applied: only the last `maxTurns` turns and `maxInbox` replies, texts cut to
 * `maxTextLength`, and `needsPerson` derived from the result. Returns a new object (entries that needed no cut
 * are shared); every store implementation applies it on write. Tolerates a state without `turns` / `inbox` (they become []).
 */
export function applyConversationLimits (state: ConversationState, limits: ConversationLimits = DEFAULT_CONVERSATION_LIMITS): ConversationState {
  const cut = <T extends { text: string }>(entry: T): T =>
    entry.text.length > limits.maxTextLength ? { ...entry, text: entry.text.slice(0, limits.maxTextLength) } : entry
  const stored = {
    ...state,
    turns: last(state.turns ?? [], limits.maxTurns).map(cut),
    inbox: last(state.inbox ?? [], limits.maxInbox).map(cut)
  }
  stored.needsPerson = needsPersonReasons(stored)
  return stored
}

/**
 * Why the conversation waits for a person (empty: it does not). The verdicts count while the agent's answer is the
 * conversation's last word (a person's reply after it settles them).
 */
export function needsPersonReasons (state: Pick<ConversationState, 'ownership' | 'routine' | 'turns'>): NeedsPersonReason[] {
  const reasons: NeedsPersonReason[] = []
  if (state.routine?.status === 'waiting_for_approval') reasons.push('waiting_for_approval')
  const turns = state.turns
  const lastAnswer = turns.findLast((turn) => turn.role !== 'user')
  const coverage = lastAnswer?.role === 'agent' ? lastAnswer.envelope?.answerCoverage : undefined
  if (coverage?.coverage === 'unanswered' && coverage.reason === 'insufficient_evidence') reasons.push('unanswered')
  if (coverage?.reason === 'intentional_scope_boundary') reasons.push('scope_boundary')
  if (state.ownership === 'human_owned' && turns.at(-1)?.role === 'user') reasons.push('waiting_for_reply')
  return reasons
}

/** The listing's view of a stored state. */
export function conversationSummary (state: ConversationState, position: number): ConversationSummary {
  const summary: ConversationSummary = {
    agentId: state.agentId,
    contextId: state.contextId,
    ownership: state.ownership,
    version: state.version,
    updatedAt: state.updatedAt,
    position,
    needsPerson: needsPersonReasons(state)
  }
  if (state.caller !== undefined) summary.caller = state.caller
  const lastTurn = state.turns.at(-1)
  if (lastTurn !== undefined) summary.lastTurn = { role: lastTurn.role, at: lastTurn.at, text: lastTurn.text.slice(0, SUMMARY_TEXT_LENGTH) }
  return summary
}

/** Refuses a `before` that is not a positive safe integer (both stores take the same cursors). */
export function assertListOptions (options: ConversationListOptions): void {
  if (options.before !== undefined && (!Number.isSafeInteger(options.before) || options.before < 1)) {
    throw new RangeError('a listing\'s `before` must be a positive integer (a previous summary\'s position)')
  }
}

/** Whether a summary passes a listing's filters (position, owner, needs a person). */
export function matchesListOptions (summary: Pick<ConversationSummary, 'position' | 'ownership' | 'needsPerson'>, options: ConversationListOptions): boolean {
  if (options.before !== undefined && summary.position >= options.before) return false
  if (options.ownership !== undefined && summary.ownership !== options.ownership) return false
  if (options.needsPerson !== undefined && (summary.needsPerson.length > 0) !== options.needsPerson) return false
  return true
}

function last<T> (entries: readonly T[], count: number): T[] {
  return entries.slice(Math.max(0, entries.length - count))
}

/** Every taskId the state mentions (its routine's and its turns' and replies'), without duplicates. */
export function conversationTaskIds (state: ConversationState): string[] {
  const ids = new Set<string>()
  if (state.routine?.taskId !== undefined) ids.add(state.routine.taskId)
  for (const entry of [...state.turns, ...state.inbox]) if (entry.taskId !== undefined) ids.add(entry.taskId)
  return [...ids]
}

/** Any store method called after `close()`. */
export class ConversationStoreClosedError extends ConverseError {
  constructor () {
    super(ERROR_CODES.STORE_CLOSED, 'the conversation store is closed')
  }
}
