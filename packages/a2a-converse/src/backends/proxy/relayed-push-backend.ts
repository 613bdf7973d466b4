/**
 * Push notifications for a proxied agent, delivered by the gateway from what it relays (docs/push.md, "Proxy
 * mode"): configs are never forwarded upstream. Sits between the ownership check (owned-upstream-backend.ts, which
 * has already refused another caller's task) and the upstream backend.
 *
 * - A task with configs has a **copy** in a task store of its own (`copies`, push-wrapped: the memory wrapper or
 *   the PostgreSQL outbox), scoped by caller as local tasks are. Every update the gateway relays for it — a turn's
 *   reply, the events of a stream or a SubscribeToTask, a GetTask or CancelTask result — is saved into the copy
 *   (the SDK's ResultManager merge), so the store computes and records the notifications exactly as for a local
 *   task (packages/a2a-converse/src/push/task-updates.ts), and drops the configs when the copy ends.
 * - The four config methods are answered here by the SDK's request handler over the copies and the agent's config
 *   store (a local backend with no executor): the same checks, errors and cap as a local agent's. Creating the first
 *   config of a task copies it first (GetTask upstream). Without a copy a task has no configs: List answers none,
 *   Delete nothing to do, Get -32001.
 * - An inline `configuration.taskPushNotificationConfig` is checked (-32602 naming its `url` before the turn goes
 *   upstream), taken off the forwarded request, and saved for the task the reply (or the stream's first event)
 *   names, before that task's copy is first saved: the first notification is the task's first status.
 *
 * - While a configured task is open, it is followed upstream (upstream-task-follower.ts: SubscribeToTask), so what
 *   the upstream does on its own while no caller's request relays it is saved into the copy too; with
 *   `keepsCallerToken`, carrying the token of the caller's latest request on the task, until it expires.
 */
import { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk'
import { AgentEvent, ResultManager, ServerCallContext, type AgentExecutionEvent, type AgentExecutor, type TaskStore } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../auth/sdk-user.js'
import type { A2ABackend, BackendContext, ServiceLogger } from '../../protocol/backend.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { taskNotFound } from '../../protocol/errors.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { CALLER_KEY_STATE, callerKey } from '../../stores/caller-key.js'
import { TRACE_CONTEXT_STATE } from '../../telemetry/tracing.js'
import { TERMINAL_TASK_STATES } from '../../stores/task-states.js'
import { PushConfigRefusedError } from '../local/dispatch.js'
import { A2AReplyError, localBackend } from '../local/local-backend.js'
import { UpstreamError } from './upstream-errors.js'
import { upstreamTaskFollower } from './upstream-task-follower.js'

export interface RelayedPushBackendOptions {
  agentId: string
  /** The upstream backend (after the ownership check: every task named here is the caller's). */
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

export interface RelayedPushBackend extends A2ABackend {
  /** Tasks followed upstream now. */
  readonly followed: number
  /** Stops following tasks upstream (the gateway closing). */
  close (): Promise<void>
}

export const CONFIG_METHODS: ReadonlySet<string> = new Set([
  'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig'
])

const INLINE_URL_FIELD = 'configuration.taskPushNotificationConfig.url'

/** The config methods only: nothing executes here. */
const NO_EXECUTOR: AgentExecutor = {
  /* c8 ignore next 2 -- the local backend here answers the config methods only, which never execute */
  async execute () { throw new Error('the copies of upstream tasks do not execute') },
  async cancelTask () { throw new Error('the copies of upstream tasks are not canceled here') }
}

type Json = Record<string, unknown>

export function relayedPushBackend (options: RelayedPushBackendOptions): RelayedPushBackend {
  const { agentId, upstream, copies, push } = options
  const follower = upstreamTaskFollower({
    agentId,
    upstream,
    maxFollowed: options.maxFollowedTasks,
    keepsCallerToken: options.keepsCallerToken,
    log: options.log,
    save: async (event, scope) => { await saveCopy(event, scope, false) },
    configured: async (taskId, scope) => (await push.configs.configsOf(taskId, scope)).length > 0
  })
  const local = localBackend({
    card: { name: agentId, description: '', capabilities: { streaming: false, pushNotifications: true } },
    executor: NO_EXECUTOR,
    taskStore: copies,
    push,
    leanSendMessage: false
  })
  let factsOf: { upstream: AgentFacts, facts: AgentFacts } | undefined

  /** The upstream's facts, push notifications on (the gateway delivers). */
  function facts (): AgentFacts {
    const current = upstream.facts
    if (factsOf?.upstream !== current) {
      factsOf = { upstream: current, facts: { ...current, capabilities: { ...current.capabilities, pushNotifications: true } } }
    }
    return factsOf.facts
  }

  /** The caller's scope in the copies' store (no tenant: upstream tasks are owned per caller, not per tenant). */
  function scopeOf (context: BackendContext): ServerCallContext {
    return new ServerCallContext({
      requestedExtensions: [...context.requestedExtensions],
      user: context.caller === undefined ? undefined : new AuthenticatedCaller(context.caller.id),
      // The relayed turn's trace, which the notifications a save queues continue (TRACE_CONTEXT_STATE).
      state: new Map<string, unknown>([[CALLER_KEY_STATE, callerKey(context.caller?.id, context.clientAddress)], [TRACE_CONTEXT_STATE, () => context.traceContext]])
    })
  }

  /**
   * Saves one relayed result (StreamResponse ProtoJSON) into its task's copy: only when there is one, unless `create`.
   * The id of the task whose copy was saved; undefined when none was.
   */
  async function saveCopy (response: unknown, scope: ServerCallContext, create: boolean): Promise<string | undefined> {
    const payload = StreamResponse.fromJSON(response).payload
    if (payload === undefined || payload.$case === 'message') return undefined
    const taskId = payload.$case === 'task' ? payload.value.id : payload.value.taskId
    if (taskId === '' || (!create && await copies.load(taskId, scope) === undefined)) return undefined
    let event: AgentExecutionEvent
    if (payload.$case === 'task') event = AgentEvent.task(payload.value)
    else if (payload.$case === 'statusUpdate') event = AgentEvent.statusUpdate(payload.value)
    else event = AgentEvent.artifactUpdate(payload.value)
    await new ResultManager(copies, scope).processEvent(event)
    return taskId
  }

  /** Follows the task upstream while its copy is open and it has configs (again after a restart or a failure). */
  async function followIfOpen (taskId: string, scope: ServerCallContext, context: BackendContext): Promise<void> {
    const copy = await copies.load(taskId, scope)
    if (copy === undefined || TERMINAL_TASK_STATES.has(copy.status?.state)) return
    if ((await push.configs.configsOf(taskId, scope)).length > 0) follower.follow(taskId, scope, context.log, context.caller)
  }

  /**
   * saveCopy for a result the caller gets either way (a failure is logged: the answer matters more), and the task
   * followed again if it is not (a restart, a failed follow). Whether the result's task has a copy.
   */
  async function relay (response: unknown, scope: ServerCallContext, context: BackendContext): Promise<boolean> {
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
  }

  /** The inline config of a turn (checked; refused: -32602 naming its url), and the request forwarded without it. */
  function inlineConfig (request: CheckedRequest): { forwarded: CheckedRequest, config?: Json } {
    const configuration = request.params.configuration as Json | undefined
    const config = configuration?.taskPushNotificationConfig as Json | undefined
    if (configuration === undefined || config === undefined) return { forwarded: request }
    const refusal = push.policy.refusal(config.url as string)
    if (refusal !== undefined) throw new PushConfigRefusedError(INLINE_URL_FIELD, refusal)
    const { taskPushNotificationConfig: _config, ...rest } = configuration
    return { forwarded: { ...request, params: { ...request.params, configuration: rest } }, config }
  }

  /** The inline config saved for the task the first result names, then the task's copy made from that result. */
  async function configure (response: unknown, config: Json, scope: ServerCallContext, context: BackendContext): Promise<void> {
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

  async function configCall (request: CheckedRequest, context: BackendContext): Promise<unknown> {
    const { tenant: _tenant, ...params } = request.params
    const taskId = params.taskId as string
    const scope = scopeOf(context)
    if (await copies.load(taskId, scope) === undefined) {
      switch (request.method) {
        case 'CreateTaskPushNotificationConfig': {
          // Checked before the task is copied: a refused URL costs no upstream call.
          const refusal = push.policy.refusal(params.url as string)
          if (refusal !== undefined) throw new PushConfigRefusedError('url', refusal)
          const task = await upstream.call({ ...request, method: 'GetTask', params: { id: taskId } }, context)
          await copies.save(Task.fromJSON(task), scope)
          break
        }
        case 'ListTaskPushNotificationConfigs':
          return { configs: [], nextPageToken: '' }
        case 'DeleteTaskPushNotificationConfig':
          return {}
        default:
          throw new A2AReplyError(taskNotFound(taskId, `Push notification config not found for task ${taskId}.`))
      }
    }
    const result = await local.call({ ...request, params }, context)
    if (request.method === 'CreateTaskPushNotificationConfig') await followIfOpen(taskId, scope, context)
    return result
  }

  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const scope = scopeOf(context)
    const { forwarded, config } = request.method === 'SendStreamingMessage' ? inlineConfig(request) : { forwarded: request }
    // Whether the stream's task has a copy, looked up once, at its first event: a new task's stream (no inline
    // config) cannot have one then (nobody knew its id), and a config made while the stream runs starts a follow of
    // the task upstream, which saves what this stream would.
    const known = request.method === 'SubscribeToTask' || typeof (request.params.message as Json).taskId === 'string'
    let copied: boolean | undefined = config === undefined && !known ? false : undefined
    for await (const result of iterate(upstream.stream(forwarded, context))) {
      if (copied === undefined && config !== undefined) {
        await configure(result, config, scope, context)
        copied = true
      } else if (copied === undefined) {
        copied = await relay(result, scope, context)
      } else if (copied) {
        await relay(result, scope, context)
      }
      yield result
    }
  }

  return {
    get facts () { return facts() },
    get followed () { return follower.size },
    close: async () => { await follower.close() },
    async call (request, context) {
      if (CONFIG_METHODS.has(request.method)) return await configCall(request, context)
      switch (request.method) {
        case 'SendMessage': {
          const { forwarded, config } = inlineConfig(request)
          const result = await upstream.call(forwarded, context)
          if (config !== undefined) await configure(result, config, scopeOf(context), context)
          else if (typeof (request.params.message as Json).taskId === 'string') await relay(result, scopeOf(context), context)
          return result
        }
        case 'GetTask':
        case 'CancelTask': {
          const result = await upstream.call(request, context)
          await relay({ task: result }, scopeOf(context), context)
          return result
        }
        default:
          return await upstream.call(request, context)
      }
    },
    stream,
    toError (error, request, log) {
      return error instanceof UpstreamError ? upstream.toError(error, request, log) : local.toError(error, request, log)
    }
  }
}

function iterate<T> (iterator: AsyncIterator<T, void, undefined>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator }
}
