/**
 * Who is calling: an `Authorization: Bearer <credential>` header turned into a Caller. Framework-free; the A2A
 * service (and every door through it) asks it once per request.
 *
 * - API keys (`callerId:key` pairs): only sha256 digests are kept after start; a presented key is hashed and
 *   compared with every digest in constant time (crypto.timingSafeEqual over fixed-length digests, all of them,
 *   so the time taken does not tell which key came close).
 * - JWT bearer tokens from an identity provider: `jose` verifies the signature against the provider's JWKS
 *   (fetched, cached and refetched on an unknown `kid`, so rotation needs nothing), the issuer, the audience,
 *   `exp` and `nbf` with a small clock tolerance. A token must carry `exp`: one without never expires, so it is
 *   refused exactly like an expired one. With `maxTokenAgeSec`, a token must also carry `iat`, have been issued
 *   within that age and not be minted to live longer (`exp - iat`), so a long-lived token is refused from its first
 *   use, not only once it is old. The caller id is the `sub` claim, or another string claim.
 *
 * Which scheme accepted the caller (and a JWT caller's token) is recorded beside the Caller (caller-credential.ts),
 * for the upstream identity modes that forward the caller's own token; an API key is never kept.
 *
 * A request without an Authorization header is a walk-in (undefined): whether that is allowed is the caller's
 * decision (per agent). A header that carries no valid credential rejects with AuthenticationError, whose
 * message never says which part failed, and nothing of the credential is kept on it.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose'
import type { Caller } from '../protocol/backend.js'
import { InvalidOptionError } from '../core/errors.js'
import { AuthenticationError, AuthenticationUnavailableError } from './errors.js'
import { recordCredential } from './caller-credential.js'

export { AuthenticationError, AuthenticationUnavailableError }

export interface ApiKeyCredential {
  /** The caller's id: what its tasks and conversations belong to. */
  callerId: string
  /** The secret sent as `Authorization: Bearer <key>`; at least 16 characters. */
  key: string
}

export interface JwtOptions {
  /** The identity provider's JWKS document (https, or http for a local provider). */
  jwksUrl: string
  /** The `iss` every token must carry. */
  issuer: string
  /** The `aud` every token must name. */
  audience: string
  /** The claim whose string value is the caller id. Default `sub`. */
  callerClaim?: string
  /** Seconds of clock skew accepted on `exp` and `nbf`. Default 30. */
  clockToleranceSec?: number
  /**
   * The longest a token may live, in seconds: when set, a token must carry `iat`, `exp - iat` must not exceed it and
   * `iat` must not be older. Default: none (`exp` is required all the same).
   */
  maxTokenAgeSec?: number
  /** Milliseconds to wait for the JWKS document. Default 5000. */
  jwksTimeoutMs?: number
  /**
   * Milliseconds after a JWKS fetch during which a token with an unknown `kid` is refused without fetching again
   * (so unknown kids cannot make the gateway hammer the provider). Default 30000.
   */
  jwksCooldownMs?: number
}

export interface AuthenticatorOptions {
  apiKeys?: readonly ApiKeyCredential[]
  jwt?: JwtOptions
}

/** What the doors and the service need of an authenticator (createAuthenticator makes one; any other will do). */
export interface Authenticator {
  /** Which kinds of credential are accepted (the card's securitySchemes say so). */
  readonly accepts: { readonly apiKeys: boolean, readonly jwt: boolean }
  /**
   * The caller the request's Authorization header names; undefined when the request has none (a walk-in).
   * Rejects with AuthenticationError when the header is there but names nobody (a bad, unknown, expired or
   * foreign credential, a scheme other than Bearer), and with AuthenticationUnavailableError when the identity
   * provider's keys cannot be fetched.
   */
  authenticate (headers: Readonly<Record<string, string | string[] | undefined>>): Promise<Caller | undefined>
}

export const MIN_API_KEY_LENGTH = 16
/** Caller ids are printable and bounded (they end up in store keys and logs). */
export const MAX_CALLER_ID_LENGTH = 128
const CALLER_ID = /^[\x21-\x7e]+$/
const WALK_IN_OWNER = 'unknown'
const DEFAULT_CLOCK_TOLERANCE_SEC = 30
const DEFAULT_JWKS_TIMEOUT_MS = 5000
const DEFAULT_JWKS_COOLDOWN_MS = 30_000
/** Longer Authorization headers are refused before any hashing or parsing. */
const MAX_CREDENTIAL_LENGTH = 8192

