/**
 * What a knowledge answer quotes and cites: the chunk's most relevant sentences and the chunk's citation, with
 * each chunk's sentences and their terms computed once, when the knowledge base is built.
 */
import type { Citation } from '../core/envelope.js'
import { sentences, type KnowledgeChunk } from './knowledge-chunks.js'
import { terms } from './knowledge-terms.js'

/** An answer quotes at most this many sentences of its chunk. */
export const MAX_ANSWER_SENTENCES = 2

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
export interface SentenceCandidate {
  sentence: string
  position: number
  terms: ReadonlySet<string>
}

export function sentenceCandidates (text: string): SentenceCandidate[] {
  return sentences(text).map((sentence, position) => ({ sentence, position, terms: new Set(terms(sentence)) }))
}

/** {@link quoteSentences} over a chunk's precomputed sentences. */
export function quoteCandidates (candidates: readonly SentenceCandidate[], matchedTerms: ReadonlySet<string>): string {
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
