/**
 * The knowledge base's term pipeline, one for documents, questions and declared keywords, so that a word is
 * the same search term wherever it comes from (docs/knowledge.md "Terms").
 */

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
