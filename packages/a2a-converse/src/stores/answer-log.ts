/**
 * The answer log: one record per agent answer a conversation store writes (an agent turn whose envelope carries
 * `answerCoverage`), kept apart from the conversations because a conversation keeps only its last turns. It feeds the
 * inbox's "where the knowledge falls short" view (docs/knowledge-gaps.md): answers by coverage over time, and the
 * questions the agent could not answer, grouped by similar text.
 *
 * Written by the conversation store in the same write as the turn (memory: the same update; PostgreSQL: the same
 * transaction or statement), so every instance on one database sees the same log. Bounded per agent: records older
 * than the retention are dropped, and only the newest `maxAnswersPerAgent` count (and are kept).
 *
 * What each store shares lives here: the records and the log's interface, which turns are new answers, the record
 * they make, the grouping key. The read side (windows, series, the grouped list's order and cursor) is
 * answer-queries.ts's; the in-memory log memory-answer-log.ts.
 */
import { AVAILABILITIES, COVERAGES, COVERAGE_REASONS, type Availability, type Coverage, type CoverageReason } from '../core/envelope.js'
import type { ConversationState } from './conversation-store.js'

/** Characters of a question the log keeps (the list shows it; the grouping key is made from it). */
export const MAX_QUESTION_LENGTH = 200
/** Default retention: the longest window the view shows. */
export const DEFAULT_ANSWER_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
/** Default: records kept per agent (the newest). At most about 1 kB each in memory (a 200-character question, its key). */
export const DEFAULT_MAX_ANSWERS_PER_AGENT = 10_000
/** Conversations a question group names (the most recent ones it was asked in). */
export const GROUP_CONVERSATIONS = 5

export interface AnswerLogLimits {
  /** How long a record is kept (ms). Default 7 days. */
  answerRetentionMs: number
  /** Records kept per agent, the newest. Default 10 000. */
  maxAnswersPerAgent: number
}

/** One answer as logged. */
export interface AnswerRecord {
  /** The conversation's store key (what the operator API addresses it by). */
  contextId: string
  /** When the store wrote it (epoch ms, the store's clock). */
  at: number
  availability: Availability
  coverage?: Coverage
  reason?: CoverageReason
  /** The caller's text the answer answered (the user turn before it), cut to MAX_QUESTION_LENGTH. */
  question: string
  /** questionKey(question): answers with the same key are one group. */
  key: string
}

/** The windows the view shows: their span and the width of one bucket of the chart. */
export const ANSWER_WINDOWS = {
  '24h': { spanMs: 24 * 60 * 60 * 1000, bucketMs: 60 * 60 * 1000 },
  '7d': { spanMs: 7 * 24 * 60 * 60 * 1000, bucketMs: 6 * 60 * 60 * 1000 }
} as const
export type AnswerWindow = keyof typeof ANSWER_WINDOWS
export const ANSWER_WINDOW_NAMES = Object.keys(ANSWER_WINDOWS) as AnswerWindow[]

/** Answers counted by verdict; `notAssessed`: an envelope whose availability is not `assessed` (a routine's turn). */
export interface CoverageCounts {
  answered: number
  partial: number
  unanswered: number
  unclear: number
  notAssessed: number
}

export interface AnswerBucket extends CoverageCounts {
  /** ISO 8601: the bucket's start (buckets are aligned to their width in UTC). */
  start: string
}

export interface AnswerSeries {
  window: AnswerWindow
  /** ISO 8601: the first bucket's start. */
  from: string
  /** ISO 8601: now, as the store's clock says. */
  to: string
  bucketMs: number
  /** Oldest first; the last one holds now. */
  buckets: AnswerBucket[]
  totals: CoverageCounts
}

/** A question the agent could not answer (unanswered or partial, for insufficient evidence), with its likes. */
export interface QuestionGroup {
  /** The grouping key (questionKey). */
  key: string
  /** The most recent question of the group, as asked. */
  text: string
  count: number
  /** Of `count`, how many were answered `partial` (the rest `unanswered`). */
  partial: number
  /** ISO 8601. */
  lastAskedAt: string
  /** The conversations it was asked in, most recent first, at most GROUP_CONVERSATIONS. */
  conversations: string[]
}

/** Where a page of groups continues: after the group with this count and key (most frequent first, then key). */
export interface GroupCursor {
  count: number
  key: string
}

