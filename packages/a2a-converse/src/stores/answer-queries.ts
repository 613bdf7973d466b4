/**
 * The answer log's read side, the same for every store (memory-answer-log.ts, postgres/postgres-answer-log.ts): the
 * windows and their buckets, the series built from counted rows, the grouped list's order and cursor, and the checks
 * of a query. Apart from answer-log.ts (the records and what a write adds) because only the readers need it.
 */
import type { Coverage } from '../core/envelope.js'
import {
  ANSWER_WINDOW_NAMES, ANSWER_WINDOWS, compareCodePoints, MAX_QUESTION_LENGTH,
  type AnswerBucket, type AnswerSeries, type AnswerWindow, type CoverageCounts, type GroupCursor, type QuestionGroupQuery
} from './answer-log.js'

/** The window's first bucket start and bucket count, `now` in the last bucket. */
export function windowBounds (window: AnswerWindow, now: number): { from: number, bucketMs: number, buckets: number } {
  const { spanMs, bucketMs } = ANSWER_WINDOWS[window]
  const buckets = spanMs / bucketMs
  const from = (Math.floor(now / bucketMs) - buckets + 1) * bucketMs
  return { from, bucketMs, buckets }
}

/** The earliest time a record counts from: the window's start, or the retention's, whichever is later. */
export function countsFrom (window: AnswerWindow, now: number, retentionMs: number): number {
  return Math.max(windowBounds(window, now).from, now - retentionMs)
}

function emptyCounts (): CoverageCounts {
  return { answered: 0, partial: 0, unanswered: 0, unclear: 0, notAssessed: 0 }
}

/** The series from (bucket index, coverage or null, count) rows, as both stores aggregate them. */
export function buildSeries (window: AnswerWindow, now: number, rows: Iterable<{ bucket: number, coverage: Coverage | null, count: number }>): AnswerSeries {
  const { from, bucketMs, buckets: count } = windowBounds(window, now)
  const buckets: AnswerBucket[] = Array.from({ length: count }, (_, index) => ({ start: new Date(from + index * bucketMs).toISOString(), ...emptyCounts() }))
  const totals = emptyCounts()
  for (const row of rows) {
    const bucket = buckets[row.bucket]
    const member = row.coverage ?? 'notAssessed'
    bucket[member] += row.count
    totals[member] += row.count
  }
  return { window, from: new Date(from).toISOString(), to: new Date(now).toISOString(), bucketMs, buckets, totals }
}

/** Most frequent first, then by key (code points): the list's order, the cursor's. */
export function compareGroups (a: GroupCursor, b: GroupCursor): number {
  return b.count - a.count || compareCodePoints(a.key, b.key)
}

/** Whether a group comes after the cursor in the list's order. */
export function afterCursor (group: GroupCursor, cursor: GroupCursor | undefined): boolean {
  return cursor === undefined || compareGroups(group, cursor) > 0
}

/** A cursor as the operator API hands it out: base64url of `[count, key]`. */
export function encodeGroupCursor (cursor: GroupCursor): string {
  return Buffer.from(JSON.stringify([cursor.count, cursor.key])).toString('base64url')
}

/** The cursor, or undefined when the string is not one encodeGroupCursor made. */
export function decodeGroupCursor (value: string): GroupCursor | undefined {
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) return undefined
  const [count, key] = decoded as unknown[]
  if (!Number.isSafeInteger(count) || (count as number) < 1 || typeof key !== 'string' || key.length > 4 * MAX_QUESTION_LENGTH) return undefined
  return { count: count as number, key }
}

/** Refuses a query no store could answer the same way (both stores take the same inputs). */
export function assertGroupQuery (query: QuestionGroupQuery): void {
  assertWindow(query.window)
  if (!Number.isSafeInteger(query.limit) || query.limit < 1) throw new RangeError('a page of question groups needs a positive integer limit')
}

export function assertWindow (window: AnswerWindow): void {
  if (!Object.hasOwn(ANSWER_WINDOWS, window)) throw new RangeError(`an answer window is one of ${ANSWER_WINDOW_NAMES.join(', ')}`)
}
