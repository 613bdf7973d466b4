/**
 * The answer log on PostgreSQL (packages/a2a-converse/src/stores/answer-log.ts): one row per logged answer in `converse_answers` (migration
 * 0009), written by the conversation store in the statement that writes the conversation the answer is added to.
 * Reads aggregate in the database, so what leaves it is bounded by the page (groups) or the window (buckets), never
 * by the number of answers. What counts is what the memory log keeps: the newest `maxAnswersPerAgent` rows of the
 * agent within the retention; rows past those bounds are deleted by the writes, at most once a minute per agent and
 * process (a delete per turn would read the cap's rows every time).
 */
import type pg from 'pg'
import type { Coverage } from '../../core/envelope.js'
import {
  GROUP_CONVERSATIONS, type AnswerLog, type AnswerLogLimits,
  type AnswerRecord, type AnswerSeries, type AnswerWindow, type QuestionGroup, type QuestionGroupPage, type QuestionGroupQuery
} from '../answer-log.js'
import { assertGroupQuery, assertWindow, buildSeries, countsFrom, windowBounds } from '../answer-queries.js'
import { ANSWERS_TABLE } from './migrations.js'

/** How often a process prunes an agent's rows at most. */
export const PRUNE_INTERVAL_MS = 60_000
/** Agents whose last prune a process remembers (beyond it, it forgets them all and prunes each on its next write). */
const REMEMBERED_PRUNES = 1000

/** The first row that counts: the cap's newest row ($agent, $offset = cap - 1), or every row when there are fewer. */
const FIRST_COUNTED = (agent: string, offset: string): string =>
  `coalesce((select seq from ${ANSWERS_TABLE} where agent_id = ${agent} order by seq desc offset ${offset} limit 1), 0)`

/**
 * Inserts the records ($records: a JSON array of AnswerRecord) of the conversation ($context) of the agent ($agent).
 * `from`: what the rows depend on; `order`: what orders them before each array's own order (several conversations).
 */
export const insertAnswers = (agent: string, context: string, records: string, from = '', order = ''): string =>
  `insert into ${ANSWERS_TABLE} (agent_id, context_id, at, availability, coverage, reason, question, question_key)
    select ${agent}, ${context}, r.at, r.availability, r.coverage, r.reason, r.question, r.key
    from ${from}rows from (jsonb_to_recordset(${records}::jsonb)
      as (at bigint, availability text, coverage text, reason text, question text, key text)) with ordinality
      as r (at, availability, coverage, reason, question, key, ord)
    order by ${order}r.ord`

/** Deletes the agent's rows past the retention ($oldest, epoch ms) or the cap ($cap); nothing when $cap is NULL. */
export const pruneAnswers = (agent: string, cap: string, oldest: string): string =>
  `delete from ${ANSWERS_TABLE} where ${cap}::int is not null and agent_id = ${agent}
    and (at < ${oldest}::bigint or seq < ${FIRST_COUNTED(agent, `${cap}::int - 1`)})`

const SERIES = `select ((at - $2::bigint) / $3::bigint)::int as bucket, coverage, count(*)::int as count
  from ${ANSWERS_TABLE}
  where agent_id = $1 and at >= $4::bigint and at < $5::bigint and seq >= ${FIRST_COUNTED('$1', '$6::int')}
  group by 1, 2`

/**
 * A page of the agent's unanswered questions ($1) since $2, grouped by key: most frequent first, then by key (the
 * column's "C" collation: code point order, as the memory log sorts), after the cursor ($4 count, $5 key; NULL: from
 * the start), $6 groups at most. Each with its newest question and time and its most recent conversations.
 */