export interface QuestionGroupPage {
  groups: QuestionGroup[]
  next?: GroupCursor
}

export interface QuestionGroupQuery {
  window: AnswerWindow
  /** Groups per page (a positive integer). */
  limit: number
  after?: GroupCursor
}

export interface AnswerLog {
  /** As the conversation store's `traced`: true when each query is worth a span (packages/a2a-converse/src/stores/traced-conversations.ts). */
  readonly traced?: boolean
  /** The agent's answers in the window, by coverage, per bucket. */
  series (agentId: string, window: AnswerWindow): Promise<AnswerSeries>
  /** The agent's unanswered questions in the window, grouped by questionKey, most frequent first. */
  unanswered (agentId: string, query: QuestionGroupQuery): Promise<QuestionGroupPage>
}

/**
 * Words that say nothing about what was asked: removed before grouping, so "Do you sell gift cards?" and "gift cards,
 * do you sell them" meet. English only, short on purpose; a question of nothing else keeps its words.
 */
const STOP_WORDS = new Set(('a an and are as at be can could do does did for from have has how i if in is it its me my ' +
  'of on or our please the their them there these this to was we what when where which who why will with would you your').split(' '))

/**
 * The grouping key of a question, deterministic and the same in every store: lowercased (NFKC), every run of
 * characters other than letters and digits a separator, stop words dropped, the remaining words deduplicated and
 * sorted (a token set), joined by one space. A question of stop words only keeps them; one without a word at all
 * ("???") keys as the empty string.
 */
export function questionKey (question: string): string {
  const words = question.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '')
  const meaningful = words.filter((word) => !STOP_WORDS.has(word))
  return [...new Set(meaningful.length > 0 ? meaningful : words)].sort(compareCodePoints).join(' ')
}

/** Strings in code point order: what PostgreSQL's "C" collation sorts by (JavaScript's `<` compares UTF-16 units). */
export function compareCodePoints (a: string, b: string): number {
  const left = [...a]
  const right = [...b]
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return (left[index].codePointAt(0) as number) - (right[index].codePointAt(0) as number)
  }
  return left.length - right.length
}

/** Text as the log keeps it: at most MAX_QUESTION_LENGTH code points, U+0000 as U+FFFD (PostgreSQL text refuses it). */
export function logText (text: string): string {
  const cut = text.length <= MAX_QUESTION_LENGTH ? text : [...text].slice(0, MAX_QUESTION_LENGTH).join('')
  return cut.replaceAll('\0', '\uFFFD')
}

/**
 * The answers a write adds: agent turns of `next` that `current` did not hold, whose envelope carries an
 * answerCoverage with a known availability (an envelope the store did not check is ignored rather than logged
 * wrong). Each is paired with the caller's turn before it.
 */
export function newAnswers (current: Pick<ConversationState, 'turns'> | undefined, next: ConversationState, at: number): AnswerRecord[] {
  const known = new Set((current?.turns ?? []).map((turn) => turn.id))
  const records: AnswerRecord[] = []
  next.turns.forEach((turn, index) => {
    const coverage = turn.envelope?.answerCoverage
    if (turn.role !== 'agent' || known.has(turn.id) || coverage === undefined || !AVAILABILITIES.includes(coverage.availability)) return
    const record: AnswerRecord = { contextId: next.contextId, at, availability: coverage.availability, question: '', key: '' }
    if (coverage.availability === 'assessed' && COVERAGES.includes(coverage.coverage as Coverage)) record.coverage = coverage.coverage
    if (coverage.availability === 'assessed' && COVERAGE_REASONS.includes(coverage.reason as CoverageReason)) record.reason = coverage.reason
    // Only a question the agent could not answer is listed (and kept): the others are counted, their text is not.
    if (isGap(record)) {
      const asked = next.turns.slice(0, index).findLast((earlier) => earlier.role === 'user')
      record.question = logText(asked?.text ?? '')
      record.key = questionKey(record.question)
    }
    records.push(record)
  })
  return records
}

/** Whether a record is a question the agent could not answer (the grouped list's rows). */
export function isGap (record: Pick<AnswerRecord, 'coverage' | 'reason'>): boolean {
  return record.reason === 'insufficient_evidence' && (record.coverage === 'unanswered' || record.coverage === 'partial')
}
