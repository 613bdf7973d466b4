/**
 * The in-memory answer log, the memory conversation store's (memory-conversation-store.ts). Apart from answer-log.ts
 * (what every store shares) as postgres/postgres-answer-log.ts is: one module per store.
 */
import type { Coverage } from '../core/envelope.js'
import { GROUP_CONVERSATIONS, isGap, type AnswerLog, type AnswerLogLimits, type AnswerRecord, type AnswerSeries, type AnswerWindow, type QuestionGroup, type QuestionGroupPage, type QuestionGroupQuery } from './answer-log.js'
import { afterCursor, assertGroupQuery, assertWindow, buildSeries, compareGroups, countsFrom, windowBounds } from './answer-queries.js'

/**
 * The in-memory answer log (the memory conversation store's): per agent, records in write order, the oldest dropped
 * past the retention or the cap on every append.
 */
export class MemoryAnswerLog implements AnswerLog {
  readonly limits: Readonly<AnswerLogLimits>
  readonly #now: () => Date
  readonly #records = new Map<string, AnswerRecord[]>()

  constructor (limits: AnswerLogLimits, now: () => Date) {
    this.limits = Object.freeze({ ...limits })
    this.#now = now
  }

  /** Records of the agent the log keeps (for tests). */
  size (agentId: string): number {
    return this.#records.get(agentId)?.length ?? 0
  }

  append (agentId: string, records: readonly AnswerRecord[]): void {
    if (records.length === 0) return
    let kept = this.#records.get(agentId)
    if (kept === undefined) this.#records.set(agentId, kept = [])
    kept.push(...records)
    const oldest = this.#now().getTime() - this.limits.answerRetentionMs
    let drop = Math.max(0, kept.length - this.limits.maxAnswersPerAgent)
    while (drop < kept.length && kept[drop].at < oldest) drop++
    // Dropped in batches of an eighth of the cap, not one record per append once full: splicing the front of a full
    // array moves every record (~10,000) on each turn. Reads apply the cap and the retention exactly (#counted).
    if (drop >= Math.max(1, this.limits.maxAnswersPerAgent >> 3)) kept.splice(0, drop)
  }

  clear (): void {
    this.#records.clear()
  }

  async series (agentId: string, window: AnswerWindow): Promise<AnswerSeries> {
    assertWindow(window)
    const now = this.#now().getTime()
    const { from, bucketMs, buckets } = windowBounds(window, now)
    const counts = new Map<string, { bucket: number, coverage: Coverage | null, count: number }>()
    for (const record of this.#counted(agentId, window, now)) {
      const bucket = Math.floor((record.at - from) / bucketMs)
      if (bucket >= buckets) continue
      const coverage = record.coverage ?? null
      const id = `${bucket}/${coverage}`
      const row = counts.get(id)
      if (row === undefined) counts.set(id, { bucket, coverage, count: 1 })
      else row.count++
    }
    return buildSeries(window, now, counts.values())
  }

  async unanswered (agentId: string, query: QuestionGroupQuery): Promise<QuestionGroupPage> {
    assertGroupQuery(query)
    const now = this.#now().getTime()
    const groups = new Map<string, QuestionGroup>()
    // Newest first: a group's text, time and conversations are its most recent ones.
    for (const record of this.#counted(agentId, query.window, now).reverse()) {
      if (!isGap(record)) continue
      let group = groups.get(record.key)
      if (group === undefined) {
        groups.set(record.key, group = { key: record.key, text: record.question, count: 0, partial: 0, lastAskedAt: new Date(record.at).toISOString(), conversations: [] })
      }
      group.count++
      if (record.coverage === 'partial') group.partial++
      if (group.conversations.length < GROUP_CONVERSATIONS && !group.conversations.includes(record.contextId)) group.conversations.push(record.contextId)
    }
    const sorted = [...groups.values()].filter((group) => afterCursor(group, query.after)).sort(compareGroups)
    const page = sorted.slice(0, query.limit)
    const last = page.at(-1)
    return sorted.length > query.limit && last !== undefined ? { groups: page, next: { count: last.count, key: last.key } } : { groups: page }
  }

  /** The agent's records that count in the window now (the retention applies to reads too). */
  #counted (agentId: string, window: AnswerWindow, now: number): AnswerRecord[] {
    const from = countsFrom(window, now, this.limits.answerRetentionMs)
    const kept = this.#records.get(agentId) ?? []
    return kept.slice(Math.max(0, kept.length - this.limits.maxAnswersPerAgent)).filter((record) => record.at >= from)
  }
}
