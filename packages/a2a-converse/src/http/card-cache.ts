/**
 * HTTP caching of agent cards (A2A 1.0 §8.6.1): `Cache-Control` with a max-age, an `ETag` hashed from the card
 * as served, and 304 Not Modified for an `If-None-Match` that names it. Both doors answer their card routes
 * through this, so they send the same validators for the same card.
 */
import { createHash } from 'node:crypto'

/**
 * How long a client may keep a card without asking again: five minutes, the time the gateway itself keeps a
 * proxied agent's card (`upstream.cardTtlMs`'s default). A client then revalidates with If-None-Match.
 */
export const CARD_MAX_AGE_SEC = 300

export interface CardReply {
  status: 200 | 304
  headers: Record<string, string>
  /** The card's JSON; undefined for a 304. */
  body?: string
}

/**
 * The reply to a GET of `card`, given the request's If-None-Match. `varies`: the card depends on the request's
 * `A2A-Version` (an agent that serves 0.3 too), so caches are told (`Vary`). `fromRequest`: its URLs come from the
 * request's Host / X-Forwarded-* (no fixed public URL), so it is `private`: a shared cache keys on the URL, and one
 * client's headers must not pick the card every client of the cache gets.
 */
export function cardReply (card: unknown, ifNoneMatch: string | undefined, varies = false, fromRequest = false): CardReply {
  const body = JSON.stringify(card)
  // Strong: the same card is the same bytes (publicUrl and the request's host are part of it).
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
  const headers: Record<string, string> = { 'cache-control': `${fromRequest ? 'private' : 'public'}, max-age=${CARD_MAX_AGE_SEC}`, etag }
  if (varies) headers.vary = 'A2A-Version'
  if (ifNoneMatch !== undefined && matches(ifNoneMatch, etag)) return { status: 304, headers }
  return { status: 200, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body }
}

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a W/ prefix does not count). */
function matches (header: string, etag: string): boolean {
  const tags = header.split(',').map((tag) => tag.trim())
  return tags.some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag)
}

/**
 * The headers of a JWKS (auth/card-signer.ts's JWKS_PATH): RFC 7517's media type, kept as long as a card. A key
 * rotation publishes the new key before cards are signed with it and keeps the old one while cards signed with it
 * may still be held (docs/signing.md).
 */
export const JWKS_HEADERS = Object.freeze({ 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': `public, max-age=${CARD_MAX_AGE_SEC}` })

/** The 404 of a `/v0.3/` card route for an agent whose endpoint serves A2A 1.0 only. */
export function notServed03Body (agentId: string): { statusCode: 404, error: 'Not Found', message: string } {
  return { statusCode: 404, error: 'Not Found', message: `agent "${agentId.slice(0, 128)}" does not serve A2A 0.3` }
}
