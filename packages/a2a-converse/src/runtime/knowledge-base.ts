/**
 * A small, framework-free knowledge base: documents are split into chunks, indexed with MiniSearch and
 * searched to answer a question with the chunk text itself, the citations it used and an honest coverage
 * verdict. See docs/knowledge.md for the chunking, ids, thresholds and verdict rules.
 */
import MiniSearch, { type SearchResult } from 'minisearch'
import type { Citation, Coverage, CoverageReason } from '../core/envelope.js'
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/** One source document (a Markdown body; headings start sections). */
export interface KnowledgeDocument {
  /** Stable id, cited as `documentId`; no whitespace and no `#` (the chunk-id separator). */
  id: string
  title: string
  /** Markdown. */
  body: string
  /** Public address of the document; cited only when present. Must start with http:// or https://. */
  sourceUrl?: string
}

/** A searchable piece of a document: one paragraph (or list) under its nearest heading. */
export interface KnowledgeChunk {
  /** `<documentId>#<index>`, e.g. `returns-policy#0`. */
  id: string
  documentId: string
  /** 0-based position of the chunk in its document. */
  index: number
  title: string
  /** Text of the nearest heading above the chunk, when there is one. */
  section?: string
  /** Plain text (Markdown inline markup removed); list items are separated by newlines. */
  text: string
  sourceUrl?: string
}

/** A topic the agent declares out of scope; `keywords` are words or phrases that reveal it. */
export interface OutOfScopeTopic {
  topic: string
  /** Defaults to the topic itself. Matched on whole (stemmed, stop-word-free) terms, phrases in order. */
  keywords?: string[]
}

/** The fixed texts the knowledge base answers with when it has no document text to quote. */
export interface KnowledgeReplies {
  unclear: string
  unanswered: string
  outOfScope: (topic: string) => string
  /** Put before the quoted text of a `partial` answer, so a reader without the envelope sees it too. */
  partialLead: string
}

export interface KnowledgeBaseOptions {
  documents: readonly KnowledgeDocument[]
  /** Topics declared out of scope: a plain string is a topic whose only keyword is its own name. */
  outOfScope?: ReadonlyArray<string | OutOfScopeTopic>
  replies?: Partial<KnowledgeReplies>
  /**
   * How many answers to remember, by exact question text (least recently asked forgotten first). An answer is
   * a pure function of the question and of what the knowledge base was built with, so a remembered one is the
   * very answer a new search would give. Default {@link DEFAULT_ANSWER_CACHE_SIZE}; 0 turns the cache off.
   */
  answerCacheSize?: number
}

/** An assessed verdict (the knowledge base always assesses). */
export interface KnowledgeCoverage {
  availability: 'assessed'
  coverage: Coverage
  reason: CoverageReason
}

/** What the verdict rests on: for logs and tests, never sent on the wire. */
export interface KnowledgeEvidence {
  /** The question's search terms (stop words removed, stemmed), in order, without repeats. */
  queryTerms: string[]
  /** The query terms the chosen chunk matched. */
  matchedTerms: string[]
  chunkId?: string
  score?: number
  outOfScopeTopic?: string
}

export interface KnowledgeAnswer {
  text: string
  citations: Citation[]
  coverage: KnowledgeCoverage
  evidence: KnowledgeEvidence
}

export class KnowledgeBaseError extends ConverseError {
  constructor (message: string) {
    super(ERROR_CODES.KNOWLEDGE_BASE, message)
  }
}

// ---------------------------------------------------------------------------------------------------------
// Thresholds. The verdict compares what the best chunk matched with what the question asked, so it does not
// depend on MiniSearch's raw scores (which grow with the number of terms and the size of the corpus).

/**
 * `answered` when the best chunk matches at least this share of the question's terms: "most" of them, which
 * for one to three terms means all of them and tolerates one miss from four terms on.
 */
export const ANSWERED_MIN_TERM_RATIO = 0.75
/**
 * `partial` from this share on (one term of two or three); below it a single incidental hit in a long
 * question ("order" in "how do I reset my router after an order?") is not evidence, so it is `unanswered`.
 */
