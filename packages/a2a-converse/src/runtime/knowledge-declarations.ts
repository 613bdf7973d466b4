/**
 * What a knowledge base is built with, checked once at construction: the documents (ids, titles, bodies,
 * source URLs) and the declared out-of-scope topics, compiled to the term phrases that reveal them.
 */
import { ConverseError, ERROR_CODES } from '../core/errors.js'
import type { KnowledgeDocument } from './knowledge-chunks.js'
import { terms } from './knowledge-terms.js'

/** A topic the agent declares out of scope; `keywords` are words or phrases that reveal it. */
export interface OutOfScopeTopic {
  topic: string
  /** Defaults to the topic itself. Matched on whole (stemmed, stop-word-free) terms, phrases in order. */
  keywords?: string[]
}

export class KnowledgeBaseError extends ConverseError {
  constructor (message: string) {
    super(ERROR_CODES.KNOWLEDGE_BASE, message)
  }
}

const DOCUMENT_ID = /^[^\s#]+$/
const SOURCE_URL = /^https?:\/\/\S+$/

export function validateDocuments (documents: unknown): asserts documents is KnowledgeDocument[] {
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

export interface ScopeRule {
  topic: string
  phrases: string[][]
}

export function scopeRules (outOfScope: unknown): ScopeRule[] {
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

export function containsPhrase (haystack: readonly string[], phrase: readonly string[]): boolean {
  for (let start = 0; start + phrase.length <= haystack.length; start++) {
    if (phrase.every((term, offset) => haystack[start + offset] === term)) return true
  }
  return false
}
