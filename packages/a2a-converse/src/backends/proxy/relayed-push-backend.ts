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
 *
 * This module decides which requests relay what; the copies and their follows are push-task-copies.ts's.
 */
import { Task } from '@a2a-js/sdk'
import type { AgentExecutor } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { taskNotFound } from '../../protocol/errors.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { PushConfigRefusedError } from '../local/dispatch-errors.js'
import { A2AReplyError, localBackend } from '../local/local-backend.js'
import { UpstreamError } from './upstream-errors.js'
import { copyScopeOf, pushTaskCopies, type PushTaskCopiesOptions } from './push-task-copies.js'

/** The copies' options, handed on whole (one type: push-task-copies.ts documents each field). */
export type RelayedPushBackendOptions = PushTaskCopiesOptions

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
  const { upstream, copies, push } = options
  const kept = pushTaskCopies(options)
  const local = localBackend({
    card: { name: options.agentId, description: '', capabilities: { streaming: false, pushNotifications: true } },
    executor: NO_EXECUTOR,
    taskStore: copies,
    push,
    leanSendMessage: false
  })
  const facts = pushOnFacts(upstream)

  async function configCall (request: CheckedRequest, context: BackendContext): Promise<unknown> {
    const { tenant: _tenant, ...params } = request.params
    const taskId = params.taskId as string
    const scope = copyScopeOf(context)
    if (await copies.load(taskId, scope) === undefined) {
      const answer = answerWithoutCopy(request.method, taskId)
      if (answer !== undefined) return answer
      // Checked before the task is copied: a refused URL costs no upstream call.
      const refusal = push.policy.refusal(params.url as string)
      if (refusal !== undefined) throw new PushConfigRefusedError('url', refusal)
      const task = await upstream.call({ ...request, method: 'GetTask', params: { id: taskId } }, context)
      await copies.save(Task.fromJSON(task), scope)
    }
    const result = await local.call({ ...request, params }, context)
    if (request.method === 'CreateTaskPushNotificationConfig') await kept.followIfOpen(taskId, scope, context)
    return result
  }

  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const scope = copyScopeOf(context)
    const { forwarded, config } = request.method === 'SendStreamingMessage' ? inlineConfig(request, push) : { forwarded: request }
    let copied: boolean | undefined = copiedBeforeFirstEvent(request, config)
    for await (const result of iterate(upstream.stream(forwarded, context))) {
      if (copied === undefined && config !== undefined) {
        await kept.configure(result, config, scope, context)
        copied = true
      } else if (copied === undefined) {
        copied = await kept.relay(result, scope, context)
      } else if (copied) {
        await kept.relay(result, scope, context)
      }
      yield result
    }
  }

  return {
    get facts () { return facts() },
    get followed () { return kept.followed },
    close: async () => { await kept.close() },
    async call (request, context) {
      if (CONFIG_METHODS.has(request.method)) return await configCall(request, context)
      switch (request.method) {
        case 'SendMessage': {
          const { forwarded, config } = inlineConfig(request, push)
          const result = await upstream.call(forwarded, context)
          if (config !== undefined) await kept.configure(result, config, copyScopeOf(context), context)
          else if (typeof (request.params.message as Json).taskId === 'string') await kept.relay(result, copyScopeOf(context), context)
          return result
        }
        case 'GetTask':
        case 'CancelTask': {
          const result = await upstream.call(request, context)
          await kept.relay({ task: result }, copyScopeOf(context), context)
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

/** The upstream's facts, push notifications on (the gateway delivers): one object per upstream facts object. */
function pushOnFacts (upstream: A2ABackend): () => AgentFacts {
  let factsOf: { upstream: AgentFacts, facts: AgentFacts } | undefined
  return () => {
    const current = upstream.facts
    if (factsOf?.upstream !== current) {
      factsOf = { upstream: current, facts: { ...current, capabilities: { ...current.capabilities, pushNotifications: true } } }
    }
    return factsOf.facts
  }
}

/**
 * Whether a stream's task has a copy, as far as is known before its first event: false for a new task's stream
 * without an inline config (nobody knew its id), else undefined — looked up once, at the first event. A config
 * made while the stream runs starts a follow of the task upstream, which saves what this stream would.
 */
function copiedBeforeFirstEvent (request: CheckedRequest, config: Json | undefined): false | undefined {
  const known = request.method === 'SubscribeToTask' || typeof (request.params.message as Json).taskId === 'string'
  return config === undefined && !known ? false : undefined
}

/** The inline config of a turn (checked; refused: -32602 naming its url), and the request forwarded without it. */
function inlineConfig (request: CheckedRequest, push: AgentPush): { forwarded: CheckedRequest, config?: Json } {
  const configuration = request.params.configuration as Json | undefined
  const config = configuration?.taskPushNotificationConfig as Json | undefined
  if (configuration === undefined || config === undefined) return { forwarded: request }
  const refusal = push.policy.refusal(config.url as string)
  if (refusal !== undefined) throw new PushConfigRefusedError(INLINE_URL_FIELD, refusal)
  const { taskPushNotificationConfig: _config, ...rest } = configuration
  return { forwarded: { ...request, params: { ...request.params, configuration: rest } }, config }
}

/**
 * A config method's answer for a task without a copy, which has no configs: List none, Delete nothing to do, Get
 * -32001; undefined for Create, which copies the task first.
 */
function answerWithoutCopy (method: string, taskId: string): unknown {
  switch (method) {
    case 'CreateTaskPushNotificationConfig':
      return undefined
    case 'ListTaskPushNotificationConfigs':
      return { configs: [], nextPageToken: '' }
    case 'DeleteTaskPushNotificationConfig':
      return {}
    default:
      throw new A2AReplyError(taskNotFound(taskId, `Push notification config not found for task ${taskId}.`))
  }
}

function iterate<T> (iterator: AsyncIterator<T, void, undefined>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator }
}
