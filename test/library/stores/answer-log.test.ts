/**
 * The answer log's shared parts (packages/a2a-converse/src/stores/answer-log.ts, answer-queries.ts, memory-answer-log.ts): the grouping key, the order, the cut, which turns a write
 * logs, the cursor; and the PostgreSQL log's prune schedule. What the stores do with them: answer-log-contract.ts.
 */
import t from 'tap'
import { compareCodePoints, logText, newAnswers, questionKey } from '../../../packages/a2a-converse/src/stores/answer-log.js'
import { decodeGroupCursor, encodeGroupCursor } from '../../../packages/a2a-converse/src/stores/answer-queries.js'
import { MemoryAnswerLog } from '../../../packages/a2a-converse/src/stores/memory-answer-log.js'
import { PostgresAnswerLog, PRUNE_INTERVAL_MS } from '../../../packages/a2a-converse/src/stores/postgres/postgres-answer-log.js'
import { newConversationState, type ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'

t.test('questionKey: a deterministic token set', async (t) => {
  t.equal(questionKey('Do you sell GIFT cards?'), 'cards gift sell')
  t.equal(questionKey('gift cards — do you sell them, gift cards!'), 'cards gift sell', 'punctuation, stop words and repeats go')
  t.equal(questionKey('Ｇｉｆｔ  cards'), 'cards gift', 'NFKC: full-width letters are letters')
  t.equal(questionKey('Où est la gare ?'), 'est gare la où', 'letters of any script')
  t.equal(questionKey('What is it?'), 'is it what', 'stop words only: they are kept')
  t.equal(questionKey('?!…'), '', 'no word at all')
  t.equal(questionKey('3 items, 12 items'), '12 3 items', 'digits are words')
})

t.test('compareCodePoints: code point order (PostgreSQL\'s "C" collation), not UTF-16 units', async (t) => {
  t.ok(compareCodePoints('\uFF41', '\u{1F600}') < 0, 'U+FF41 before U+1F600 (UTF-16 would put the surrogate first)')
  t.ok(compareCodePoints('ab', 'a') > 0)
  t.ok(compareCodePoints('a', 'ab') < 0)
  t.equal(compareCodePoints('same', 'same'), 0)
})

t.test('logText: at most 200 code points, no U+0000', async (t) => {
  t.equal(logText('short'), 'short')
  const astral = '\u{1F600}'.repeat(150)
  t.equal([...logText(astral)].length, 150, 'under the bound in code points though longer in UTF-16 units')
  const long = '\u{1F600}'.repeat(250)
  t.equal([...logText(long)].length, 200, 'cut by code points: no surrogate left alone')
  t.equal(logText('a\u0000b'), 'a\uFFFDb')
})

t.test('newAnswers: the agent turns a write adds, with the question before each', async (t) => {
  const state: ConversationState = { ...newConversationState('demo', 'c1'), turns: [] }
  const envelope = (answerCoverage: Record<string, unknown>) => ({ author: 'agent', answerCoverage, ownership: { state: 'ai_owned', suppressed: false } }) as never
  state.turns.push({ id: 'a0', at: 'x', role: 'agent', text: 'no question before it', envelope: envelope({ availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' }) })
  state.turns.push({ id: 'u1', at: 'x', role: 'user', text: 'first' })
  state.turns.push({ id: 'a1', at: 'x', role: 'agent', text: 'odd', envelope: envelope({ availability: 'assessed', coverage: 'sort of', reason: 'gut feeling' }) })
  state.turns.push({ id: 'a2', at: 'x', role: 'agent', text: 'unchecked', envelope: envelope({ availability: 'maybe' }) })
  state.turns.push({ id: 'a3', at: 'x', role: 'agent', text: 'failed', envelope: envelope({ availability: 'failed', coverage: 'answered', reason: 'sufficient_evidence' }) })
  state.turns.push({ id: 'u2', at: 'x', role: 'user', text: 'Gift cards?' })
  state.turns.push({ id: 'a4', at: 'x', role: 'agent', text: 'no idea', envelope: envelope({ availability: 'assessed', coverage: 'unanswered', reason: 'insufficient_evidence' }) })
  const records = newAnswers(undefined, state, 42)
  t.same(records, [
    { contextId: 'c1', at: 42, availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', question: '', key: '' },
    { contextId: 'c1', at: 42, availability: 'assessed', question: '', key: '' },
    { contextId: 'c1', at: 42, availability: 'failed', question: '', key: '' },
    { contextId: 'c1', at: 42, availability: 'assessed', coverage: 'unanswered', reason: 'insufficient_evidence', question: 'Gift cards?', key: 'cards gift' }
  ], 'unknown verdicts are left out, an unknown availability is not logged, a verdict counts only when assessed; only a question it could not answer keeps its text')
  t.same(newAnswers({ turns: state.turns }, state, 43), [], 'turns the conversation held already: nothing')
  const alone: ConversationState = { ...newConversationState('demo', 'c2'), turns: [] }
  alone.turns.push({ id: 'a5', at: 'x', role: 'agent', text: 'no idea', envelope: envelope({ availability: 'assessed', coverage: 'partial', reason: 'insufficient_evidence' }) })
  t.match(newAnswers(undefined, alone, 44), [{ coverage: 'partial', question: '', key: '' }], 'a gap with no question before it: an empty question')
})

t.test('the group cursor: what encode makes, decode reads; anything else is refused', async (t) => {
  const cursor = { count: 3, key: 'cards gift sell' }
  t.same(decodeGroupCursor(encodeGroupCursor(cursor)), cursor)
  for (const value of ['', '!!', Buffer.from('{').toString('base64url'), Buffer.from('[1]').toString('base64url'),
    Buffer.from('[0,"k"]').toString('base64url'), Buffer.from('[1,null]').toString('base64url')]) {
    t.equal(decodeGroupCursor(value), undefined, JSON.stringify(value))
  }
})

t.test('the memory log drops the oldest past the cap and the retention on append', async (t) => {
  let now = 1_000_000
  const log = new MemoryAnswerLog({ answerRetentionMs: 100, maxAnswersPerAgent: 2 }, () => new Date(now))
  const record = (at: number) => ({ contextId: 'c', at, availability: 'assessed' as const, question: 'q', key: 'q' })
  log.append('demo', [])
  t.equal(log.size('demo'), 0)
  log.append('demo', [record(now), record(now), record(now)])
  t.equal(log.size('demo'), 2, 'the cap')
  now += 150
  log.append('demo', [record(now)])
  t.equal(log.size('demo'), 1, 'the retention')
  t.equal(log.size('other'), 0)
})

t.test('a full memory log drops in batches of an eighth of the cap; reads apply the cap exactly', async (t) => {
  const now = 1_000_000
  const log = new MemoryAnswerLog({ answerRetentionMs: 3_600_000, maxAnswersPerAgent: 16 }, () => new Date(now))
  const record = (n: number) => ({ contextId: `c${n}`, at: now, availability: 'assessed' as const, coverage: 'answered' as const, question: 'q', key: 'q' })
  log.append('demo', Array.from({ length: 17 }, (_, n) => record(n)))
  t.equal(log.size('demo'), 17, 'one over the cap: kept until a batch is due')
  t.equal(Object.values((await log.series('demo', '24h')).totals).reduce((sum: number, count) => sum + (count as number), 0), 16, 'read: the cap')
  log.append('demo', [record(17)])
  t.equal(log.size('demo'), 16, 'two over: dropped')
})

t.test('the PostgreSQL log prunes an agent at most once a minute per process', async (t) => {
  const log = new PostgresAnswerLog(async () => { throw new Error('no query here') }, { answerRetentionMs: 1000, maxAnswersPerAgent: 5 }, () => new Date())
  t.same(log.pruneParameters('demo', 10_000), [5, 9000], 'the first write prunes')
  t.same(log.pruneParameters('demo', 10_000 + PRUNE_INTERVAL_MS - 1), [null, null], 'not again within the minute')
  t.same(log.pruneParameters('demo', 10_000 + PRUNE_INTERVAL_MS), [5, 10_000 + PRUNE_INTERVAL_MS - 1000], 'a minute later')
  t.same(log.pruneParameters('demo', 5_000), [5, 4000], 'a clock that went back prunes')
  t.same(log.pruneParameters('other', 5_000), [5, 4000], 'per agent')
  for (let agent = 0; agent < 1000; agent++) log.pruneParameters(`agent-${agent}`, 5_000)
  t.same(log.pruneParameters('demo', 5_001), [5, 4001], 'past 1000 agents remembered, each is pruned again')
})
