/**
 * The knowledge base's per-turn cost savings: remembered answers (by question text) and sentences split once
 * per chunk. Remembered answers must be the very answers a fresh search gives, never shared with callers.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import MiniSearch from 'minisearch'
import {
  ANSWER_CACHE_MAX_QUESTION_LENGTH, DEFAULT_ANSWER_CACHE_SIZE, KnowledgeBase, KnowledgeBaseError, type KnowledgeDocument
} from '../../../packages/a2a-converse/src/runtime/knowledge-base.js'
import { loadDocuments } from '../../../packages/a2a-converse/src/runtime/load-documents.js'

const DEMO_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))
const demo = JSON.parse(await readFile(`${DEMO_DIR}agent.json`, 'utf8')) as { outOfScope: [] }
const documents: KnowledgeDocument[] = await loadDocuments(`${DEMO_DIR}documents`)

/** Counts MiniSearch searches: a remembered answer must not search. */
let searches = 0
const search = MiniSearch.prototype.search
MiniSearch.prototype.search = function (...args: Parameters<typeof search>) {
  searches++
  return search.apply(this, args)
}
t.teardown(() => { MiniSearch.prototype.search = search })

const QUESTIONS = [
  'How long do I have to return an order?',
  'how long do i have to return an order',
  'Do you ship internationally?',
  'When are you open on Sunday?',
  'What does the warranty cover?',
  'Can I get a refund on a gift card?',
  'How do I reset my router after an order?',
  'Should I sue the shop?',
  'returns',
  '',
  '   ',
  'retrun polcy for ordres',
  'What is the meaning of life?',
  'warranty warranty warranty repair'
]

t.test('remembered answers are the answers a fresh search gives', async (t) => {
  const cached = new KnowledgeBase({ documents, outOfScope: demo.outOfScope })
  const fresh = new KnowledgeBase({ documents, outOfScope: demo.outOfScope, answerCacheSize: 0 })
  for (const question of QUESTIONS) {
    const first = cached.answer(question)
    const before = searches
    const again = cached.answer(question)
    t.equal(searches, before, `asked again, no search: ${JSON.stringify(question)}`)
    t.strictSame(again, first)
    t.strictSame(again, fresh.answer(question), `same as without the cache: ${JSON.stringify(question)}`)
  }
  const noText = cached.answer(undefined as unknown as string)
  t.strictSame(cached.answer(42 as unknown as string), noText, 'a non-string question is the empty question')
  t.strictSame(noText, fresh.answer(''))
})

t.test('every answer is a fresh object: changing one changes no later answer', async (t) => {
  const kb = new KnowledgeBase({ documents })
  const question = 'How long do I have to return an order?'
  const reference = structuredClone(kb.answer(question))
  for (let round = 0; round < 2; round++) {
    const answer = kb.answer(question)
    answer.text = 'changed'
    answer.citations[0].title = 'changed'
    answer.citations.push({ documentId: 'x', chunkId: 'x#0', title: 'x' })
    answer.coverage.coverage = 'unanswered'
    answer.evidence.queryTerms.push('changed')
    answer.evidence.matchedTerms.length = 0
    answer.evidence.chunkId = 'changed'
  }
  t.strictSame(kb.answer(question), reference)
  t.not(kb.answer(question), kb.answer(question), 'not the same object twice')
})

t.test('the least recently asked question is forgotten first', async (t) => {
  const kb = new KnowledgeBase({ documents, answerCacheSize: 2 })
  const ask = (question: string): boolean => {
    const before = searches
    kb.answer(question)
    return searches > before
  }
  t.equal(ask('returns within 30 days'), true, 'a: searched')
  t.equal(ask('warranty length'), true, 'b: searched')
  t.equal(ask('returns within 30 days'), false, 'a: remembered (now the most recent)')
  t.equal(ask('opening hours sunday'), true, 'c: searched, b forgotten')
  t.equal(ask('returns within 30 days'), false, 'a: still remembered')
  t.equal(ask('warranty length'), true, 'b: searched again')
})

t.test('no cache: size 0, and questions too long to remember', async (t) => {
  const off = new KnowledgeBase({ documents, answerCacheSize: 0 })
  let before = searches
  off.answer('returns within 30 days')
  off.answer('returns within 30 days')
  t.equal(searches - before, 2, 'every question searched')

  const kb = new KnowledgeBase({ documents })
  const long = `returns ${'order '.repeat(ANSWER_CACHE_MAX_QUESTION_LENGTH / 6)}`
  t.ok(long.length > ANSWER_CACHE_MAX_QUESTION_LENGTH)
  before = searches
  t.strictSame(kb.answer(long), kb.answer(long))
  t.equal(searches - before, 2, 'a long question is searched each time')
  t.equal(DEFAULT_ANSWER_CACHE_SIZE, 1000)
})

t.test('answerCacheSize must be a non-negative integer', async (t) => {
  for (const answerCacheSize of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3' as unknown as number]) {
    t.throws(() => new KnowledgeBase({ documents, answerCacheSize }), new KnowledgeBaseError('answerCacheSize must be a non-negative integer'))
  }
})
