/**
 * The knowledge base's ranking: the MiniSearch index over its chunks and the choice of the chunk a question is
 * answered from. The answer's verdict compares terms, not raw scores, so ranking stays free to weigh fields.
 */
import MiniSearch, { type SearchResult } from 'minisearch'
import type { KnowledgeChunk } from './knowledge-chunks.js'
import { processTerm, tokenize } from './knowledge-terms.js'

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

interface IndexedChunk {
  id: string
  title: string
  section?: string
  text: string
}

const identity = (term: string): string => term
const splitSpaces = (text: string): string[] => text.split(' ')

/** An index of the chunks: title and section boosted, prefix and fuzzy search by term length. */
export function indexChunks (chunks: readonly KnowledgeChunk[]): MiniSearch<IndexedChunk> {
  const index = new MiniSearch<IndexedChunk>({
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
  index.addAll(chunks)
  return index
}

/**
 * The result matching the most distinct query terms; among those, the best scored (results come sorted). The
 * terms are already processed, so the search neither splits nor processes them again.
 */
export function bestResult (index: MiniSearch<IndexedChunk>, queryTerms: readonly string[]): SearchResult | undefined {
  let best: SearchResult | undefined
  let bestCount = 0
  for (const result of index.search(queryTerms.join(' '), { tokenize: splitSpaces, processTerm: identity })) {
    const count = new Set(result.queryTerms).size
    if (count > bestCount) {
      best = result
      bestCount = count
    }
  }
  return best
}
