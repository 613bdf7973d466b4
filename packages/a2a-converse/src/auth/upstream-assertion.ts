/**
 * The caller's identity carried to an upstream agent (proxy mode, `identity: assertion`; docs/trust.md): a short JWT
 * the gateway signs with its card key — `iss` the gateway, `sub` the caller, `aud` the upstream, `act` the gateway
 * as the party acting for the caller (RFC 8693 §4.1), `exp` minutes away — which the upstream verifies against the
 * gateway's JWKS. Signing costs a good part of a proxied call, so each caller's assertion is kept and reused until
 * shortly before it expires; never another caller's.
 */
import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import type { Caller } from '../protocol/backend.js'
import type { SigningKey } from './signing-key.js'

/** An assertion's lifetime at most (and by default), in seconds: RFC 8693 tokens for one hop are short. */
export const MAX_ASSERTION_LIFETIME_SEC = 300
/** At least, in seconds: shorter would mean signing nearly per call. */
export const MIN_ASSERTION_LIFETIME_SEC = 60
/** Callers whose assertion is kept per upstream; past it the oldest is signed again when next needed. */
const CACHED_CALLERS = 10_000

export interface AssertionMinterOptions {
  key: SigningKey
  /** `iss`, and the actor's `sub`: the gateway's public URL. */
  issuer: string
  /** `aud`: the upstream. */
  audience: string
  /** Seconds, 60–300. Default 300. */
  lifetimeSec?: number
  /** Callers whose assertion is kept. Default 10,000. */
  maxCached?: number
  /** Tests: the clock (ms). */
  now?: () => number
}

export interface AssertionMinter {
  /** The caller's assertion (a walk-in's: without `sub`), signed now or reused while more than a fifth of its life is left. */
  tokenFor: (caller: Caller | undefined) => Promise<string>
}

export function createAssertionMinter (options: AssertionMinterOptions): AssertionMinter {
  const { key, issuer, audience } = options
  const lifetimeSec = options.lifetimeSec ?? MAX_ASSERTION_LIFETIME_SEC
  const now = options.now ?? Date.now
  const maxCached = options.maxCached ?? CACHED_CALLERS
  // Renewed with a fifth of its life left: a call that starts with it still has a minute (at 300 s) to be verified.
  const renewAfterMs = lifetimeSec * 800
  const kept = new Map<string, { token: Promise<string>, renewAt: number }>()

  async function mint (caller: Caller | undefined, issuedAtMs: number): Promise<string> {
    const iat = Math.floor(issuedAtMs / 1000)
    const jwt = new SignJWT({ act: { sub: issuer } })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetimeSec)
      .setJti(randomUUID())
    if (caller !== undefined) jwt.setSubject(caller.id)
    return await jwt.sign(key.privateKey)
  }

  return {
    async tokenFor (caller) {
      // '' is no caller id (ids are 1-128 printable characters): the walk-ins' one assertion.
      const cacheKey = caller?.id ?? ''
      const at = now()
      const entry = kept.get(cacheKey)
      if (entry !== undefined && at < entry.renewAt) return await entry.token
      kept.delete(cacheKey)
      if (kept.size >= maxCached) kept.delete(kept.keys().next().value as string)
      const token = mint(caller, at)
      kept.set(cacheKey, { token, renewAt: at + renewAfterMs })
      return await token
    }
  }
}