const GROUPS = `with counted as (
    select seq, context_id, at, coverage, question, question_key from ${ANSWERS_TABLE}
    where agent_id = $1 and at >= $2::bigint and seq >= ${FIRST_COUNTED('$1', '$3::int')}
      and reason = 'insufficient_evidence' and coverage in ('unanswered', 'partial')
  ), page as (
    select question_key, count(*)::int as count, (count(*) filter (where coverage = 'partial'))::int as partial,
      (array_agg(question order by seq desc))[1] as text, max(at) as last_at
    from counted group by question_key
    having $4::int is null or count(*) < $4::int or (count(*) = $4::int and question_key > $5::text)
    order by count(*) desc, question_key
    limit $6
  ), recent as (
    select question_key, context_id, row_number() over (partition by question_key order by max(seq) desc) as rank
    from counted where question_key in (select question_key from page) group by question_key, context_id
  )
  select page.question_key as key, page.count, page.partial, page.text, page.last_at,
    (select array_agg(context_id order by rank) from recent where recent.question_key = page.question_key and rank <= ${GROUP_CONVERSATIONS}) as conversations
  from page order by page.count desc, page.question_key`

interface GroupRow {
  key: string
  count: number
  partial: number
  text: string
  last_at: string
  conversations: string[]
}

export type AnswerQuery = <R extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>

/** The JSON the insert statements read (jsonb_to_recordset): the records' members, nothing else. */
export function answersJson (records: readonly AnswerRecord[]): string {
  return JSON.stringify(records.map(({ at, availability, coverage, reason, question, key }) => ({ at, availability, coverage, reason, question, key })))
}

export class PostgresAnswerLog implements AnswerLog {
  /** Each query is a SQL statement: a span of its own under the operator's request. */
  readonly traced = true
  readonly limits: Readonly<AnswerLogLimits>
  readonly #query: AnswerQuery
  readonly #now: () => Date
  /** Agent id → when this process last pruned its rows (epoch ms). */
  readonly #pruned = new Map<string, number>()

  constructor (query: AnswerQuery, limits: AnswerLogLimits, now: () => Date) {
    this.#query = query
    this.limits = Object.freeze({ ...limits })
    this.#now = now
  }

  /**
   * The prune parameters of a write that adds answers of the agent at `now`: [cap, oldest] when a prune is due (then
   * counted as done), [null, null] otherwise.
   */
  pruneParameters (agentId: string, now: number): [number | null, number | null] {
    const last = this.#pruned.get(agentId)
    if (last !== undefined && now - last < PRUNE_INTERVAL_MS && now >= last) return [null, null]
    if (this.#pruned.size >= REMEMBERED_PRUNES) this.#pruned.clear()
    this.#pruned.set(agentId, now)
    return [this.limits.maxAnswersPerAgent, now - this.limits.answerRetentionMs]
  }

  async series (agentId: string, window: AnswerWindow): Promise<AnswerSeries> {
    assertWindow(window)
    const now = this.#now().getTime()
    const { from, bucketMs, buckets } = windowBounds(window, now)
    const { rows } = await this.#query<{ bucket: number, coverage: Coverage | null, count: number }>(SERIES, [
      agentId, from, bucketMs, countsFrom(window, now, this.limits.answerRetentionMs), from + buckets * bucketMs, this.limits.maxAnswersPerAgent - 1
    ])
    return buildSeries(window, now, rows)
  }

  async unanswered (agentId: string, query: QuestionGroupQuery): Promise<QuestionGroupPage> {
    assertGroupQuery(query)
    const now = this.#now().getTime()
    const { rows } = await this.#query<GroupRow>(GROUPS, [
      agentId, countsFrom(query.window, now, this.limits.answerRetentionMs), this.limits.maxAnswersPerAgent - 1,
      query.after?.count ?? null, query.after?.key ?? null, query.limit + 1
    ])
    const groups: QuestionGroup[] = rows.slice(0, query.limit).map((row) => ({
      key: row.key,
      text: row.text,
      count: row.count,
      partial: row.partial,
      lastAskedAt: new Date(Number(row.last_at)).toISOString(),
      conversations: row.conversations
    }))
    const last = groups.at(-1)
    return rows.length > query.limit && last !== undefined ? { groups, next: { count: last.count, key: last.key } } : { groups }
  }
}
