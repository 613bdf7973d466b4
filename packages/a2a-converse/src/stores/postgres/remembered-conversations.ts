/**
 * What a PostgreSQL conversation store remembers of the conversations it used lately (postgres-conversation-store.ts):
 * which exist (their updates go straight to the locked path; any other is first tried as new), and, unless
 * `recentStates` is 0, the JSON of the states it last wrote, for `get(…, { recent: true })`. Both least recently used
 * first (a Map keeps insertion order) and bounded; past a bound, the least recently used tenth is forgotten at once
 * (least-recently-used.ts).
 */
import { afterTrim, forgetOldest } from './least-recently-used.js'

/**
 * The kept states' JSON together, in characters (about bytes): 16 Mi, so that however long the conversations, the
 * states kept for recentStates stay a small part of a gateway's memory (docs/state.md, "Memory").
 */
export const RECENT_STATES_CHARS = 16 * 1024 * 1024

/** A conversation's key in the store's memory: its agent and contextId. */
export function keyOf (agentId: string, contextId: string): string {
  return JSON.stringify([agentId, contextId])
}

export class RememberedConversations {
  /** Keys of conversations known to exist, least recently used first. */
  readonly #known = new Map<string, true>()
  readonly #maxKnown: number
  /** The JSON of the states last written, least recently used first; at most #maxRecent. */
  readonly #recent = new Map<string, string>()
  readonly #maxRecent: number
  /** The length of the kept states' JSON, together: at most RECENT_STATES_CHARS. */
  #recentChars = 0

  /** `maxKnown` keys remembered; `maxRecent` states kept (0: none). */
  constructor (maxKnown: number, maxRecent: number) {
    this.#maxKnown = maxKnown
    this.#maxRecent = maxRecent
  }

  known (key: string): boolean {
    return this.#known.has(key)
  }

  /** The JSON of the state last written under `key`, if kept. */
  recent (key: string): string | undefined {
    return this.#recent.get(key)
  }

  /**
   * Marks the key most recently used; the least recently used one is forgotten beyond the bound. `json`: the state
   * just written, kept when the store keeps states.
   */
  remember (key: string, json?: string): void {
    this.#known.delete(key)
    this.#known.set(key, true)
    if (this.#known.size > this.#maxKnown) {
      const keep = afterTrim(this.#maxKnown)
      forgetOldest(this.#known, () => this.#known.size <= keep, (oldest) => this.#known.delete(oldest))
    }
    if (json === undefined || this.#maxRecent === 0) return
    this.#recent.set(key, json)
    this.#recentChars += json.length
    if (this.#recent.size <= this.#maxRecent && this.#recentChars <= RECENT_STATES_CHARS) return
    const [keep, keepChars] = [afterTrim(this.#maxRecent), afterTrim(RECENT_STATES_CHARS)]
    forgetOldest(this.#recent, () => this.#recent.size <= keep && this.#recentChars <= keepChars, (oldest) => { this.forgetRecent(oldest) })
  }

  /** Conversations gone (deleted, evicted): neither known nor kept. */
  forget (agentId: string, contextIds: string[]): void {
    for (const contextId of contextIds) {
      this.#known.delete(keyOf(agentId, contextId))
      this.forgetRecent(keyOf(agentId, contextId))
    }
  }

  /** No state kept for `key` (a failed or stale write leaves none to plan a turn on). */
  forgetRecent (key: string): void {
    this.#recentChars -= this.#recent.get(key)?.length ?? 0
    this.#recent.delete(key)
  }
}
