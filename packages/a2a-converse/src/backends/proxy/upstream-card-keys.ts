/**
 * An upstream's card checked against the keys configured for it (proxy mode, `upstream.cardKeys`; docs/trust.md):
 * the official SDK's verifyAgentCardSignature, each signature's key picked by `kid` from a JWKS given inline or read
 * from a URL with each card read — or, with `jkuHost`, read from the URL the signature's own `jku` names, only when
 * that URL is on the configured host (https, or http on a loopback host): a forged card could name any JWKS, but
 * not one on a host it does not control. A card that does not verify is not used (upstream-card.ts): the agent is
 * not ready, and says why.
 */
import { request, type Dispatcher } from 'undici'
import { verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

/** Where an upstream's card keys are: a JWKS, inline or at a URL (read with each card). */
export interface UpstreamCardKeys {
  jwks?: { keys: unknown[] }
  jwksUrl?: string
  /**
   * The host (`name`, or `name:port` off the scheme's default port) each signature's `jku` must be on: the keys
   * read from there. https required unless the host is loopback (`localhost`, 127.0.0.0/8, `[::1]`).
   */
  jkuHost?: string
}

/** Why a card was not used: its signature, or the keys to check it with. */
export class UpstreamCardSignatureError extends ConverseError {
  constructor (problem: string) {
    super(ERROR_CODES.UPSTREAM_CARD_SIGNATURE, problem)
  }
}

/** Largest JWKS accepted, bytes. */
const MAX_JWKS_BYTES = 256 * 1024

/** Resolves when `card` carries a signature one of the keys verifies; rejects with UpstreamCardSignatureError. */
export type UpstreamCardVerifier = (card: unknown) => Promise<void>

export function upstreamCardVerifier (
  keys: UpstreamCardKeys, options: { dispatcher: Dispatcher, timeoutMs: number }
): UpstreamCardVerifier {
  async function keySet (url: string): Promise<unknown[]> {
    let text = ''
    try {
      const response = await request(url, { dispatcher: options.dispatcher, method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs) })
      if (response.statusCode !== 200) {
        await response.body.dump()
        throw new UpstreamCardSignatureError(`card keys not read: HTTP ${response.statusCode} from the JWKS URL`)
      }
      for await (const chunk of response.body) {
        text += (chunk as Buffer).toString('utf8')
        if (text.length > MAX_JWKS_BYTES) {
          response.body.destroy()
          throw new UpstreamCardSignatureError(`card keys not read: the JWKS exceeds ${MAX_JWKS_BYTES} bytes`)
        }
      }
    } catch (error) {
      if (error instanceof UpstreamCardSignatureError) throw error
      const err = error as { code?: unknown, name?: unknown }
      throw new UpstreamCardSignatureError(`card keys not read: ${String(typeof err.code === 'string' ? err.code : err.name)}`)
    }
    let jwks: unknown
    try {
      jwks = JSON.parse(text)
    } catch {
      throw new UpstreamCardSignatureError('card keys not read: the JWKS URL answered no JSON')
    }
    const list = (jwks as { keys?: unknown } | null)?.keys
    if (!Array.isArray(list)) throw new UpstreamCardSignatureError('card keys not read: the JWKS URL answered no {"keys": [...]}')
    return list
  }

  /** The JWKS a signature's `jku` names, when it is on the configured host; rejects with the reason otherwise. */
  async function jkuKeySet (jku: string | undefined): Promise<unknown[]> {
    let url: URL
    try {
      url = new URL(jku as string)
    } catch {
      throw new UpstreamCardSignatureError('card keys not read: a signature names no jku URL')
    }
    if (url.host !== (keys.jkuHost as string).toLowerCase()) throw new UpstreamCardSignatureError('card keys not read: a signature\'s jku is not on the configured host')
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
      throw new UpstreamCardSignatureError('card keys not read: a signature\'s jku is not https')
    }
    return await keySet(url.href)
  }

  return async (card) => {
    const signatures = (card as { signatures?: unknown }).signatures
    if (!Array.isArray(signatures) || signatures.length === 0) throw new UpstreamCardSignatureError('card is not signed')
    const fixed = keys.jkuHost !== undefined ? undefined : keys.jwks?.keys ?? await keySet(keys.jwksUrl as string)
    // With jkuHost: each jku's keys read once per card; the first reason a key could not be had is the card's.
    const read = new Map<string, Promise<unknown[]>>()
    let problem: UpstreamCardSignatureError | undefined
    const verify = verifyAgentCardSignature(async (kid, jku) => {
      let list = fixed
      if (list === undefined) {
        let pending = read.get(String(jku))
        if (pending === undefined) read.set(String(jku), pending = jkuKeySet(jku))
        try {
          list = await pending
        } catch (error) {
          problem ??= error as UpstreamCardSignatureError
          throw error
        }
      }
      const found = list.find((entry) => (entry as { kid?: unknown } | null)?.kid === kid)
      if (found === undefined) throw new Error(`no key ${kid}`)
      return found as Record<string, unknown>
    })
    try {
      await verify(card as AgentCard)
    } catch {
      // The SDK tells each failed signature's cause on console.debug (the gateway: its log at debug).
      throw problem ?? new UpstreamCardSignatureError('card signature does not verify with the configured keys')
    }
  }
}

/** Hosts a `jku` may be plain http on: this machine. */
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/