/**
 * Whether a string can be a caller id: 1–128 printable ASCII characters, no spaces, and not `unknown` — the
 * owner the SDK gives walk-ins (resolveUserScope), which no caller may share.
 */
export function isCallerId (value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_CALLER_ID_LENGTH && CALLER_ID.test(value) && value !== WALK_IN_OWNER
}

function digest (value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

function checkApiKeys (apiKeys: unknown): Array<{ callerId: string, digest: Buffer }> {
  if (!Array.isArray(apiKeys)) throw new InvalidOptionError('apiKeys', 'must be an array of { callerId, key }')
  const callers = new Set<string>()
  const digests = new Set<string>()
  return apiKeys.map((entry: Partial<ApiKeyCredential> | null, index) => {
    const where = `apiKeys[${index}]`
    if (entry === null || typeof entry !== 'object') throw new InvalidOptionError(where, 'must be { callerId, key }')
    if (!isCallerId(entry.callerId)) {
      throw new InvalidOptionError(`${where}.callerId`, `must be 1-${MAX_CALLER_ID_LENGTH} printable ASCII characters without spaces`)
    }
    if (typeof entry.key !== 'string' || entry.key.length < MIN_API_KEY_LENGTH || entry.key.length > MAX_CREDENTIAL_LENGTH || /\s/.test(entry.key)) {
      throw new InvalidOptionError(`${where}.key`, `must be ${MIN_API_KEY_LENGTH} or more characters without spaces`)
    }
    if (callers.has(entry.callerId)) throw new InvalidOptionError(`${where}.callerId`, `"${entry.callerId}" has a key already`)
    callers.add(entry.callerId)
    const hashed = digest(entry.key)
    if (digests.has(hashed.toString('hex'))) throw new InvalidOptionError(`${where}.key`, 'is the key of another caller')
    digests.add(hashed.toString('hex'))
    return { callerId: entry.callerId, digest: hashed }
  })
}

function checkJwt (jwt: JwtOptions): Required<Omit<JwtOptions, 'maxTokenAgeSec'>> & Pick<JwtOptions, 'maxTokenAgeSec'> & { url: URL } {
  if (jwt === null || typeof jwt !== 'object') throw new InvalidOptionError('jwt', 'must be { jwksUrl, issuer, audience }')
  let url: URL
  try {
    url = new URL(jwt.jwksUrl)
  } catch {
    throw new InvalidOptionError('jwt.jwksUrl', 'must be an absolute http(s) URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidOptionError('jwt.jwksUrl', 'must be an absolute http(s) URL')
  for (const name of ['issuer', 'audience'] as const) {
    if (typeof jwt[name] !== 'string' || jwt[name] === '') throw new InvalidOptionError(`jwt.${name}`, 'must be a non-empty string')
  }
  const callerClaim = jwt.callerClaim ?? 'sub'
  if (typeof callerClaim !== 'string' || !/^[A-Za-z0-9_.:/-]{1,64}$/.test(callerClaim)) {
    throw new InvalidOptionError('jwt.callerClaim', 'must be a claim name (letters, digits, _ . : / -)')
  }
  const clockToleranceSec = jwt.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC
  if (!Number.isInteger(clockToleranceSec) || clockToleranceSec < 0 || clockToleranceSec > 300) {
    throw new InvalidOptionError('jwt.clockToleranceSec', 'must be an integer from 0 to 300')
  }
  const jwksTimeoutMs = jwt.jwksTimeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS
  if (!Number.isInteger(jwksTimeoutMs) || jwksTimeoutMs < 1) throw new InvalidOptionError('jwt.jwksTimeoutMs', 'must be a positive integer')
  const jwksCooldownMs = jwt.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS
  if (!Number.isInteger(jwksCooldownMs) || jwksCooldownMs < 0) throw new InvalidOptionError('jwt.jwksCooldownMs', 'must be an integer ≥ 0')
  const maxTokenAgeSec = jwt.maxTokenAgeSec
  if (maxTokenAgeSec !== undefined && (!Number.isSafeInteger(maxTokenAgeSec) || maxTokenAgeSec < 1)) {
    throw new InvalidOptionError('jwt.maxTokenAgeSec', 'must be a positive integer (seconds)')
  }
  return { ...jwt, callerClaim, clockToleranceSec, jwksTimeoutMs, jwksCooldownMs, maxTokenAgeSec, url }
}

/** The credential of `Authorization: Bearer <credential>`; the scheme word is case-insensitive (RFC 9110 §11.1). */
export function bearerCredential (header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || header.length > MAX_CREDENTIAL_LENGTH) return undefined
  const match = /^bearer +(\S+) *$/i.exec(header)
  return match === null ? undefined : match[1]
}

/**
 * The caller a JWT names (its callerClaim), the token verified against the provider's keys: issuer, audience,
 * expiry, and with maxTokenAgeSec its age; a provider that cannot be asked is AuthenticationUnavailableError.
 */
async function tokenCaller (token: string, settings: ReturnType<typeof checkJwt>, keySet: JWTVerifyGetKey): Promise<Caller> {
  let payload: Record<string, unknown>
  const maxAge = settings.maxTokenAgeSec
  try {
    ({ payload } = await jwtVerify(token, keySet, {
      issuer: settings.issuer,
      audience: settings.audience,
      clockTolerance: settings.clockToleranceSec,
      requiredClaims: maxAge === undefined ? ['exp'] : ['exp', 'iat'],
      maxTokenAge: maxAge
    }))
  } catch (error) {
    // The provider could not be asked (timeout, network, a broken JWKS document): not the caller's fault.
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid || !(error instanceof joseErrors.JOSEError)) {
      throw new AuthenticationUnavailableError()
    }
    throw new AuthenticationError()
  }
  // jose has checked that exp (and, with a maximum age, iat) are numbers.
  if (maxAge !== undefined && (payload.exp as number) - (payload.iat as number) > maxAge) {
    throw new AuthenticationError()
  }
  const id = payload[settings.callerClaim]
  if (!isCallerId(id)) throw new AuthenticationError()
  const caller = { id }
  // Kept beside the caller (caller-credential.ts) for an upstream that takes the caller's own token, with its
  // `exp` (a follow of an upstream task carries it no longer).
  recordCredential(caller, 'jwt', token, (payload.exp as number) * 1000)
  return caller
}

export function createAuthenticator (options: AuthenticatorOptions): Authenticator {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('authentication', 'must be an object')
  const keys = options.apiKeys === undefined ? [] : checkApiKeys(options.apiKeys)
  const jwt = options.jwt === undefined ? undefined : checkJwt(options.jwt)
  if (keys.length === 0 && jwt === undefined) throw new InvalidOptionError('authentication', 'needs apiKeys or jwt')
  const jwks: JWTVerifyGetKey | undefined = jwt === undefined
    ? undefined
    : createRemoteJWKSet(jwt.url, { timeoutDuration: jwt.jwksTimeoutMs, cooldownDuration: jwt.jwksCooldownMs })

  /** Every digest is compared, match or not, so the time does not depend on which key matched. */
  function keyCaller (credential: string): Caller | undefined {
    const presented = digest(credential)
    let found: string | undefined
    for (const key of keys) {
      if (timingSafeEqual(presented, key.digest) && found === undefined) found = key.callerId
    }
    if (found === undefined) return undefined
    const caller = { id: found }
    recordCredential(caller, 'api-key')
    return caller
  }

  async function authenticateHeaders (headers: Parameters<Authenticator['authenticate']>[0]): Promise<Caller | undefined> {
    const header = headers.authorization
    if (header === undefined) return undefined
    const credential = bearerCredential(header)
    if (credential === undefined) throw new AuthenticationError()
    const caller = keys.length > 0 ? keyCaller(credential) : undefined
    if (caller !== undefined) return caller
    // A compact JWS has three base64url parts; anything else cannot be a token.
    if (jwt !== undefined && jwks !== undefined && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(credential)) return await tokenCaller(credential, jwt, jwks)
    throw new AuthenticationError()
  }

  /**
   * One authentication per request: whoever asks again with the same headers object (the gateway's rate limiter,
   * then the service) gets the same answer. Held weakly: gone with the request.
   */
  const answered = new WeakMap<object, Promise<Caller | undefined>>()

  return {
    accepts: { apiKeys: keys.length > 0, jwt: jwt !== undefined },
    async authenticate (headers) {
      let answer = answered.get(headers)
      if (answer === undefined) {
        answer = authenticateHeaders(headers)
        answered.set(headers, answer)
      }
      return await answer
    }
  }
}
