/**
 * How a caller authenticated, kept beside its Caller object rather than on it (a Caller is logged, stored and
 * copied; the credential must not be): the scheme that accepted it, and for a bearer JWT the token itself, which
 * `upstream.identity.mode: passthrough` and `exchange` carry on to an upstream (docs/trust.md). An API key is never
 * kept: nothing can forward it. Held weakly: gone with the request's Caller.
 */
import type { Caller } from '../protocol/backend.js'

/** The scheme that accepted a caller: one of the gateway's API keys, or a JWT from the identity provider. */
export type CallerScheme = 'api-key' | 'jwt'

const credentials = new WeakMap<Caller, { scheme: CallerScheme, token?: string }>()

/** Records how `caller` authenticated (the authenticator does, once per request). */
export function recordCredential (caller: Caller, scheme: 'api-key'): void
export function recordCredential (caller: Caller, scheme: 'jwt', token: string): void
export function recordCredential (caller: Caller, scheme: CallerScheme, token?: string): void {
  credentials.set(caller, token === undefined ? { scheme } : { scheme, token })
}

/** The scheme that accepted the caller; undefined for a walk-in, or a caller another authenticator made. */
export function callerScheme (caller: Caller | undefined): CallerScheme | undefined {
  return caller === undefined ? undefined : credentials.get(caller)?.scheme
}

/** The caller's own bearer JWT, when it authenticated with one; never an API key. */
export function callerBearerToken (caller: Caller | undefined): string | undefined {
  return caller === undefined ? undefined : credentials.get(caller)?.token
}