export const PARTIAL_MIN_TERM_RATIO = 1 / 3
/** Fewer words than this (counting stop words) is too little to know what is asked: `unclear`. */
export const MIN_QUESTION_WORDS = 2
/** The title is what a chunk is about; a term found there counts double. */
export const TITLE_BOOST = 2
/** The heading above a chunk names its subject more precisely than the body: 1.5. */
export const SECTION_BOOST = 1.5
/** Prefix search from three characters on ("deliv" finds "delivery"); shorter prefixes match too much. */
export const PREFIX_MIN_LENGTH = 3
/** Fuzzy search only for terms of five characters or more: shorter words are one typo from other words. */
export const FUZZY_MIN_LENGTH = 5
/**
 * One typo (edit distance 1) whatever the length: a fractional fuzziness would allow two from eight characters
 * on, enough for unrelated words to match and inflate the share of matched terms.
 */
export const FUZZY_DISTANCE = 1
/** An answer quotes at most this many sentences of its chunk. */
export const MAX_ANSWER_SENTENCES = 2
/** Answers remembered per knowledge base by default (see {@link KnowledgeBaseOptions.answerCacheSize}). */
export const DEFAULT_ANSWER_CACHE_SIZE = 1000
/** Questions longer than this (characters) are never remembered: the cache stays small whatever clients send. */
export const ANSWER_CACHE_MAX_QUESTION_LENGTH = 1000

export const DEFAULT_REPLIES: Readonly<KnowledgeReplies> = Object.freeze({
  unclear: 'Could you tell me a bit more about what you would like to know?',
  unanswered: "I couldn't find an answer to that in my documents.",
  outOfScope: (topic: string) => `I'm sorry, I can't help with ${topic}: it is outside what I can answer.`,
  partialLead: 'This may only partly answer your question: '
})

// ---------------------------------------------------------------------------------------------------------
// Terms: one pipeline for documents, questions and declared keywords.

/** English function words and conversational filler: they say how something is asked, not what. */
export const STOP_WORDS: ReadonlySet<string> = new Set((
  'a able about above after again against all also am an and another any anything are aren as at be because been before ' +
  'being below between both but by can cannot could couldn did didn do does doesn doing don down during each ' +
  'few for from further get give got had hadn happen happened happens has hasn have haven having he hello her here hers herself hey hi him ' +
  'himself his how i if in into is isn it its itself just know let like may me might more most much must ' +
  'mustn my myself need no nor not now of off ok okay on once only or other our ours ourselves out over own ' +
  'please really same shall she should shouldn so some something such tell than thank thanks that the their ' +
  'theirs them themselves then there these they this those through to too under until up us very want was ' +
  'wasn we were weren what when where which while who whom why will with won would wouldn you your yours ' +
  'yourself yourselves'
).split(' '))

/**
 * Question phrases removed before the stop words: "how long" asks for a duration, and "long" is not a word
 * the answer ("within 30 days") contains; likewise "what time" (an answer says "9 am").
 */
export const QUESTION_PHRASES: readonly RegExp[] = [/\bhow (long|soon|often|far)\b/gi, /\bwhat time\b/gi]

/** Words: runs of letters and digits. */
export function tokenize (text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '')
}

/**
 * A deliberately light English stemmer, applied to documents and questions alike: plural `-s`/`-es`/`-ies`,
 * adverb `-ly` when at least five characters remain ("internationally" → "international"), and `-ing`/`-ed`
 * when at least four remain ("shipped" and "shipping" → "ship", "delivered" → "deliver"). Prefix and fuzzy
 * search cover the rest.
 */
export function stem (word: string): string {
  if (/^\p{N}/u.test(word)) return word
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.endsWith('sses')) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1)
  if (word.endsWith('ly') && word.length - 2 >= 5) return word.slice(0, -2)
  for (const suffix of ['ing', 'ed']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 4) {
      const base = word.slice(0, -suffix.length)
      // "shipp" → "ship", but "fall" and "miss" keep their double letter.
      return /([^aeiouls])\1$/.test(base) ? base.slice(0, -1) : base
    }
  }
  return word
}

