import t from 'tap'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { validateEnvelope } from '../../../packages/a2a-converse/src/core/envelope-schema.js'
import {
  ANSWERED_MIN_TERM_RATIO, DEFAULT_REPLIES, KnowledgeBase, KnowledgeBaseError, PARTIAL_MIN_TERM_RATIO,
  type KnowledgeAnswer, type KnowledgeDocument
} from '../../../packages/a2a-converse/src/runtime/knowledge-base.js'
import { chunkDocument, plainInline, sentences } from '../../../packages/a2a-converse/src/runtime/knowledge-chunks.js'
import { MAX_ANSWER_SENTENCES, citationOf, quoteSentences } from '../../../packages/a2a-converse/src/runtime/knowledge-quotes.js'
import { processTerm, questionTerms, stem, terms, tokenize } from '../../../packages/a2a-converse/src/runtime/knowledge-terms.js'
import { loadKnowledgeBase, type KnowledgeDeclaration } from '../../../packages/a2a-converse/src/runtime/load-documents.js'

const DEMO_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))

async function demoKnowledgeBase (): Promise<KnowledgeBase> {
  const declaration = JSON.parse(await readFile(`${DEMO_DIR}agent.json`, 'utf8')) as KnowledgeDeclaration
  return loadKnowledgeBase(declaration, DEMO_DIR)
}

/** Every answer must make a valid envelope once the turn ids are added (the executor tests check the real one). */
function validEnvelope (answer: KnowledgeAnswer): boolean {
  return validateEnvelope({
    author: 'agent',
    answerCoverage: { ...answer.coverage, originatingTurnId: 'turn-1', originatingRequestId: 'request-1' },
    ownership: { state: 'ai_owned', suppressed: false },
    citations: answer.citations
  })
}

const SMALL: KnowledgeDocument[] = [
  {
    id: 'returns-policy',
    title: 'Returns policy',
    body: '# Returns policy\n\nYou can return an order within 30 days of delivery. Refunds take 5 days.\n\n## Exceptions\n\n- Gift cards\n- Software\n'
  },
  {
    id: 'warranty',
    title: 'Warranty',
    sourceUrl: 'https://example.com/warranty',
    body: 'Every product has a 2-year warranty.'
  }
]

t.test('terms: tokenizer, stop words, stemmer', async (t) => {
  t.same(tokenize('How long, do I have?'), ['How', 'long', 'do', 'I', 'have'])
  t.same(tokenize(''), [])
  t.equal(processTerm('The'), null, 'stop word')
  t.equal(processTerm('x'), null, 'single letter')
  t.equal(processTerm('7'), '7', 'single digit kept')
  t.equal(processTerm('Returns'), 'return')
  t.equal(stem('30'), '30', 'numbers unchanged')
  t.equal(stem('deliveries'), 'delivery')
  t.equal(stem('addresses'), 'address')
  t.equal(stem('orders'), 'order')
  t.equal(stem('business'), 'business', '-ss kept')
  t.equal(stem('status'), 'status', '-us kept')
  t.equal(stem('shipping'), 'ship', 'doubled consonant undone')
  t.equal(stem('shipped'), 'ship')
  t.equal(stem('delivered'), 'deliver')
  t.equal(stem('falling'), 'fall', 'double l kept')
  t.equal(stem('opening'), 'open')
  t.equal(stem('used'), 'used', 'too short to strip -ed')
  t.equal(stem('warranty'), 'warranty')
  t.equal(stem('internationally'), 'international')
  t.equal(stem('supply'), 'supply', 'too short to strip -ly')
  t.same(terms('Shipping the orders'), ['ship', 'order'])
  t.same(questionTerms('How long do I have to return an order?'), ['return', 'order'], 'the seed question keeps what it asks about')
  t.same(questionTerms('What time do you open?'), ['open'])
})

