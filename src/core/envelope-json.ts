import { randomUUID } from 'node:crypto'
import type { ConverseEnvelope } from './envelope.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'
import type { Metadata } from './wire.js'

/**
 * The JSON text of envelopes that cannot change, computed once, and the JSON text of replies that carry them.
 *
 * Why: on Node 20, JSON.stringify scans every string for characters to escape, and a full envelope is most of
 * a decorated reply's text (~1.7 µs of ~2.7 µs for a message with three citations, more than the decoration
 * itself). A deep-frozen envelope (what the static provider returns, a frozen draft the decorator validated once,
 * the degraded `failed` envelope) has the same text every time, so that text is reused: the reply is serialized
 * with a placeholder string where each such envelope goes, and the known text is put in its place. The output
 * is the text JSON.stringify would give.
 */
const knownJson = new WeakMap<ConverseEnvelope, string>()

/**
 * Records the JSON text of an envelope the caller guarantees is deep-frozen (so the text can never go stale).
 * Returns the envelope.
 */
export function rememberEnvelopeJson (envelope: ConverseEnvelope): ConverseEnvelope {
  knownJson.set(envelope, JSON.stringify(envelope))
  return envelope
}

/** Whether an envelope's JSON text is known (see rememberEnvelopeJson). */
export function hasKnownJson (envelope: unknown): boolean {
  return typeof envelope === 'object' && envelope !== null && knownJson.has(envelope as ConverseEnvelope)
}

/**
 * The placeholder is a string no client can produce by accident or on purpose: it starts with U+0000 (written
 * `\u0000` in JSON, never raw) and holds a random id made at start and never sent. A placeholder the splice
 * cannot account for (missing, or present twice) makes it give up rather than guess.
 */
const PLACEHOLDER = `\u0000${randomUUID()}:`
/** How the placeholder's start reads in JSON text: a quote, `\u0000`, the id. */
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER).slice(0, -1)
/**
 * What the splice searches for. Long patterns make String#indexOf build search tables on every call (~0.2 µs
 * here), and a quote is everywhere in JSON; an escaped U+0000 is short and rare, so it is found first and the
 * rest of the placeholder checked in place.
 */
const ESCAPED_NUL = '\\u0000'

/**
 * `stringify(value)`, where `holders` are metadata objects inside `value` whose `metadata[URI]` is an envelope
 * with known JSON text: each is serialized as a placeholder, then replaced by the known text. The holders are
 * restored before this returns. Answers undefined when the placeholders do not come out exactly once each (a
 * serializer that drops or repeats them, or holders that are not in `value`): the caller then serializes the
 * value the ordinary way.
 */
export function stringifyWithKnownEnvelopes (
  value: unknown, holders: readonly Metadata[], stringify: (value: unknown) => unknown
): string | undefined {
  const envelopes = holders.map((holder) => holder[CONVERSE_EXTENSION_URI] as ConverseEnvelope)
  let text: unknown
  let swapped = 0
  try {
    for (; swapped < holders.length; swapped++) holders[swapped][CONVERSE_EXTENSION_URI] = PLACEHOLDER + swapped
    text = stringify(value)
  } catch {
    // A holder that cannot be written (frozen by someone) or a serializer that throws: serialize as usual.
    return undefined
  } finally {
    for (let i = 0; i < swapped; i++) holders[i][CONVERSE_EXTENSION_URI] = envelopes[i]
  }
  // A serializer may answer bytes (a custom reply serializer): nothing to splice into.
  return typeof text === 'string' ? splice(text, envelopes) : undefined
}

/** Replaces each placeholder `"<PLACEHOLDER><index>"` of the text, in text order, by its envelope's JSON. */
function splice (text: string, envelopes: readonly ConverseEnvelope[]): string | undefined {
  const spliced = new Set<number>()
  let out = ''
  let from = 0
  for (let at = text.indexOf(ESCAPED_NUL); at !== -1; at = text.indexOf(ESCAPED_NUL, at + 1)) {
    const start = at - 1
    if (text.slice(start, start + PLACEHOLDER_JSON.length) !== PLACEHOLDER_JSON) continue
    const close = text.indexOf('"', start + PLACEHOLDER_JSON.length)
    const index = Number(text.slice(start + PLACEHOLDER_JSON.length, close))
    const json = knownJson.get(envelopes[index])
    if (json === undefined || spliced.has(index)) return undefined
    spliced.add(index)
    out += text.slice(from, start) + json
    from = close + 1
    at = close
  }
  return spliced.size === envelopes.length ? out + text.slice(from) : undefined
}
