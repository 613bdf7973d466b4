/**
 * Following configured upstream tasks (proxy mode push, docs/push.md "Proxy mode"): what the upstream does to a task
 * while no caller's request relays it — a long task finishing, a cancel made on the upstream itself — reaches the
 * webhooks only if the gateway listens. While a task with push configs is open, this instance holds one
 * SubscribeToTask stream on the upstream (when the upstream's card says `streaming`) and hands every event to
 * `save` (its copy: relayed-push-backend.ts).
 *
 * A follow ends when the stream ends (the task ended upstream, or the upstream has nothing running to follow: it is
 * not polled), when the task has no configs left (looked at after each event), on an upstream failure (logged at
 * warn; the next update a caller relays starts it again), or when the gateway closes. At most `maxFollowed` tasks
 * are followed per agent at once; past it a task is not followed (logged), its relayed updates are still delivered.
 *
 * With `keepsCallerToken` (`upstream.identity` passthrough or exchange: the upstream takes the caller's own token),
 * a follow keeps, in memory only, the bearer JWT of the request that started it (auth/caller-credential.ts, on the
 * follow's own Caller, gone with the follow): one per followed task, only the caller's whose task it is; a later
 * request of that caller on the task replaces it. When it expires the follow stops (logged at warn, never
 * the token) until the caller's next request on the task starts it again.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext, Caller, ServiceLogger } from '../../protocol/backend.js'
import { resolveUserScope } from '@a2a-js/sdk/server'
import { callerIdOf } from '../../auth/sdk-user.js'
import { keepBearerToken } from '../../auth/caller-credential.js'

/** Tasks one proxied agent follows upstream at once, by default. */
export const DEFAULT_MAX_FOLLOWED_TASKS = 1000

export interface UpstreamTaskFollowerOptions {
  agentId: string
  upstream: A2ABackend
  /** Saves one event into the task's copy. */
  save: (event: unknown, scope: ServerCallContext) => Promise<void>
  /** Whether the task still has configs in the scope. */
  configured: (taskId: string, scope: ServerCallContext) => Promise<boolean>
  maxFollowed?: number
  /** The upstream takes the caller's own token (passthrough, exchange): a follow keeps its caller's, until it expires. */
  keepsCallerToken?: boolean
  log?: ServiceLogger
  /** Tests: the clock (ms). */
  now?: () => number
}

export interface UpstreamTaskFollower {
  /**
   * Follows the task in the caller's scope, unless the upstream cannot stream or the bound is reached. `caller`: the
   * requester, whose token the follow keeps (with `keepsCallerToken`); a task followed already keeps the newer one.
   */
  follow (taskId: string, scope: ServerCallContext, log?: ServiceLogger, caller?: Caller): void
  /** Whether the task is followed now in the caller's scope. */
  following (taskId: string, scope: ServerCallContext): boolean
  /** Tasks followed now. */
  readonly size: number
  /** Ends every follow (the gateway closing); resolves once they have stopped. */
  close (): Promise<void>
}

/** setTimeout's longest delay (ms); a later expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1

interface Follow {
  controller: AbortController
  /** The follow's own Caller (the caller whose task it is; with `keepsCallerToken`, its kept token beside it). */
  caller: Caller | undefined
  /** Stops the follow when the kept token expires. */
  expiry?: NodeJS.Timeout
}

/**
 * What the gateway asks of the upstream on its own: no caller's extensions, no caller's headers; for the caller whose
 * task it is (identity: the assertion names them upstream; passthrough and exchange: its kept token).
 */
function followContext (agentId: string, follow: Follow): BackendContext {
  return {
    agentId,
    requestedExtensions: [],
    activated: [],
    version: '1.0',
    headers: {},
    signal: follow.controller.signal,
    ...(follow.caller === undefined ? {} : { caller: follow.caller })
  }
}

/** One follow: the task's events saved until the stream ends, the task has no configs left, or it fails (logged). */
async function runFollow (
  options: UpstreamTaskFollowerOptions, taskId: string, scope: ServerCallContext, follow: Follow, log: ServiceLogger | undefined
): Promise<void> {
  const { agentId, save, configured } = options
  const { signal } = follow.controller
  const events = options.upstream.stream({ id: `follow-${taskId}`, method: 'SubscribeToTask', params: { id: taskId } }, followContext(agentId, follow))
  try {
    for (let next = await events.next(); next.done !== true; next = await events.next()) {
      await save(next.value, scope)
      if (!await configured(taskId, scope)) break
    }
  } catch (error) {
    // The upstream failed (down, the stream cut or idle) or the store did: the next relayed update starts it again.
    if (!signal.aborted) log?.warn({ agentId, taskId, err: { name: (error as Error).name, message: (error as Error).message } }, 'stopped following an upstream task for its push notifications')
  } finally {
    await events.return?.()
  }
}

export function upstreamTaskFollower (options: UpstreamTaskFollowerOptions): UpstreamTaskFollower {
  const { agentId, upstream } = options
  const maxFollowed = options.maxFollowed ?? DEFAULT_MAX_FOLLOWED_TASKS
  const now = options.now ?? Date.now
  const followed = new Map<string, Follow>()
  /** Every follow still running, those already taken out of `followed` too (an expired token's, winding down). */
  const running = new Set<Promise<void>>()
  let closed = false

  const keyOf = (taskId: string, scope: ServerCallContext): string => JSON.stringify([resolveUserScope(scope), taskId])

  /** Keeps `from`'s token on the follow (the same caller only) and stops the follow when it expires. */
  function keep (follow: Follow, from: Caller | undefined, key: string, taskId: string, log: ServiceLogger | undefined): void {
    if (options.keepsCallerToken !== true || from === undefined || follow.caller === undefined || from.id !== follow.caller.id) return
    const expiresAt = keepBearerToken(from, follow.caller)
    if (expiresAt === undefined) return
    clearTimeout(follow.expiry)
    const arm = (): void => {
      follow.expiry = setTimeout(() => {
        if (now() < expiresAt) {
          arm()
          return
        }
        // Taken out at once: the caller's next request on the task starts a new follow, with its new token.
        followed.delete(key)
        follow.controller.abort()
        log?.warn({ agentId, taskId }, 'stopped following an upstream task for its push notifications: the caller\'s token it carried expired (followed again at the caller\'s next request on the task)')
      }, Math.min(Math.max(expiresAt - now(), 0), MAX_TIMER_MS))
      follow.expiry.unref()
    }
    arm()
  }

  return {
    following (taskId, scope) {
      return followed.has(keyOf(taskId, scope))
    },
    follow (taskId, scope, log = options.log, caller) {
      const key = keyOf(taskId, scope)
      const current = followed.get(key)
      if (current !== undefined) {
        keep(current, caller, key, taskId, log)
        return
      }
      if (closed || !upstream.facts.capabilities.streaming) return
      if (followed.size >= maxFollowed) {
        log?.warn({ agentId, taskId, followed: maxFollowed }, 'upstream task not followed: the bound of followed tasks is reached')
        return
      }
      const callerId = callerIdOf(scope)
      const follow: Follow = { controller: new AbortController(), caller: callerId === undefined ? undefined : { id: callerId } }
      followed.set(key, follow)
      keep(follow, caller, key, taskId, log)
      const done = runFollow(options, taskId, scope, follow, log).finally(() => {
        clearTimeout(follow.expiry)
        if (followed.get(key) === follow) followed.delete(key)
        running.delete(done)
      })
      running.add(done)
    },
    get size () { return followed.size },
    async close () {
      closed = true
      for (const { controller } of followed.values()) controller.abort()
      await Promise.all([...running])
    }
  }
}
