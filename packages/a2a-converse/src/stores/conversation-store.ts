/**
 * Conversation state behind an interface: routine progress, ownership (human takeover), recent turns and the
 * person's replies not yet delivered. Keyed by (agentId, contextId). Async everywhere so that a PostgreSQL
 * implementation (one row per conversation, `SELECT … FOR UPDATE` in a transaction around `update`) can replace
 * the in-memory one without changing callers. Tasks themselves stay in the SDK's TaskStore.
 */
import type { ConverseEnvelope, OwnershipState } from '../core/envelope.js'
import type { RoutineStatus } from '../core/envelope.js'
import type { AnswerLog } from './answer-log.js'
import type { ServerCallContext } from '@a2a-js/sdk/server'

export type TurnRole = 'user' | 'agent' | 'human'

export interface ConversationTurn {
  id: string
  /** ISO 8601. */
  at: string
  role: TurnRole
  text: string
  taskId?: string
  messageId?: string
  /**
   * A user turn's content digest (messageContentDigest): a retry of its messageId must carry the same content.
   * Absent on turns an earlier version stored (any content then counts as the same).
   */
  content?: string
  /**
   * A user turn answered by a Message: that Message as the client received it (ProtoJSON, serialized), so a retry
   * gets it again byte for byte. Kept as a string so both stores hold it exactly (jsonb would change U+0000).
   * Bounded with the turn: by maxTurns, and by what one reply can hold (an agent's reply, not the client's body).
   */
  reply?: string
  /** An agent turn's envelope as the client received it (the inbox's trace shows it). */
  envelope?: ConverseEnvelope
}

/** A person's reply (operator API) waiting to be delivered to a task / stream. */
export interface HumanReply {
  id: string
  /** ISO 8601. */
  at: string
  text: string
  /** The task it belongs to, when known. */
  taskId?: string
}

/** The routine running in the conversation, with the task that carries it. */
/**
 * Where one routine run stands. Plain JSON (strings, numbers, booleans, objects): a store can persist it as
 * is and hand it back on the next turn. Engine operations never mutate it; they return a new object that keeps
 * any extra member the caller added (e.g. a `taskId`).
 */
export interface RoutineProgress {
  /** The routine's declared `name`. */
  routine: string
  status: RoutineStatus
  /** Accepted slot values, already coerced to the slot types, keyed by declared slot key. */
  values: Record<string, unknown>
  /** Index of the current step in the declared `steps`; 0 when the routine declares none. */
  stepIndex: number
  /** The current step's id; absent when the routine declares no steps. */
  step?: string
  /** How the approval step ended, when it did. */
  approval?: 'approved' | 'declined'
  /** ISO 8601 timestamps. */
  startedAt: string
  updatedAt: string
  /** Set when the status becomes `completed` or `abandoned`. */
  endedAt?: string
}

export interface ConversationRoutine extends RoutineProgress {
  taskId?: string
}

/** The authenticated caller a conversation belongs to, and its contextId as that caller knows it. */
export interface ConversationCaller {
  id: string
  contextId: string
}

export interface ConversationState {
  agentId: string
  /** The store's key: the client's contextId for a walk-in, `conversationKey(caller, contextId)` for a caller. */
  contextId: string
  /** Absent for a walk-in's conversation. */
  caller?: ConversationCaller
  ownership: OwnershipState
  /** ISO 8601: the last takeover or release. */
  ownershipChangedAt?: string
  /** The current (or last) routine of the conversation. */
  routine?: ConversationRoutine
  /** The most recent turns, oldest first; bounded (see ConversationLimits.maxTurns). */
  turns: ConversationTurn[]
  /** Undelivered human replies, oldest first; bounded (see ConversationLimits.maxInbox). */
  inbox: HumanReply[]
  /** Set by the store on every write (see needsPersonReasons): why the conversation waits for a person, if it does. */
  needsPerson?: NeedsPersonReason[]
  /** Set by the store: 1 on creation, +1 on every update. A PostgreSQL store may use it for optimistic checks. */
  version: number
  /** Set by the store (ISO 8601). */
  createdAt: string
  updatedAt: string
}

