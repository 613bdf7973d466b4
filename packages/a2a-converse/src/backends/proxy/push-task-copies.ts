/**
 * The copies of configured upstream tasks (relayed-push-backend.ts; docs/push.md "Proxy mode"): which relayed
 * result is saved into which copy, an inline config saved before its task's first copy, and the follow upstream of a
 * copy still open (upstream-task-follower.ts). The relayed push backend decides which requests relay; this module
 * keeps the copies and their follows.
 */
import { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk'
import { AgentEvent, ResultManager, ServerCallContext, type AgentExecutionEvent, type TaskStore } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../auth/sdk-user.js'
import type { A2ABackend, BackendContext, ServiceLogger } from '../../protocol/backend.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { CALLER_KEY_STATE, callerKey } from '../../stores/caller-key.js'
import { TRACE_CONTEXT_STATE } from '../../telemetry/tracing.js'
import { TERMINAL_TASK_STATES } from '../../stores/task-states.js'
import { upstreamTaskFollower } from './upstream-task-follower.js'

/** What the copies need; the relayed push backend takes the same (RelayedPushBackendOptions) and hands it on whole. */
export interface PushTaskCopiesOptions {
  agentId: string
  /** The upstream backend (after the ownership check: every task named here is the caller's); followed tasks are read from it (SubscribeToTask). */
  upstream: A2ABackend
  /** Where configured tasks' copies live: a task store of their own, reporting each save's updates (push-wrapped). */
  copies: TaskStore
  /** The agent's config store and URL policy (the copies' store records notifications for these configs). */
  push: AgentPush
  /** Configured tasks followed upstream at once (upstream-task-follower.ts). Default DEFAULT_MAX_FOLLOWED_TASKS. */
  maxFollowedTasks?: number
  /** The upstream takes the caller's own token (`upstream.identity` passthrough, exchange): a follow keeps it. */
  keepsCallerToken?: boolean
  /** Where following logs. */
  log?: ServiceLogger
}

export interface PushTaskCopies {
  /**
   * Saves a result the caller gets either way into its task's copy, when there is one (a failure is logged: the
   * answer matters more), and follows the task again if it is not. Whether the result's task has a copy.
   */
  relay: (response: unknown, scope: ServerCallContext, context: BackendContext) => Promise<boolean>
  /** The inline config saved for the task the first result names, then the task's copy made from that result. */
  configure: (response: unknown, config: Record<string, unknown>, scope: ServerCallContext, context: BackendContext) => Promise<void>
  /** Follows the task upstream while its copy is open and it has configs (again after a restart or a failure). */
  followIfOpen: (taskId: string, scope: ServerCallContext, context: BackendContext) => Promise<void>
  /** Tasks followed upstream now. */
  readonly followed: number
  close: () => Promise<void>
}

/** The caller's scope in the copies' store (no tenant: upstream tasks are owned per caller, not per tenant). */
export function copyScopeOf (context: BackendContext): ServerCallContext {
  return new ServerCallContext({
    requestedExtensions: [...context.requestedExtensions],
    user: context.caller === undefined ? undefined : new AuthenticatedCaller(context.caller.id),
    // The relayed turn's trace, which the notifications a save queues continue (TRACE_CONTEXT_STATE).
    state: new Map<string, unknown>([[CALLER_KEY_STATE, callerKey(context.caller?.id, context.clientAddress)], [TRACE_CONTEXT_STATE, () => context.traceContext]])
  })
}

/** The task a relayed result (StreamResponse ProtoJSON) updates and the event that updates it; undefined for a Message. */
export function copyEventOf (response: unknown): { taskId: string, event: AgentExecutionEvent } | undefined {
  const payload = StreamResponse.fromJSON(response).payload
  if (payload === undefined || payload.$case === 'message') return undefined
  if (payload.$case === 'task') return { taskId: payload.value.id, event: AgentEvent.task(payload.value) }
  if (payload.$case === 'statusUpdate') return { taskId: payload.value.taskId, event: AgentEvent.statusUpdate(payload.value) }
  return { taskId: payload.value.taskId, event: AgentEvent.artifactUpdate(payload.value) }
}

export function pushTaskCopies (options: PushTaskCopiesOptions): PushTaskCopies {
  const { agentId, copies, push } = options
  const follower = upstreamTaskFollower({
    agentId,
    upstream: options.upstream,
    maxFollowed: options.maxFollowedTasks,
    keepsCallerToken: options.keepsCallerToken,
    log: options.log,
    save: async (event, scope) => { await saveCopy(event, scope, false) },
    configured: async (taskId, scope) => (await push.configs.configsOf(taskId, scope)).length > 0
  })

  /** Saves one relayed result into its task's copy: only when there is one, unless `create`. The task's id when saved. */
  async function saveCopy (response: unknown, scope: ServerCallContext, create: boolean): Promise<string | undefined> {
    const update = copyEventOf(response)
    if (update === undefined || update.taskId === '' || (!create && await copies.load(update.taskId, scope) === undefined)) return undefined
    // The SDK's ResultManager merge: the store computes and records the notifications as for a local task.
    await new ResultManager(copies, scope).processEvent(update.event)
    return update.taskId
  }

  async function followIfOpen (taskId: string, scope: ServerCallContext, context: BackendContext): Promise<void> {
    const copy = await copies.load(taskId, scope)
    if (copy === undefined || TERMINAL_TASK_STATES.has(copy.status?.state)) return
    if ((await push.configs.configsOf(taskId, scope)).length > 0) follower.follow(taskId, scope, context.log, context.caller)
  }

  return {
    followIfOpen,
    get followed () { return follower.size },
    close: async () => { await follower.close() },
    async relay (response, scope, context) {
      try {
        const saved = await saveCopy(response, scope, false)
        if (saved === undefined) return false
        // Followed: the caller's newer token kept (passthrough, exchange); not: followed again.
        if (follower.following(saved, scope)) follower.follow(saved, scope, context.log, context.caller)
        else await followIfOpen(saved, scope, context)
        return true
      } catch (error) {
        context.log?.error({ agentId, err: { name: (error as Error).name, message: (error as Error).message } }, 'push copy of an upstream task not saved')
        return true
      }
    },
    async configure (response, config, scope, context) {
      const payload = StreamResponse.fromJSON(response).payload
      // A reply or a stream's first event is a Task or a Message (A2A 1.0 §3.1.2): a Message has no task to configure.
      if (payload?.$case !== 'task') return
      const taskId = payload.value.id
      const saved = TaskPushNotificationConfig.fromJSON({ ...config, taskId })
      await push.configs.save(taskId, scope, saved)
      try {
        await saveCopy(response, scope, true)
      } catch (error) {
        // No copy (the copies' cap, the store): no config left that nothing would report to.
        await push.configs.delete(taskId, scope, saved.id)
        throw error
      }
      await followIfOpen(taskId, scope, context)
    }
  }
}
