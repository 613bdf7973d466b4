/**
 * Recognising a routine in plain text from the declarations' `triggers` phrases ("book a table").
 * Rules (docs/routines.md): case-insensitive; whole words only (a phrase never matches inside a longer word);
 * any run of whitespace in the phrase matches any run of whitespace in the text; typographic apostrophes count
 * as '. When several phrases match, the one that starts earliest in the text wins, then the longest phrase,
 * then the routine declared first. Routines switched off (`enabled: false`) are never recognised.
 */
import type { RoutineDeclaration } from '../core/routine-declarations.js'

export type TriggerMatcher = (text: string) => RoutineDeclaration | undefined

interface CompiledTrigger {
  declaration: RoutineDeclaration
  phrase: string
  pattern: RegExp
}

/** Letters, digits and `_` make words; a phrase must not touch one on either side. */
const WORD_BEFORE = '(?<![\\p{L}\\p{N}_])'
const WORD_AFTER = '(?![\\p{L}\\p{N}_])'

function normaliseApostrophes (text: string): string {
  return text.replace(/[\u2018\u2019\u02bc]/g, "'")
}

function phrasePattern (phrase: string): RegExp {
  const words = normaliseApostrophes(phrase).trim().split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
  return new RegExp(`${WORD_BEFORE}${words.join('\\s+')}${WORD_AFTER}`, 'iu')
}

/** Compiles the trigger phrases once; the returned function answers the routine a text starts, or undefined. */
export function createTriggerMatcher (declarations: readonly RoutineDeclaration[]): TriggerMatcher {
  const triggers: CompiledTrigger[] = []
  declarations.forEach((declaration) => {
    if (declaration.enabled === false) return
    for (const phrase of declaration.triggers ?? []) {
      if (phrase.trim() === '') continue
      triggers.push({ declaration, phrase: phrase.trim(), pattern: phrasePattern(phrase) })
    }
  })
  return (text) => {
    if (typeof text !== 'string' || text === '') return undefined
    const haystack = normaliseApostrophes(text)
    let best: { trigger: CompiledTrigger, index: number } | undefined
    for (const trigger of triggers) {
      const match = trigger.pattern.exec(haystack)
      if (match === null) continue
      // Triggers are in declaration order, so strict comparisons leave ties to the routine declared first.
      if (best === undefined || match.index < best.index ||
        (match.index === best.index && trigger.phrase.length > best.trigger.phrase.length)) {
        best = { trigger, index: match.index }
      }
    }
    return best?.trigger.declaration
  }
}

const matchers = new WeakMap<readonly RoutineDeclaration[], TriggerMatcher>()

/**
 * The routine whose trigger phrase the text contains, or undefined. Convenience over `createTriggerMatcher`:
 * the matcher is compiled once per declarations array (cached by identity, so do not mutate the array).
 */
export function recognizeRoutine (text: string, declarations: readonly RoutineDeclaration[]): RoutineDeclaration | undefined {
  let matcher = matchers.get(declarations)
  if (matcher === undefined) {
    matcher = createTriggerMatcher(declarations)
    matchers.set(declarations, matcher)
  }
  return matcher(text)
}