/**
 * Why a conversation needs a person (the inbox's filter):
 * - `waiting_for_approval`: its routine waits for a yes or no;
 * - `unanswered`: the agent's last answer was `unanswered` / `insufficient_evidence`;
 * - `scope_boundary`: the agent's last answer was an `intentional_scope_boundary`;
 * - `waiting_for_reply`: a person owns it and the caller's last turn (suppressed) has no reply yet.
 */
export const NEEDS_PERSON_REASONS = ['waiting_for_approval', 'unanswered', 'scope_boundary', 'waiting_for_reply'] as const
export type NeedsPersonReason = typeof NEEDS_PERSON_REASONS[number]

/** A conversation in a listing. */
export interface ConversationSummary {
  agentId: string
  contextId: string
  caller?: ConversationCaller
  ownership: OwnershipState
  version: number
  /** ISO 8601: the last activity (a turn, a reply, a takeover or release). */
  updatedAt: string
  /** Where it stands in the store's write order (higher: more recent); a listing continues below it (`before`). */
  position: number
  needsPerson: NeedsPersonReason[]
  /** The last turn, its text cut to SUMMARY_TEXT_LENGTH characters. */
  lastTurn?: { role: TurnRole, at: string, text: string }
}

export interface ConversationListOptions {
  /** At most this many (rounded up); default: all. */
  limit?: number
  /** Only conversations written before this position (a previous page's last `position`). */
  before?: number
  ownership?: OwnershipState
  /** true: only conversations that need a person; false: only those that do not. */
  needsPerson?: boolean
}

/**
 * An update's next state from the current one; undefined (when the type allows it) writes nothing: the update resolves
 * undefined, and the conversation stays as it was (a new one is not created).
 */
export type ConversationUpdate<R extends ConversationState | undefined = ConversationState> = (state: ConversationState | undefined) => Promise<R> | R

export interface ConversationUpdateOptions {
  /** The request's caller key (caller-key.ts): a conversation it creates is that caller's, for per-caller bounds. */
  owner?: string
  /**
   * The conversation as the caller read it moments ago (the conversation executor reads it to recognise a retry
   * before the turn runs). A store may call `fn` on it first and write only if the conversation is still at that
   * version — one statement instead of a read under a lock, then the write — and otherwise take its usual path (`fn`
   * called again on the latest state). The memory store, whose read costs nothing, ignores it.
   */
  read?: ConversationState
  /** The request behind the update: a store may leave its write to the request's task saves (`joinsTaskSaves`). */
  context?: ServerCallContext
  /** The caller looked the conversation up moments ago and found none (the conversation executor's retry check). */
  foundNone?: boolean
  /** Its id was made for this request (no contextId sent): no other request, on any instance, can know it. */
  newContextId?: boolean
}

export interface ConversationGetOptions {
  /**
   * true: the store may answer with the state it last read or wrote itself, without asking its database (issue 43:
   * a turn's one round trip), when it keeps such states (PostgresConversationStoreOptions.recentStates). For a caller
   * that hands the state back as ConversationUpdateOptions.read: the write is made only if the conversation is still at
   * that version, so a state another writer has since changed costs the usual path, never a lost update.
   */
  recent?: boolean
}

