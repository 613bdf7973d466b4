/**
 * How a caller authenticated, kept beside its Caller object rather than on it (a Caller is logged, stored and
 * copied; the credential must not be): the scheme that accepted it, and for a bearer JWT the token itself and when
 * it expires, which `upstream.identity.mode: passthrough` and `exchange` carry on to an upstream (docs/trust.md). An
 * API key is never kept: nothing can forward it. Held weakly: gone with the request's Caller (or with the follow of
 * an upstream task that kept a copy, backends/proxy/upstream-task-follower.ts).
 */
import type { Caller } from '../protocol/backend.js'

/** The scheme that accepted a caller: one of the gateway's API keys, or a JWT from the identity provider. */
export type CallerScheme = 'api-key' | 'jwt'

interface Credential { scheme: CallerScheme, token?: string, expiresAt?: number }

const credentials = new WeakMap<Caller, Credential>()

/** Records how `caller` authenticated (the authenticator does, once per request); a JWT with its `exp` in ms. */
export function recordCredential (caller: Caller, scheme: 'api-key'): void
export function recordCredential (caller: Caller, scheme: 'jwt', token: string, expiresAt: number): void
export function recordCredential (caller: Caller, scheme: CallerScheme, token?: string, expiresAt?: number): void {
  credentials.set(caller, token === undefined ? { scheme } : { scheme, token, expiresAt })
}

/** The scheme that accepted the caller; undefined for a walk-in, or a caller another authenticator made. */
export function callerScheme (caller: Caller | undefined): CallerScheme | undefined {
  return caller === undefined ? undefined : credentials.get(caller)?.scheme
}

/** The caller's own bearer JWT, when it authenticated with one; never an API key. */
export function callerBearerToken (caller: Caller | undefined): string | undefined {
  return caller === undefined ? undefined : credentials.get(caller)?.token
}

/**
 * Copies `from`'s bearer JWT onto `to` (another Caller object of the same caller, kept longer than the request's),
 * replacing what `to` held. When it expires (ms); undefined, copying nothing, when `from` has no token.
 */
export function keepBearerToken (from: Caller, to: Caller): number | undefined {
  const credential = credentials.get(from)
  if (credential?.token === undefined) return undefined
  credentials.set(to, credential)
  return credential.expiresAt
}
