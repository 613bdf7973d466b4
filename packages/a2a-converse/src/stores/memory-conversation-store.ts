/**
 * In-memory ConversationStore: one process, no persistence. Updates are serialised per conversation with a
 * promise chain per key (no global lock). Memory is bounded: at most `maxConversations` conversations (the least
 * recently updated idle one is evicted first), each bounded by ConversationLimits (turns, inbox, text length).
 */
import { cloneData } from '../core/clone-data.js'
import { CallerCapError } from './caller-key.js'
import { KeyedLock } from './keyed-lock.js'
import { DEFAULT_ANSWER_RETENTION_MS, DEFAULT_MAX_ANSWERS_PER_AGENT, newAnswers, type AnswerLogLimits } from './answer-log.js'
import { MemoryAnswerLog } from './memory-answer-log.js'
import {
  DEFAULT_CONVERSATION_LIMITS, ConversationStoreClosedError, applyConversationLimits, assertListOptions, conversationSummary,
  conversationTaskIds, matchesListOptions, type ConversationLimits, type ConversationListOptions, type ConversationState,
  type ConversationStore, type ConversationSummary, type ConversationUpdate, type ConversationUpdateOptions
} from './conversation-store.js'
import { integerOption } from '../core/integer-option.js'

export interface MemoryConversationStoreOptions extends Partial<ConversationLimits>, Partial<AnswerLogLimits> {
  /** Conversations kept; beyond it the least recently updated one that no update holds is evicted. Default 10000. */
  maxConversations?: number
  /** Conversations one caller (the `owner` of the update that created them) keeps per agent. Default 1000. */
  maxConversationsPerCaller?: number
  /** Clock for createdAt / updatedAt. Default: `() => new Date()`. */
  now?: () => Date
}

export const DEFAULT_MAX_CONVERSATIONS = 10_000
/** A tenth of DEFAULT_MAX_CONVERSATIONS, as for open tasks (memory-task-store.ts): ten callers fit before it is full. */
export const DEFAULT_MAX_CONVERSATIONS_PER_CALLER = 1_000

/** Keys as JSON arrays: no separator can make two different (agentId, contextId) pairs collide. */
function keyOf (agentId: string, id: string): string {
  return JSON.stringify([agentId, id])
}

export class MemoryConversationStore implements ConversationStore {
  readonly limits: Readonly<ConversationLimits>
  readonly maxConversations: number
  readonly maxConversationsPerCaller: number
  /** The answers `update` wrote (answer-log.ts): in memory, bounded per agent. */
  readonly answers: MemoryAnswerLog
  readonly #now: () => Date
  /** Insertion order is update order: the first entry is the least recently updated. */
  readonly #conversations = new Map<string, ConversationState>()
  /** Each conversation's position in the write order (a listing's cursor), from #writes. */
  readonly #positions = new Map<string, number>()
  #writes = 0
  /** keyOf(agentId, taskId) → contextId. */
  readonly #tasks = new Map<string, string>()
  /** The tail of each conversation's chain of updates; absent when no update holds or waits for the key. */
  readonly #locks = new KeyedLock()
  /** Conversation key → the owner (caller key) whose update created it. */
  readonly #owners = new Map<string, string>()
  /** keyOf(agentId, owner) → that owner's conversation keys. */
  readonly #byOwner = new Map<string, Set<string>>()
  #closed = false