/** One word → its search term, or null for a stop word or a single letter. */
export function processTerm (word: string): string | null {
  const lower = word.toLowerCase()
  if (STOP_WORDS.has(lower) || (lower.length === 1 && !/\p{N}/u.test(lower))) return null
  return stem(lower)
}

/** The search terms of a text, in order (repeats kept). */
export function terms (text: string): string[] {
  const result: string[] = []
  for (const word of tokenize(text)) {
    const term = processTerm(word)
    if (term !== null) result.push(term)
  }
  return result
}

/** The search terms of a question: question phrases removed, then {@link terms}. */
export function questionTerms (question: string): string[] {
  let text = question
  for (const phrase of QUESTION_PHRASES) text = text.replace(phrase, ' ')
  return terms(text)
}

// ---------------------------------------------------------------------------------------------------------
// Chunking

const HEADING = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/

/** Removes Markdown inline markup: links and images keep their text, emphasis and code marks go. */
export function plainInline (text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}*])\*(?!\s)([^*]+?)\*(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/(^|[^\p{L}\p{N}_])_(?!\s)([^_]+?)_(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

/** One block of non-blank lines → plain text: wrapped lines joined, each list item on its own line. */
function blockText (lines: string[]): string {
  const entries: string[] = []
  for (const line of lines) {
    const item = LIST_ITEM.test(line)
    const text = plainInline(line.replace(LIST_ITEM, ''))
    if (item || entries.length === 0) entries.push(text)
    else entries[entries.length - 1] = `${entries[entries.length - 1]} ${text}`.trim()
  }
  return entries.filter((entry) => entry !== '').join('\n')
}

/**
 * Splits a document into chunks: every run of non-blank lines (a paragraph or a list) is one chunk; headings
 * are not chunks, they become the `section` of the chunks below them. Ids are `<documentId>#<index>`, the
 * index counting chunks in document order from 0, so they are stable while the document is unchanged.
 */
export function chunkDocument (document: KnowledgeDocument): KnowledgeChunk[] {
  const chunks: KnowledgeChunk[] = []
  let section: string | undefined
  let block: string[] = []
  const flush = (): void => {
    const text = blockText(block)
    block = []
    if (text === '') return
    const index = chunks.length
    chunks.push({
      id: `${document.id}#${index}`,
      documentId: document.id,
      index,
      title: document.title,
      ...(section !== undefined ? { section } : {}),
      text,
      ...(document.sourceUrl !== undefined ? { sourceUrl: document.sourceUrl } : {})
    })
  }
  for (const line of document.body.split(/\r?\n/)) {
    const heading = HEADING.exec(line)
    if (heading !== null) {
      flush()
      const text = plainInline(heading[1] ?? '')
      section = text === '' ? undefined : text
    } else if (line.trim() === '') {
      flush()
    } else {
      block.push(line)
    }
  }
  flush()
  return chunks
}

/** Sentences of a chunk's text: each line (list item) on its own, then split after `.`, `!` or `?`. */
export function sentences (text: string): string[] {
  return text.split('\n')
    .flatMap((line) => line.split(/(?<=[.!?]["”')\]]?)\s+(?=["“([]?[\p{Lu}\p{N}])/u))
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '')
}

// ---------------------------------------------------------------------------------------------------------
// Validation

const DOCUMENT_ID = /^[^\s#]+$/
const SOURCE_URL = /^https?:\/\/\S+$/

function validateDocuments (documents: unknown): asserts documents is KnowledgeDocument[] {
  if (!Array.isArray(documents)) throw new KnowledgeBaseError('documents must be an array')
  const ids = new Set<string>()
  documents.forEach((document: Partial<KnowledgeDocument> | null, position) => {
    const name = typeof document?.id === 'string' && document.id !== '' ? `"${document.id}"` : `#${position}`
    if (document === null || typeof document !== 'object') throw new KnowledgeBaseError(`document ${name} must be an object`)
    if (typeof document.id !== 'string' || !DOCUMENT_ID.test(document.id)) {
      throw new KnowledgeBaseError(`document ${name}: id must be a non-empty string without whitespace or "#"`)
    }
    if (ids.has(document.id)) throw new KnowledgeBaseError(`document ${name}: id is used twice`)
    ids.add(document.id)
    if (typeof document.title !== 'string' || document.title.trim() === '') {
      throw new KnowledgeBaseError(`document ${name}: title must be a non-empty string`)
    }
    if (typeof document.body !== 'string') throw new KnowledgeBaseError(`document ${name}: body must be a string`)
    if (document.sourceUrl !== undefined && (typeof document.sourceUrl !== 'string' || !SOURCE_URL.test(document.sourceUrl))) {
      throw new KnowledgeBaseError(`document ${name}: sourceUrl must be an http(s) URL`)
    }
  })
}

interface ScopeRule {
  topic: string
  phrases: string[][]
}

function scopeRules (outOfScope: unknown): ScopeRule[] {
  if (outOfScope === undefined) return []
  if (!Array.isArray(outOfScope)) throw new KnowledgeBaseError('outOfScope must be an array')
  return outOfScope.map((entry: string | OutOfScopeTopic, position): ScopeRule => {
    const declared = typeof entry === 'string' ? { topic: entry } : entry
    if (declared === null || typeof declared !== 'object' || typeof declared.topic !== 'string' || declared.topic.trim() === '') {
      throw new KnowledgeBaseError(`outOfScope #${position}: topic must be a non-empty string`)
    }
    const keywords = declared.keywords ?? [declared.topic]
    if (!Array.isArray(keywords) || keywords.length === 0) {
      throw new KnowledgeBaseError(`outOfScope "${declared.topic}": keywords must be a non-empty array`)
    }
    const phrases = keywords.map((keyword) => {
      const phrase = typeof keyword === 'string' ? terms(keyword) : []
      if (phrase.length === 0) {
        throw new KnowledgeBaseError(`outOfScope "${declared.topic}": keyword ${JSON.stringify(keyword)} has no searchable word`)
      }
      return phrase
    })
    return { topic: declared.topic.trim(), phrases }
  })
}

function containsPhrase (haystack: readonly string[], phrase: readonly string[]): boolean {
  for (let start = 0; start + phrase.length <= haystack.length; start++) {
    if (phrase.every((term, offset) => haystack[start + offset] === term)) return true
  }
  return false
}

// ---------------------------------------------------------------------------------------------------------
// The knowledge base

interface IndexedChunk {
  id: string
  title: string
  section?: string
  text: string
}

const identity = (term: string): string => term
const splitSpaces = (text: string): string[] => text.split(' ')

export class KnowledgeBase {
  readonly documents: readonly KnowledgeDocument[]
  readonly chunks: readonly KnowledgeChunk[]
  readonly #chunksById = new Map<string, KnowledgeChunk>()
  readonly #index: MiniSearch<IndexedChunk>
  readonly #scope: ScopeRule[]
  readonly #replies: KnowledgeReplies
  /** Per chunk id: its sentences and their terms, for quoting; and its citation. */
  readonly #quotable = new Map<string, { sentences: SentenceCandidate[], citation: Citation }>()
  /** Question text → its answer, least recently asked first. */
  readonly #answers = new Map<string, KnowledgeAnswer>()
  readonly #answerCacheSize: number

  constructor (options: KnowledgeBaseOptions) {
    validateDocuments(options.documents)
    this.#scope = scopeRules(options.outOfScope)
    this.#replies = { ...DEFAULT_REPLIES, ...options.replies }
    const cacheSize = options.answerCacheSize ?? DEFAULT_ANSWER_CACHE_SIZE
    if (!Number.isSafeInteger(cacheSize) || cacheSize < 0) throw new KnowledgeBaseError('answerCacheSize must be a non-negative integer')
    this.#answerCacheSize = cacheSize
    this.documents = Object.freeze(options.documents.map((document) => ({ ...document })))
    this.chunks = Object.freeze(this.documents.flatMap(chunkDocument))
    for (const chunk of this.chunks) {
      this.#chunksById.set(chunk.id, chunk)
      this.#quotable.set(chunk.id, { sentences: sentenceCandidates(chunk.text), citation: citationOf(chunk) })
    }
    this.#index = new MiniSearch<IndexedChunk>({
      idField: 'id',
      fields: ['title', 'section', 'text'],
      tokenize,
      processTerm,
      searchOptions: {
        boost: { title: TITLE_BOOST, section: SECTION_BOOST },
        prefix: (term) => term.length >= PREFIX_MIN_LENGTH,
        fuzzy: (term) => term.length >= FUZZY_MIN_LENGTH ? FUZZY_DISTANCE : false,
        combineWith: 'OR'
      }
    })
    this.#index.addAll(this.chunks)
  }

  /** The declared out-of-scope topics, as normalised at construction. */
  get outOfScopeTopics (): string[] {
    return this.#scope.map((rule) => rule.topic)
  }

  chunk (id: string): KnowledgeChunk | undefined {
    return this.#chunksById.get(id)
  }

  /** The declared topic the question is about, if any. */
  outOfScopeTopic (question: string): string | undefined {
    return this.#topicOf(questionTerms(question))
  }

  #topicOf (ordered: readonly string[]): string | undefined {
    return this.#scope.find((rule) => rule.phrases.some((phrase) => containsPhrase(ordered, phrase)))?.topic
  }

  /**
   * Answers from the documents, in this order: a declared out-of-scope topic → `unanswered` /
   * `intentional_scope_boundary`; fewer than {@link MIN_QUESTION_WORDS} words or no search term at all →
   * `unclear` / `ambiguous_request`; otherwise the chunk matching most query terms (then the highest score)
   * decides by the share of terms it matched: {@link ANSWERED_MIN_TERM_RATIO} → `answered` /
   * `sufficient_evidence`, {@link PARTIAL_MIN_TERM_RATIO} → `partial` / `insufficient_evidence`, less →
   * `unanswered` / `insufficient_evidence`. Only `answered` and `partial` quote text and cite the chunk.
   *
   * Answers are remembered by question text (see {@link KnowledgeBaseOptions.answerCacheSize}); every call
   * returns a fresh object that the caller may change.
   */
  answer (question: string): KnowledgeAnswer {
    const text = typeof question === 'string' ? question : ''
    if (this.#answerCacheSize === 0 || text.length > ANSWER_CACHE_MAX_QUESTION_LENGTH) return this.#search(text)
    const remembered = this.#answers.get(text)
    if (remembered !== undefined) {
      // Most recently asked last: Map keeps insertion order.
      this.#answers.delete(text)
      this.#answers.set(text, remembered)
      return copyAnswer(remembered)
    }
    const answer = this.#search(text)
    if (this.#answers.size >= this.#answerCacheSize) this.#answers.delete(this.#answers.keys().next().value as string)
    this.#answers.set(text, copyAnswer(answer))
    return answer
  }

  /** {@link answer} without the cache. */
  #search (text: string): KnowledgeAnswer {
    const ordered = questionTerms(text)
    const queryTerms = [...new Set(ordered)]
    const topic = this.#topicOf(ordered)
    if (topic !== undefined) {
      return verdict(this.#replies.outOfScope(topic), 'unanswered', 'intentional_scope_boundary', { queryTerms, matchedTerms: [], outOfScopeTopic: topic })
    }
    if (tokenize(text).length < MIN_QUESTION_WORDS || queryTerms.length === 0) {
      return verdict(this.#replies.unclear, 'unclear', 'ambiguous_request', { queryTerms, matchedTerms: [] })
    }
    const best = this.#bestResult(queryTerms)
    const matchedTerms = best === undefined ? [] : queryTerms.filter((term) => best.queryTerms.includes(term))
    const ratio = matchedTerms.length / queryTerms.length
    if (best === undefined || ratio < PARTIAL_MIN_TERM_RATIO) {
      return verdict(this.#replies.unanswered, 'unanswered', 'insufficient_evidence', { queryTerms, matchedTerms })
    }
    const chunkId = best.id as string
    const quotable = this.#quotable.get(chunkId) as { sentences: SentenceCandidate[], citation: Citation }
    const evidence = { queryTerms, matchedTerms, chunkId, score: best.score }
    const quote = quoteCandidates(quotable.sentences, new Set(best.terms))
    const citations = [{ ...quotable.citation }]
    return ratio >= ANSWERED_MIN_TERM_RATIO
      ? { ...verdict(quote, 'answered', 'sufficient_evidence', evidence), citations }
      : { ...verdict(`${this.#replies.partialLead}${quote}`, 'partial', 'insufficient_evidence', evidence), citations }
  }

  /** The result matching the most distinct query terms; among those, the best scored (results come sorted). */
  #bestResult (queryTerms: string[]): SearchResult | undefined {
    let best: SearchResult | undefined
    let bestCount = 0
    for (const result of this.#index.search(queryTerms.join(' '), { tokenize: splitSpaces, processTerm: identity })) {
      const count = new Set(result.queryTerms).size
      if (count > bestCount) {
        best = result
        bestCount = count
      }
    }
    return best
  }
}

function verdict (text: string, coverage: Coverage, reason: CoverageReason, evidence: KnowledgeEvidence): KnowledgeAnswer {
  return { text, citations: [], coverage: { availability: 'assessed', coverage, reason }, evidence }
}

/** The citation of a chunk: `sourceUrl` only when its document has one. */
export function citationOf (chunk: KnowledgeChunk): Citation {
  return {
    documentId: chunk.documentId,
    chunkId: chunk.id,
    title: chunk.title,
    ...(chunk.sourceUrl !== undefined ? { sourceUrl: chunk.sourceUrl } : {})
  }
}

/**
 * The chunk's most relevant sentences, in their original order: the sentence holding the most matched
 * document terms (the first one on a tie, the chunk's first sentence when none holds any), plus — up to
 * {@link MAX_ANSWER_SENTENCES} — the sentence adding the most matched terms the first one lacks.
 */
export function quoteSentences (text: string, matchedTerms: ReadonlySet<string>): string {
  return quoteCandidates(sentenceCandidates(text), matchedTerms)
}

/** A sentence of a chunk, with its position and its search terms: computed once per chunk. */
interface SentenceCandidate {
  sentence: string
  position: number
  terms: ReadonlySet<string>
}

function sentenceCandidates (text: string): SentenceCandidate[] {
  return sentences(text).map((sentence, position) => ({ sentence, position, terms: new Set(terms(sentence)) }))
}

/** {@link quoteSentences} over a chunk's precomputed sentences. */
function quoteCandidates (candidates: readonly SentenceCandidate[], matchedTerms: ReadonlySet<string>): string {
  const chosen: SentenceCandidate[] = []
  const covered = new Set<string>()
  while (chosen.length < MAX_ANSWER_SENTENCES) {
    let next: SentenceCandidate | undefined
    let gain = 0
    for (const candidate of candidates) {
      if (chosen.includes(candidate)) continue
      let candidateGain = 0
      for (const term of candidate.terms) if (matchedTerms.has(term) && !covered.has(term)) candidateGain++
      if (candidateGain > gain) {
        next = candidate
        gain = candidateGain
      }
    }
    if (next === undefined) break
    chosen.push(next)
    for (const term of next.terms) covered.add(term)
  }
  if (chosen.length === 0) return candidates[0].sentence
  return chosen.sort((a, b) => a.position - b.position).map((candidate) => candidate.sentence).join(' ')
}

/** A copy of an answer that shares nothing mutable with it (remembered answers stay as they were computed). */
function copyAnswer (answer: KnowledgeAnswer): KnowledgeAnswer {
  const evidence = answer.evidence
  return {
    text: answer.text,
    citations: answer.citations.map((citation) => ({ ...citation })),
    coverage: { ...answer.coverage },
    evidence: { ...evidence, queryTerms: [...evidence.queryTerms], matchedTerms: [...evidence.matchedTerms] }
  }
}
