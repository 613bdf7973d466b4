/**
 * Text PostgreSQL cannot hold, made the same for every store. A JSON string may carry an unpaired UTF-16 surrogate
 * (`"\ud800"` is valid JSON, RFC 8259 §8.2); JavaScript keeps it, but PostgreSQL's `json`/`jsonb` refuse it, so on
 * the database stores a turn holding one failed while the memory store answered it. Identifiers with one are refused
 * by the params' schema (params.ts, as U+0000 is); in every other string — text, data, metadata, member names — each
 * unpaired surrogate becomes U+FFFD before anything runs or is stored (docs/a2a-endpoint.md "Text").
 */

/** The value itself when every string in it is well formed; else a copy with each unpaired surrogate as U+FFFD. */
export function wellFormed<T> (value: T): T {
  return isWellFormedDeep(value) ? value : replaced(value) as T
}

function isWellFormedDeep (value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed()
  if (value === null || typeof value !== 'object') return true
  if (Array.isArray(value)) return value.every(isWellFormedDeep)
  for (const [key, child] of Object.entries(value)) {
    if (!key.isWellFormed() || !isWellFormedDeep(child)) return false
  }
  return true
}

// Recursive: the params were refused before this if they nest deeper than MAX_NESTING_DEPTH (nesting-depth.ts).
function replaced (value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed()
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(replaced)
  // fromEntries defines own members, so a `__proto__` member stays a member (as JSON.parse made it).
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key.toWellFormed(), replaced(child)]))
}
