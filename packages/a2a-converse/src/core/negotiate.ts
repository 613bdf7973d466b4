/**
 * `A2A-Extensions` negotiation (A2A 1.0 §3.2.6, RFC 9110 §5.3 list semantics).
 *
 * Header values are untrusted. Parsing is linear in the header length and bounded: at most
 * MAX_HEADER_CHARS characters and MAX_REQUESTED items are looked at, so a junk header costs little.
 * Nothing is echoed that the agent does not declare, so CR/LF or junk cannot reach the response.
 */
export const MAX_HEADER_CHARS = 16 * 1024
export const MAX_REQUESTED = 64

export interface Negotiation {
  /** What the client asked for: trimmed, non-empty, de-duplicated, in request order. */
  readonly requested: readonly string[]
  /** requested ∩ declared, in request order. */
  readonly activated: readonly string[]
}

const NONE: Negotiation = Object.freeze({ requested: Object.freeze([]), activated: Object.freeze([]) })

/** Several header lines are one comma list: join them, split on commas, trim, drop empties and duplicates. */
export function parseExtensionsHeader (value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return []
  let joined = typeof value === 'string' ? value : value.join(',')
  if (joined.length > MAX_HEADER_CHARS) {
    // Never look at a cut item: a prefix of a longer URI may equal a declared one (…/v10 → …/v1).
    const lastComma = joined.lastIndexOf(',', MAX_HEADER_CHARS)
    joined = lastComma === -1 ? '' : joined.slice(0, lastComma)
  }
  const seen = new Set<string>()
  for (const item of joined.split(',')) {
    const uri = item.trim()
    if (uri === '' || seen.has(uri)) continue
    seen.add(uri)
    if (seen.size === MAX_REQUESTED) break
  }
  return [...seen]
}

/** URIs compare exactly: no case folding, no trailing-slash or version fallback. */
export function negotiate (value: string | readonly string[] | undefined, declared: ReadonlySet<string>): Negotiation {
  if (value === undefined || value === '') return NONE
  const requested = parseExtensionsHeader(value)
  return { requested, activated: requested.filter((uri) => declared.has(uri)) }
}

/** The response header value, or undefined when nothing was activated (the header is then omitted). */
export function formatExtensionsHeader (activated: readonly string[]): string | undefined {
  return activated.length === 0 ? undefined : activated.join(', ')
}
