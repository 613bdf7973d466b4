/**
 * The answer log every ConversationStore that keeps one shares (packages/a2a-converse/src/stores/answer-log.ts): run by the conversation
 * store contract, so the memory, embedded and PostgreSQL stores take the same inputs and give the same answers.
 */
import type { Test } from 'tap'
import type { AnswerCoverage } from '../../../packages/a2a-converse/src/core/envelope.js'
import type { AnswerLog } from '../../../packages/a2a-converse/src/stores/answer-log.js'
import { newConversationState, type ConversationState, type ConversationStore } from '../../../packages/a2a-converse/src/stores/conversation-store.js'

export interface AnswerLogSubject {
  create (options?: { now?: () => Date, answerRetentionMs?: number, maxAnswersPerAgent?: number }): ConversationStore | Promise<ConversationStore>
}

const HOUR = 60 * 60 * 1000
let agents = 0
function agent (name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}-${++agents}`
}

let turns = 0
/** A caller's question and the agent's answer with this coverage (no answerCoverage: `coverage` undefined). */
const exchange = (question: string, coverage?: AnswerCoverage, role: 'agent' | 'human' = 'agent') => (state: ConversationState | undefined): ConversationState => {
  const next = state ?? newConversationState('ignored', 'ignored')
  const at = '2026-01-01T00:00:00.000Z'
  next.turns.push({ id: `u${++turns}`, at, role: 'user', text: question })
  next.turns.push({
    id: `a${++turns}`,
    at,
    role,
    text: 'answer',
    ...(coverage === undefined ? {} : { envelope: { author: role, answerCoverage: coverage, ownership: { state: 'ai_owned', suppressed: false } } })
  })
  return next
}

const gap = (coverage: 'unanswered' | 'partial' = 'unanswered'): AnswerCoverage => ({ availability: 'assessed', coverage, reason: 'insufficient_evidence' })
const answered: AnswerCoverage = { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' }

/** A clock the case moves by hand. */
function clock (start = Date.UTC(2026, 0, 10, 12, 30)): { now: () => Date, advance: (ms: number) => void } {
  let time = start
  return { now: () => new Date(time), advance: (ms) => { time += ms } }
}

export function answerLogContract (t: Test, subject: AnswerLogSubject): void {
  t.test('answer log: every new agent answer is logged once, by coverage, per bucket', async (t) => {
    const demo = agent('answers')
    const time = clock()
    const store = await subject.create({ now: time.now })
    const log = store.answers as AnswerLog
    t.ok(log !== undefined, 'the store keeps an answer log')
    await store.update(demo, 'c1', exchange('When are you open?', answered))
    await store.update(demo, 'c1', exchange('Do you sell gift cards?', gap('partial')))
    time.advance(HOUR)
    await store.update(demo, 'c2', exchange('What is the capital of France?', gap()))
    await store.update(demo, 'c2', exchange('hello', { availability: 'assessed', coverage: 'unclear', reason: 'ambiguous_request' }))
    await store.update(demo, 'c2', exchange('book a table', { availability: 'not_recorded' }))
    await store.update(demo, 'c2', exchange('a person wrote this', gap(), 'human'))
    await store.update(demo, 'c2', exchange('no envelope'))
    // A write that adds no answer (a takeover) logs nothing again.
    await store.update(demo, 'c2', (state) => ({ ...(state as ConversationState), ownership: 'human_owned' }))

    const day = await log.series(demo, '24h')
    t.equal(day.window, '24h')
    t.equal(day.bucketMs, HOUR)
    t.equal(day.buckets.length, 24)
    t.equal(day.to, time.now().toISOString())
    t.equal(day.buckets[23].start, '2026-01-10T13:00:00.000Z', 'the last bucket holds now, aligned to the hour')
    t.equal(day.from, '2026-01-09T14:00:00.000Z')
    t.same(day.totals, { answered: 1, partial: 1, unanswered: 1, unclear: 1, notAssessed: 1 })
    t.same(day.buckets[22], { start: '2026-01-10T12:00:00.000Z', answered: 1, partial: 1, unanswered: 0, unclear: 0, notAssessed: 0 })
    t.same(day.buckets[23], { start: '2026-01-10T13:00:00.000Z', answered: 0, partial: 0, unanswered: 1, unclear: 1, notAssessed: 1 })
    const week = await log.series(demo, '7d')
    t.equal(week.buckets.length, 28)
    t.equal(week.bucketMs, 6 * HOUR)
    t.same(week.totals, day.totals)
    t.same((await log.series(agent('nobody'), '24h')).totals, { answered: 0, partial: 0, unanswered: 0, unclear: 0, notAssessed: 0 }, 'per agent')
    t.same((await log.series(agent('nobody'), '7d')).buckets.length, 28)
  })

  t.test('answer log: unanswered questions grouped by similar text, most frequent first, paged', async (t) => {
    const demo = agent('gaps')
    const time = clock()
    const store = await subject.create({ now: time.now })
    const log = store.answers as AnswerLog
    await store.update(demo, 'c1', exchange('Do you sell gift cards?', gap()))
    time.advance(1000)
    await store.update(demo, 'c2', exchange('Gift cards: do you sell them?!', gap('partial')))
    time.advance(1000)
    await store.update(demo, 'c3', exchange('What is the capital of France?', gap()))
    time.advance(1000)
    await store.update(demo, 'c1', exchange('GIFT CARDS sell', gap()))
    time.advance(1000)
    await store.update(demo, 'c4', exchange('Is there parking?', gap()))
    await store.update(demo, 'c4', exchange('Is there parking', gap('partial')))
    await store.update(demo, 'c4', exchange('When are you open?', answered))
    await store.update(demo, 'c5', exchange('Should I sue?', { availability: 'assessed', coverage: 'unanswered', reason: 'intentional_scope_boundary' }))
    await store.update(demo, 'c5', exchange('x'.repeat(500), gap()))
    await store.update(demo, 'c5', exchange('x\u0000y ?', gap()))

    const all = await log.unanswered(demo, { window: '24h', limit: 10 })
    t.same(all.groups.map((group) => [group.key, group.count]), [
      ['cards gift sell', 3], ['parking', 2], ['capital france', 1], ['x y', 1], ['x'.repeat(200), 1]
    ], 'most frequent first, then by key; stop words and punctuation left out; scope boundaries and answers are not gaps')
    t.equal(all.next, undefined, 'one page')
    t.same(all.groups[0], {
      key: 'cards gift sell',
      text: 'GIFT CARDS sell',
      count: 3,
      partial: 1,
      lastAskedAt: '2026-01-10T12:30:03.000Z',
      conversations: ['c1', 'c2']
    }, 'the newest question, its time, its conversations most recent first')
    t.equal(all.groups[3].text, 'x\uFFFDy ?', 'U+0000 is kept as U+FFFD')
    t.equal(all.groups[4].text.length, 200, 'the question is cut to 200 characters')

    const first = await log.unanswered(demo, { window: '24h', limit: 2 })
    t.same(first.groups.map((group) => group.key), ['cards gift sell', 'parking'])
    t.same(first.next, { count: 2, key: 'parking' })
    const second = await log.unanswered(demo, { window: '24h', limit: 2, after: first.next })
    t.same(second.groups.map((group) => group.key), ['capital france', 'x y'])
    const third = await log.unanswered(demo, { window: '24h', limit: 2, after: second.next })
    t.same(third.groups.map((group) => group.key), ['x'.repeat(200)])
    t.equal(third.next, undefined)
    t.same((await log.unanswered(demo, { window: '7d', limit: 1, after: { count: 1, key: 'zzz' } })).groups, [], 'past the end')
  })

  t.test('answer log: windows, retention and the per-agent cap', async (t) => {
    const demo = agent('bounds')
    const time = clock()
    const store = await subject.create({ now: time.now, maxAnswersPerAgent: 3, answerRetentionMs: 3 * 24 * HOUR })
    const log = store.answers as AnswerLog
    await store.update(demo, 'old', exchange('old question', gap()))
    time.advance(2 * 24 * HOUR)
    t.same((await log.series(demo, '24h')).totals.unanswered, 0, 'two days old: out of the 24-hour window')
    t.same((await log.series(demo, '7d')).totals.unanswered, 1, 'in the 7-day one')
    time.advance(2 * 24 * HOUR)
    t.same((await log.series(demo, '7d')).totals.unanswered, 0, 'past the retention: gone')
    t.same((await log.unanswered(demo, { window: '7d', limit: 5 })).groups, [])
    for (const question of ['one', 'two', 'three', 'four']) {
      await store.update(demo, question, exchange(`question ${question}`, gap()))
    }
    t.same((await log.unanswered(demo, { window: '24h', limit: 5 })).groups.map((group) => group.key).sort(),
      ['four question', 'question three', 'question two'], 'only the newest 3 answers count')
    t.equal((await log.series(demo, '24h')).totals.unanswered, 3)
    time.advance(-2 * HOUR)
    t.equal((await log.series(demo, '24h')).totals.unanswered, 0, 'a clock set back: answers after the last bucket are not drawn')
  })

  t.test('answer log: both stores refuse the same queries', async (t) => {
    const store = await subject.create()
    const log = store.answers as AnswerLog
    const demo = agent('refused')
    await t.rejects(log.series(demo, 'month' as '24h'), RangeError)
    await t.rejects(log.series(demo, 'constructor' as '24h'), RangeError)
    await t.rejects(log.unanswered(demo, { window: '1y' as '24h', limit: 1 }), RangeError)
    await t.rejects(log.unanswered(demo, { window: '24h', limit: 0 }), RangeError)
    await t.rejects(log.unanswered(demo, { window: '24h', limit: 1.5 }), RangeError)
  })
}
