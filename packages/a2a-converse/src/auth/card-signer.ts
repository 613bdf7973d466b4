/**
 * Agent card signatures (A2A 1.0 §8.4): a JWS over the card's JCS canonical form without `signatures`, made by the
 * official SDK's generateAgentCardSignature, its protected header naming the algorithm, the key (`kid`), `typ` and
 * where the key is published (`jku`). A card is signed once per body and `jku`: ECDSA signatures differ each time,
 * and a card's ETag must not change while its content does not (http/card-cache.ts).
 */
import { generateAgentCardSignature, type AgentCard } from '@a2a-js/sdk'
import type { SigningKey } from './signing-key.js'

/** Where a door publishes its keys, under its mount path: `<public URL><mount>/.well-known/jwks.json`. */
export const JWKS_PATH = '/.well-known/jwks.json'

/**
 * Signed cards kept: a card per agent, version (1.0, 0.3) and public base URL. Past it the least recently served is
 * signed again when next asked for (base URLs from the request's Host make more than a deployment's few).
 */
const CACHED_CARDS = 256

export interface CardSigner {
  /** `card` with one signature of this key (any it carried is dropped: the card it signed is not this one). */
  sign: (card: Record<string, unknown>, jku: string) => Promise<Record<string, unknown>>
}

export function createCardSigner (key: SigningKey): CardSigner {
  const signers = new Map<string, (card: AgentCard) => Promise<AgentCard>>()
  const signerFor = (jku: string): (card: AgentCard) => Promise<AgentCard> => {
    let signer = signers.get(jku)
    if (signer === undefined) {
      // Bounded with the cards: one per base URL.
      if (signers.size >= CACHED_CARDS) signers.clear()
      signers.set(jku, signer = generateAgentCardSignature(key.privateKey, { alg: key.alg, kid: key.kid, typ: 'JOSE', jku }))
    }
    return signer
  }
  const cache = new Map<string, Promise<Record<string, unknown>>>()
  return {
    async sign (card, jku) {
      const { signatures: _dropped, ...unsigned } = card
      const cacheKey = `${jku}\n${JSON.stringify(unsigned)}`
      let signed = cache.get(cacheKey)
      if (signed !== undefined) {
        // Most recently served last: the oldest entry is the first in the map.
        cache.delete(cacheKey)
      } else {
        signed = signerFor(jku)(unsigned as unknown as AgentCard) as unknown as Promise<Record<string, unknown>>
        if (cache.size >= CACHED_CARDS) cache.delete(cache.keys().next().value as string)
      }
      cache.set(cacheKey, signed)
      return await signed
    }
  }
}
