/**
 * The caller as @a2a-js/sdk sees it. The SDK scopes tasks, buses and push configs by (tenant, owner) with
 * `resolveUserScope(context)` = the call context's `user.userName` ("unknown" without a user); our task stores do
 * the same. An authenticated caller's id is that owner, so a caller sees only its own tasks.
 */
import { ServerCallContext, type User } from '@a2a-js/sdk/server'

export class AuthenticatedCaller implements User {
  readonly #id: string
  constructor (id: string) {
    this.#id = id
  }

  get isAuthenticated (): boolean {
    return true
  }

  get userName (): string {
    return this.#id
  }
}

/** The authenticated caller's id of an SDK call context; undefined for a walk-in (or no context). */
export function callerIdOf (context: { readonly user?: User } | undefined): string | undefined {
  const user = context?.user
  return user?.isAuthenticated === true ? user.userName : undefined
}

/** A call context in the scope of a caller (a walk-in's for undefined), for work done outside a request; `state` its state. */
export function callerContext (callerId: string | undefined, state?: Map<string, unknown>): ServerCallContext {
  return new ServerCallContext({ user: callerId === undefined ? undefined : new AuthenticatedCaller(callerId), state })
}
