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
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext, ServiceLogger } from '../../protocol/backend.js'
import { resolveUserScope } from '@a2a-js/sdk/server'
import { callerIdOf } from '../../auth/sdk-user.js'

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
  log?: ServiceLogger
}

export interface UpstreamTaskFollower {
  /** Follows the task in the caller's scope, unless it is followed already, the upstream cannot stream, or the bound is reached. */
  follow (taskId: string, scope: ServerCallContext, log?: ServiceLogger): void
  /** Whether the task is followed now in the caller's scope. */
  following (taskId: string, scope: ServerCallContext): boolean
  /** Tasks followed now. */
  readonly size: number
  /** Ends every follow (the gateway closing); resolves once they have stopped. */
  close (): Promise<void>
}

export function upstreamTaskFollower (options: UpstreamTaskFollowerOptions): UpstreamTaskFollower {
  const { agentId, upstream, save, configured } = options
  const maxFollowed = options.maxFollowed ?? DEFAULT_MAX_FOLLOWED_TASKS
  const followed = new Map<string, { controller: AbortController, done: Promise<void> }>()
  let closed = false

  async function run (taskId: string, scope: ServerCallContext, signal: AbortSignal, log: ServiceLogger | undefined): Promise<void> {
    const callerId = callerIdOf(scope)
    const context: BackendContext = {
      agentId,
      // What the gateway asks of the upstream on its own: no caller's extensions, no caller's headers; for the
      // caller whose task it is (identity: assertion names them upstream).
      requestedExtensions: [],
      activated: [],
      version: '1.0',
      headers: {},
      signal,
      ...(callerId === undefined ? {} : { caller: { id: callerId } })
    }
    const events = upstream.stream({ id: `follow-${taskId}`, method: 'SubscribeToTask', params: { id: taskId } }, context)
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

  const keyOf = (taskId: string, scope: ServerCallContext): string => JSON.stringify([resolveUserScope(scope), taskId])

  return {
    following (taskId, scope) {
      return followed.has(keyOf(taskId, scope))
    },
    follow (taskId, scope, log = options.log) {
      const key = keyOf(taskId, scope)
      if (closed || followed.has(key) || !upstream.facts.capabilities.streaming) return
      if (followed.size >= maxFollowed) {
        log?.warn({ agentId, taskId, followed: maxFollowed }, 'upstream task not followed: the bound of followed tasks is reached')
        return
      }
      const controller = new AbortController()
      const done = run(taskId, scope, controller.signal, log).finally(() => { followed.delete(key) })
      followed.set(key, { controller, done })
    },
    get size () { return followed.size },
    async close () {
      closed = true
      const open = [...followed.values()]
      for (const { controller } of open) controller.abort()
      await Promise.all(open.map(async ({ done }) => await done))
    }
  }
}