export interface ConversationStore {
  /** What the store keeps of each conversation (turns, undelivered replies, text length). */
  readonly limits: Readonly<ConversationLimits>
  /**
   * Optional: the log of agent answers (packages/a2a-converse/src/stores/answer-log.ts), written by `update` with the turns it adds (an
   * agent turn whose envelope has `answerCoverage`). The gateway's stores keep one; the inbox's knowledge-gaps view
   * needs it.
   */
  readonly answers?: AnswerLog
  /**
   * Optional: true when each call is worth a span of its own (packages/a2a-converse/src/stores/traced-conversations.ts): a store whose calls
   * are transactions that may wait (PostgreSQL, embedded). Absent for the memory store, whose call costs a few
   * microseconds, less than its span would (docs/observability.md).
   */
  readonly traced?: boolean
  /**
   * Optional: true when `update` may leave its write to the request's deferred task saves (deferred-task-saves.ts:
   * answered before it is stored, the reply waiting for it; docs/state.md) and makes the request's pending reservation
   * before any write it does not leave there (alone, or ahead of an insert in its statement), so the executor leaves a
   * new task's reservation to those saves too (TaskReservations.reserveWithSaves).
   */
  readonly joinsTaskSaves?: boolean
  /** The conversation, or undefined. The result is a copy: changing it changes nothing stored. */
  get (agentId: string, contextId: string, options?: ConversationGetOptions): Promise<ConversationState | undefined>
  /**
   * Read-modify-write, serialised per conversation: `fn` sees the latest state (undefined for a new
   * conversation, else a private copy it may mutate) and returns the next one; updates of the same
   * (agentId, contextId) run one after another, never interleaved, so none is lost. Updates of different
   * conversations do not wait for each other. When `fn` throws (or rejects), nothing is written, the error
   * propagates, and the next update of that conversation runs normally.
   * `fn` may be called more than once (a store may try an optimistic path first); only the state returned by the
   * last call is written, so `fn` must have no effects beyond computing the next state from its argument (closures
   * that record the last computed plan are fine).
   * The store sets `agentId`, `contextId`, `version`, `createdAt` and `updatedAt`, and applies its limits
   * (turns, inbox, text length). Returns the stored state (a copy), or undefined when `fn` returned undefined (nothing
   * written: the way a caller leaves an update it cannot finish yet without throwing). A store without `admit` that
   * bounds conversations per caller refuses here (CallerCapError, nothing written) an update that would create one
   * more of `options.owner` at its bound.
   */
  update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>, options?: ConversationUpdateOptions): Promise<R | ConversationState>
  /**
   * Optional: refuses (CallerCapError, -32000 at the endpoint) a new conversation of `owner` when the store bounds
   * conversations per caller and `owner` is at that bound. Asked before a request runs, so the refusal is an answer
   * and nothing is written; an update that creates one anyway (two at once) stays within the bound by evicting that
   * owner's own least recently updated idle conversation, never another owner's. A store whose write counts
   * (PostgreSQL, embedded: the insert refuses in its statement) has none: `update` refuses instead.
   */
  admit? (agentId: string, owner: string): Promise<void>
  /** True when the conversation exists. */
  exists (agentId: string, contextId: string): Promise<boolean>
  /** Conversations of an agent, most recently updated first, filtered and paged as the options say. */
  list (agentId: string, options?: ConversationListOptions): Promise<ConversationSummary[]>
  /** The contextId of the conversation that holds the task (its routine's or a turn's taskId), or undefined. */
  findContextByTaskId (agentId: string, taskId: string): Promise<string | undefined>
  /** Removes the conversation; true when it existed. Serialised with updates of the same conversation. */
  delete (agentId: string, contextId: string): Promise<boolean>
  /** Releases resources. Afterwards every method rejects with ConversationStoreClosedError. */
  close (): Promise<void>
}

export interface ConversationLimits {
  /** Turns kept per conversation (the most recent). Default 50. */
  maxTurns: number
  /** Undelivered human replies kept per conversation (the most recent). Default 50. */
  maxInbox: number
  /** Characters kept of a turn's or reply's text (longer text is cut). Default 8000. */
  maxTextLength: number
}

export {
  DEFAULT_CONVERSATION_LIMITS, MAX_CONVERSATION_KEY_LENGTH, ConversationStoreClosedError, applyConversationLimits, assertListOptions,
  clientContextId, conversationKey, conversationSummary, conversationTaskIds, matchesListOptions, needsPersonReasons,
  newConversationState, SUMMARY_TEXT_LENGTH
} from './conversation-state.js'
