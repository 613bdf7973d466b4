/**
 * A small, framework-free knowledge base: documents are split into chunks, indexed with MiniSearch and
 * searched to answer a question with the chunk text itself, the citations it used and an honest coverage
 * verdict. See docs/knowledge.md for the chunking, ids, thresholds and verdict rules. This module decides the
 * verdict and remembers answers; the terms, chunks, declarations, ranking and quotes are modules of their own.
 */
import type { Citation, Coverage, CoverageReason } from '../core/envelope.js'
import { chunkDocument, type KnowledgeChunk, type KnowledgeDocument } from './knowledge-chunks.js'
import { KnowledgeBaseError, scopeRules, containsPhrase, validateDocuments, type OutOfScopeTopic, type ScopeRule } from './knowledge-declarations.js'
import { bestResult, indexChunks } from './knowledge-index.js'
import { citationOf, quoteCandidates, sentenceCandidates, type SentenceCandidate } from './knowledge-quotes.js'
import { questionTerms, tokenize } from './knowledge-terms.js'

// What a knowledge base is built with and gives back, with it: the runtime entry and the loader import them here.
export { KnowledgeBaseError, type KnowledgeChunk, type KnowledgeDocument, type OutOfScopeTopic }

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
// The knowledge base

export class KnowledgeBase {
  readonly documents: readonly KnowledgeDocument[]
  readonly chunks: readonly KnowledgeChunk[]
  readonly #chunksById = new Map<string, KnowledgeChunk>()
  readonly #index: ReturnType<typeof indexChunks>
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
    this.#index = indexChunks(this.chunks)
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
    const best = bestResult(this.#index, queryTerms)
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
}

function verdict (text: string, coverage: Coverage, reason: CoverageReason, evidence: KnowledgeEvidence): KnowledgeAnswer {
  return { text, citations: [], coverage: { availability: 'assessed', coverage, reason }, evidence }
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