  constructor (options: MemoryConversationStoreOptions = {}) {
    this.limits = Object.freeze({
      maxTurns: integerOption('maxTurns', options.maxTurns, DEFAULT_CONVERSATION_LIMITS.maxTurns),
      maxInbox: integerOption('maxInbox', options.maxInbox, DEFAULT_CONVERSATION_LIMITS.maxInbox),
      maxTextLength: integerOption('maxTextLength', options.maxTextLength, DEFAULT_CONVERSATION_LIMITS.maxTextLength)
    })
    this.maxConversations = integerOption('maxConversations', options.maxConversations, DEFAULT_MAX_CONVERSATIONS)
    this.maxConversationsPerCaller = integerOption('maxConversationsPerCaller', options.maxConversationsPerCaller, DEFAULT_MAX_CONVERSATIONS_PER_CALLER)
    this.#now = options.now ?? (() => new Date())
    this.answers = new MemoryAnswerLog({
      answerRetentionMs: integerOption('answerRetentionMs', options.answerRetentionMs, DEFAULT_ANSWER_RETENTION_MS),
      maxAnswersPerAgent: integerOption('maxAnswersPerAgent', options.maxAnswersPerAgent, DEFAULT_MAX_ANSWERS_PER_AGENT)
    }, this.#now)
  }

  /** Conversations currently held (for tests and metrics). */
  get size (): number {
    return this.#conversations.size
  }

  async get (agentId: string, contextId: string): Promise<ConversationState | undefined> {
    this.#assertOpen()
    const state = this.#conversations.get(keyOf(agentId, contextId))
    return state === undefined ? undefined : cloneData(state)
  }

  async exists (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    return this.#conversations.has(keyOf(agentId, contextId))
  }

  async list (agentId: string, options: ConversationListOptions = {}): Promise<ConversationSummary[]> {
    this.#assertOpen()
    assertListOptions(options)
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    const out: ConversationSummary[] = []
    for (const [key, state] of [...this.#conversations].reverse()) {
      if (out.length >= limit) break
      if (state.agentId !== agentId) continue
      const summary = conversationSummary(state, this.#positions.get(key) as number)
      if (matchesListOptions(summary, options)) out.push(summary)
    }
    return out
  }

  async findContextByTaskId (agentId: string, taskId: string): Promise<string | undefined> {
    this.#assertOpen()
    return this.#tasks.get(keyOf(agentId, taskId))
  }

  /** Conversations of the agent `owner` created and the store still keeps. */
  conversationsOf (agentId: string, owner: string): number {
    return this.#byOwner.get(keyOf(agentId, owner))?.size ?? 0
  }

  async admit (agentId: string, owner: string): Promise<void> {
    this.#assertOpen()
    if (this.conversationsOf(agentId, owner) < this.maxConversationsPerCaller) return
    throw new CallerCapError('MAX_CONVERSATIONS_PER_CALLER', this.maxConversationsPerCaller,
      `this caller has ${this.maxConversationsPerCaller} conversations (MAX_CONVERSATIONS_PER_CALLER): continue one of them`)
  }

  async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>, options: ConversationUpdateOptions = {}): Promise<R | ConversationState> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    return await this.#locks.run(key, async () => {
      const current = this.#conversations.get(key)
      const draft = await fn(current === undefined ? undefined : cloneData(current))
      if (draft === undefined) return draft
      if (draft === null || typeof draft !== 'object') {
        throw new TypeError('a conversation update must return the conversation state')
      }
      const now = this.#now()
      const at = now.toISOString()
      // The clone detaches the stored state from the caller's object (and refuses what JSON could not hold).
      const next = applyConversationLimits({
        ...cloneData(draft),
        agentId,
        contextId,
        version: (current?.version ?? 0) + 1,
        createdAt: current?.createdAt ?? at,
        updatedAt: at
      }, this.limits)
      this.#write(key, current, next)
      this.answers.append(agentId, newAnswers(current, next, now.getTime()))
      if (current === undefined && options.owner !== undefined) this.#own(key, agentId, options.owner)
      return cloneData(next)
    })
  }

  async delete (agentId: string, contextId: string): Promise<boolean> {
    this.#assertOpen()
    const key = keyOf(agentId, contextId)
    return await this.#locks.run(key, async () => {
      const current = this.#conversations.get(key)
      if (current === undefined) return false
      this.#remove(key, current)
      return true
    })
  }

  /** Waits for updates already running or queued, then drops everything. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#locks.idle()
    this.#conversations.clear()
    this.#positions.clear()
    this.#tasks.clear()
    this.#owners.clear()
    this.#byOwner.clear()
    this.answers.clear()
  }

  /** Records a new conversation's owner; past the owner's bound its own least recently updated idle one goes. */
  #own (key: string, agentId: string, owner: string): void {
    const ownerKey = keyOf(agentId, owner)
    let keys = this.#byOwner.get(ownerKey)
    if (keys === undefined) {
      keys = new Set()
      this.#byOwner.set(ownerKey, keys)
    }
    keys.add(key)
    this.#owners.set(key, ownerKey)
    if (keys.size <= this.maxConversationsPerCaller) return
    for (const [candidate, state] of this.#conversations) {
      // The new one is busy (its update holds it): never the one that goes.
      if (keys.has(candidate) && !this.#locks.busy(candidate)) {
        this.#remove(candidate, state)
        return
      }
    }
  }

  #assertOpen (): void {
    if (this.#closed) throw new ConversationStoreClosedError()
  }

  #write (key: string, previous: ConversationState | undefined, next: ConversationState): void {
    if (previous !== undefined) this.#unindex(previous)
    this.#conversations.delete(key) // re-inserted last: most recently updated
    this.#conversations.set(key, next)
    this.#positions.set(key, ++this.#writes)
    for (const taskId of conversationTaskIds(next)) this.#tasks.set(keyOf(next.agentId, taskId), next.contextId)
    this.#evict()
  }

  #remove (key: string, state: ConversationState): void {
    const ownerKey = this.#owners.get(key)
    if (ownerKey !== undefined) {
      this.#owners.delete(key)
      const keys = this.#byOwner.get(ownerKey) as Set<string>
      keys.delete(key)
      if (keys.size === 0) this.#byOwner.delete(ownerKey)
    }
    this.#unindex(state)
    this.#conversations.delete(key)
    this.#positions.delete(key)
  }

  #unindex (state: ConversationState): void {
    for (const taskId of conversationTaskIds(state)) {
      const taskKey = keyOf(state.agentId, taskId)
      if (this.#tasks.get(taskKey) === state.contextId) this.#tasks.delete(taskKey)
    }
  }

  /** Least recently updated first, skipping conversations an update holds or waits for. */
  #evict (): void {
    if (this.#conversations.size <= this.maxConversations) return
    for (const [key, state] of this.#conversations) {
      if (this.#conversations.size <= this.maxConversations) return
      if (this.#locks.busy(key)) continue
      this.#remove(key, state)
    }
  }
}