t.test('chunking: paragraphs and lists under headings, stable ids', async (t) => {
  const chunks = chunkDocument(SMALL[0])
  t.same(chunks.map((chunk) => chunk.id), ['returns-policy#0', 'returns-policy#1'])
  t.same(chunks[0], {
    id: 'returns-policy#0',
    documentId: 'returns-policy',
    index: 0,
    title: 'Returns policy',
    section: 'Returns policy',
    text: 'You can return an order within 30 days of delivery. Refunds take 5 days.'
  })
  t.equal(chunks[1].section, 'Exceptions')
  t.equal(chunks[1].text, 'Gift cards\nSoftware', 'list items one per line')
  t.notOk('sourceUrl' in chunks[0], 'no sourceUrl key when the document has none')
  t.same(chunkDocument(SMALL[0]), chunks, 'same document, same ids')
  t.equal(chunkDocument(SMALL[1])[0].sourceUrl, 'https://example.com/warranty')
  t.notOk('section' in chunkDocument(SMALL[1])[0], 'no heading, no section')

  const tricky = chunkDocument({
    id: 'doc',
    title: 'Doc',
    body: [
      'Intro line one',
      'continues **here** with a [link](https://example.com) and `code`.',
      '',
      '## Named',
      '#',
      'Under an empty heading.',
      '',
      '# ',
      '- ',
      '',
      '## Steps ##',
      'Do this first:',
      '1. open *the* box',
      '   carefully',
      '2) take _it_ out',
      '',
      '',
      '   '
    ].join('\r\n')
  })
  t.same(tricky.map((chunk) => [chunk.id, chunk.section, chunk.text]), [
    ['doc#0', undefined, 'Intro line one continues here with a link and code.'],
    ['doc#1', undefined, 'Under an empty heading.'],
    ['doc#2', 'Steps', 'Do this first:\nopen the box carefully\ntake it out']
  ], 'an empty heading clears the section, an empty list item is no chunk')
  t.same(chunkDocument({ id: 'empty', title: 'Empty', body: '' }), [])
})

t.test('plain text and sentences', async (t) => {
  t.equal(plainInline('![alt](x.png) __bold__ snake_case_name 2*3*4'), 'alt bold snake_case_name 2*3*4')
  t.same(sentences('One. Two! "Three?" 4 items.\n- Listed'), ['One.', 'Two!', '"Three?"', '4 items.', '- Listed'])
  t.same(sentences('e.g. lower case stays together.'), ['e.g. lower case stays together.'])
})

t.test('quoteSentences: the most relevant sentences, in document order', async (t) => {
  const text = 'Alpha beta. Gamma delta. Return order here. Refund only.'
  t.equal(quoteSentences(text, new Set(['return', 'order'])), 'Return order here.')
  t.equal(quoteSentences(text, new Set(['refund', 'gamma'])), 'Gamma delta. Refund only.', 'original order kept')
  t.equal(quoteSentences(text, new Set(['gamma', 'delta', 'alpha', 'refund'])).split('. ').length, MAX_ANSWER_SENTENCES)
  t.equal(quoteSentences(text, new Set(['nothing'])), 'Alpha beta.', 'no sentence holds a term: the first one')
})

t.test('citations carry sourceUrl only when the document has one', async (t) => {
  const [withUrl] = chunkDocument(SMALL[1])
  const [withoutUrl] = chunkDocument(SMALL[0])
  t.same(citationOf(withUrl), { documentId: 'warranty', chunkId: 'warranty#0', title: 'Warranty', sourceUrl: 'https://example.com/warranty' })
  t.same(citationOf(withoutUrl), { documentId: 'returns-policy', chunkId: 'returns-policy#0', title: 'Returns policy' })
})

t.test('thresholds are ordered', async (t) => {
  t.ok(PARTIAL_MIN_TERM_RATIO > 0 && PARTIAL_MIN_TERM_RATIO < ANSWERED_MIN_TERM_RATIO && ANSWERED_MIN_TERM_RATIO <= 1)
})

