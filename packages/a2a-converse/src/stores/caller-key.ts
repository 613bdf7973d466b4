/**
 * The caller key of a request (docs/guarantees.md, "What is bounded"): `caller:<id>` for an authenticated caller,
 * `address:<client ip>` for a walk-in — the keys the rate limit uses. Per-caller bounds (open tasks, conversations)
 * count by it. The backend that builds a request's SDK call context puts it in the context's state
 * (packages/a2a-converse/src/backends/local/dispatch.ts `createContext`), so a store sees it through the ServerCallContext it is given.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/** The ServerCallContext state entry that holds the caller key. */
export const CALLER_KEY_STATE = 'a2a-converse.callerKey'

/** The key of walk-ins whose address is not known (work done outside a request, an SDK context built elsewhere). */
export const UNKNOWN_WALK_IN_KEY = 'address:unknown'

/** The caller key of an authenticated caller, or of a walk-in at `address`. */
export function callerKey (callerId: string | undefined, address: string | undefined): string {
  if (callerId !== undefined) return `caller:${callerId}`
  return address === undefined || address === '' ? UNKNOWN_WALK_IN_KEY : `address:${address}`
}

/** The caller key a context carries; without one, the authenticated user's, else the unknown walk-in's. */
export function callerKeyOf (context: Pick<ServerCallContext, 'state' | 'user'> | undefined): string {
  const stated = context?.state?.get(CALLER_KEY_STATE)
  if (typeof stated === 'string') return stated
  const user = context?.user
  return callerKey(user?.isAuthenticated === true ? user.userName : undefined, undefined)
}

/**
 * A store refused new work: the caller is at its cap (MAX_OPEN_TASKS_PER_CALLER, MAX_CONVERSATIONS_PER_CALLER), or
 * the store is full of open work and may evict none of it. Nothing was written. `cap` names the bound.
 */
export class CallerCapError extends ConverseError {
  readonly cap: string
  readonly limit: number

  constructor (cap: string, limit: number, message: string) {
    super(ERROR_CODES.CAP_REACHED, message)
    this.cap = cap
    this.limit = limit
  }
}