t.test('demo documents: the seed question is answered from the returns policy', async (t) => {
  const kb = await demoKnowledgeBase()
  t.same(kb.documents.map((document) => document.id), ['opening-hours', 'returns-policy', 'shipping', 'warranty'])
  t.equal(kb.documents.filter((document) => document.sourceUrl !== undefined).length, 1, 'exactly one document has a sourceUrl')
  t.same(kb.outOfScopeTopics, ['legal advice', 'medical advice', 'politics', 'investment advice'])
  const answer = kb.answer('How long do I have to return an order?')
  t.equal(answer.text, 'You can return an order within 30 days of delivery.')
  t.same(answer.coverage, { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' })
  t.same(answer.citations, [{ documentId: 'returns-policy', chunkId: 'returns-policy#0', title: 'Returns policy' }])
  t.same(answer.evidence.matchedTerms, ['return', 'order'])
  t.equal(kb.chunk('returns-policy#0')?.text.startsWith('You can return an order within 30 days of delivery.'), true)
  t.equal(kb.chunk('nope#0'), undefined)
  t.ok(validEnvelope(answer), 'valid envelope')
})

t.test('demo documents: each verdict', async (t) => {
  const kb = await demoKnowledgeBase()
  const cases: Array<[string, string, string, string | undefined]> = [
    ['How long is the warranty?', 'answered', 'sufficient_evidence', 'warranty'],
    ['What are your opening hours on Sunday?', 'answered', 'sufficient_evidence', 'opening-hours'],
    ['How much does shipping cost?', 'answered', 'sufficient_evidence', 'shipping'],
    ['Do you deliver to Switzerland?', 'answered', 'sufficient_evidence', 'shipping'],
    ['Do you ship internationally?', 'answered', 'sufficient_evidence', 'shipping'],
    ['What happens if I miss the delivery?', 'answered', 'sufficient_evidence', 'shipping'],
    ['Is accidental damage covered by the warranty?', 'answered', 'sufficient_evidence', 'warranty'],
    ['How do I get a refund?', 'answered', 'sufficient_evidence', 'returns-policy'],
    ['Can I return a sofa?', 'partial', 'insufficient_evidence', 'returns-policy'],
    ['What is the capital of France?', 'unanswered', 'insufficient_evidence', undefined],
    ['Any news about quantum chromodynamics, astrophysics, paleontology or volcano order?', 'unanswered', 'insufficient_evidence', undefined],
    ['', 'unclear', 'ambiguous_request', undefined],
    ['   ', 'unclear', 'ambiguous_request', undefined],
    ['returns', 'unclear', 'ambiguous_request', undefined],
    ['Warranty?', 'unclear', 'ambiguous_request', undefined],
    ['Hello there', 'unclear', 'ambiguous_request', undefined],
    ['Can you give me legal advice about my landlord?', 'unanswered', 'intentional_scope_boundary', undefined],
    ['Who should I vote for?', 'unanswered', 'intentional_scope_boundary', undefined],
    ['Should I see a doctor about my headache?', 'unanswered', 'intentional_scope_boundary', undefined],
    ['politics', 'unanswered', 'intentional_scope_boundary', undefined]
  ]
  for (const [question, coverage, reason, documentId] of cases) {
    const answer = kb.answer(question)
    t.equal(answer.coverage.coverage, coverage, `${JSON.stringify(question)} → ${coverage}`)
    t.equal(answer.coverage.reason, reason, `${JSON.stringify(question)} → ${reason}`)
    t.equal(answer.citations[0]?.documentId, documentId, `${JSON.stringify(question)} cites ${documentId}`)
    t.ok(answer.text.length > 0)
    t.ok(validEnvelope(answer), 'valid envelope')
  }

  const partial = kb.answer('Can I return a sofa?')
  t.ok(partial.text.startsWith(DEFAULT_REPLIES.partialLead), 'a partial answer says so in its text')
  t.same(partial.evidence.matchedTerms, ['return'])
  t.same(partial.evidence.queryTerms, ['return', 'sofa'])

  const warranty = kb.answer('How long is the warranty?')
  t.same(warranty.citations, [{ documentId: 'warranty', chunkId: 'warranty#0', title: 'Warranty', sourceUrl: 'https://example.com/help/warranty' }])
  t.match(warranty.text, /2-year warranty/)

  const unanswered = kb.answer('What is the capital of France?')
  t.equal(unanswered.text, DEFAULT_REPLIES.unanswered)
  t.same(unanswered.citations, [])

  const legal = kb.answer('Can you give me legal advice about my landlord?')
  t.equal(legal.text, DEFAULT_REPLIES.outOfScope('legal advice'))
  t.equal(legal.evidence.outOfScopeTopic, 'legal advice')
  t.same(legal.citations, [])
  t.equal(kb.outOfScopeTopic('I want to sue my neighbour'), 'legal advice')
  t.equal(kb.outOfScopeTopic('How long is the warranty?'), undefined)

  t.equal(kb.answer(undefined as unknown as string).coverage.coverage, 'unclear', 'a non-string question is unclear')
})

t.test('out-of-scope declarations and replies', async (t) => {
  const kb = new KnowledgeBase({
    documents: SMALL,
    outOfScope: ['Cooking recipes', { topic: 'weather', keywords: ['rain', 'weather forecast'] }],
    replies: { unclear: 'Pardon?', outOfScope: (topic) => `Not ${topic}.` }
  })
  t.same(kb.outOfScopeTopics, ['Cooking recipes', 'weather'])
  t.equal(kb.answer('Any good cooking recipes for pasta?').text, 'Not Cooking recipes.', 'a plain topic is its own keyword phrase')
  t.equal(kb.answer('cooking pasta recipes').coverage.reason, 'insufficient_evidence', 'phrase words must be adjacent')
  t.equal(kb.answer('Will it rain tomorrow?').evidence.outOfScopeTopic, 'weather')
  t.equal(kb.answer('What does the forecast say about weather?').coverage.reason, 'insufficient_evidence', 'phrase words in the wrong order')
  t.equal(kb.answer('What is the weather forecast?').coverage.reason, 'intentional_scope_boundary')
  t.equal(kb.answer('Hmm').text, 'Pardon?')
  t.equal(kb.answer('Gift cards?').coverage.coverage, 'answered', 'the default replies stay for what is not overridden')
  t.same(new KnowledgeBase({ documents: [] }).outOfScopeTopics, [])
  t.equal(new KnowledgeBase({ documents: [] }).answer('Where is my parcel?').coverage.coverage, 'unanswered', 'no documents, no answer')
})

t.test('invalid documents and declarations are refused', async (t) => {
  const doc = { id: 'a', title: 'A', body: 'text' }
  const cases: Array<[unknown, unknown, RegExp]> = [
    [undefined, undefined, /documents must be an array/],
    [[null], undefined, /document #0 must be an object/],
    [[{ ...doc, id: '' }], undefined, /document #0: id must be/],
    [[{ ...doc, id: 'has space' }], undefined, /"has space": id must be/],
    [[{ ...doc, id: 'a#1' }], undefined, /id must be a non-empty string without whitespace or "#"/],
    [[doc, doc], undefined, /document "a": id is used twice/],
    [[{ ...doc, title: ' ' }], undefined, /title must be a non-empty string/],
    [[{ ...doc, body: 3 }], undefined, /body must be a string/],
    [[{ ...doc, sourceUrl: 'ftp://x' }], undefined, /sourceUrl must be an http\(s\) URL/],
    [[{ ...doc, sourceUrl: 7 }], undefined, /sourceUrl must be an http\(s\) URL/],
    [[], 'politics', /outOfScope must be an array/],
    [[], [null], /outOfScope #0: topic must be a non-empty string/],
    [[], [{ topic: '' }], /outOfScope #0: topic must be/],
    [[], [{ topic: 'x', keywords: [] }], /outOfScope "x": keywords must be a non-empty array/],
    [[], [{ topic: 'x', keywords: 'x' }], /keywords must be a non-empty array/],
    [[], [{ topic: 'x', keywords: [4] }], /keyword 4 has no searchable word/],
    [[], ['the'], /keyword "the" has no searchable word/]
  ]
  for (const [documents, outOfScope, message] of cases) {
    t.throws(() => new KnowledgeBase({ documents, outOfScope } as never), message)
  }
  t.throws(() => new KnowledgeBase({ documents: [{ ...doc, id: '' }] }), KnowledgeBaseError)
  const error = new KnowledgeBaseError('x')
  t.equal(error.name, 'KnowledgeBaseError')
  t.ok(error instanceof Error)
})

t.test('the knowledge base copies its documents', async (t) => {
  const documents = [{ id: 'a', title: 'A', body: 'Alpha text about parcels.' }]
  const kb = new KnowledgeBase({ documents })
  documents[0].title = 'Changed'
  t.equal(kb.documents[0].title, 'A')
  t.ok(Object.isFrozen(kb.chunks))
})
