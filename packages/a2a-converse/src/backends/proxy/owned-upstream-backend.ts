/**
 * Callers kept apart in front of an upstream agent: the upstream knows nothing of the gateway's callers, so this
 * backend records which caller owns every task and context a forwarded turn returned (UpstreamOwnershipStore) and
 * answers every request naming one by that record, before anything goes upstream.
 *
 * - GetTask, CancelTask, SubscribeToTask, the four push-config methods (their `taskId`), and a SendMessage /
 *   SendStreamingMessage naming `message.taskId`: -32001
 *   unless the record names the caller — the same error, from the same single store read, whether the task is
 *   another caller's or was never recorded (an upstream task id the gateway never handed out is nobody's).
 * - `message.contextId` of a context another caller owns: refused with -32602 naming `message.contextId` (the
 *   caller may not join that conversation upstream); a contextId nobody owns yet becomes the caller's (claimed
 *   atomically before the turn is forwarded, so two callers cannot both get a new one).
 * - ListTasks: the caller's recorded tasks, each read upstream (owned-task-list.ts).
 *
 * The owner is the authenticated caller's id, or WALK_IN_OWNER for a walk-in: a walk-in reaches a walk-in task by
 * its id, never a caller's, and a caller never a walk-in's.
 */
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { internalError, invalidParams, taskNotFound } from '../../protocol/errors.js'
import { STORE_UNAVAILABLE_MESSAGE } from '../local/dispatch-errors.js'
import { WALK_IN_OWNER, type UpstreamOwnershipStore } from '../../stores/upstream-ownership-store.js'
import { ERROR_CODES, isConverseError } from '../../core/errors.js'
import { listOwnedTasks, type WireTask } from './owned-task-list.js'

export interface OwnedUpstreamBackendOptions {
  agentId: string
  upstream: A2ABackend
  ownership: UpstreamOwnershipStore
}

interface WireMessage {
  taskId?: unknown
  contextId?: unknown
}

const PUSH_CONFIG_METHODS: ReadonlySet<string> = new Set([
  'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig'
])

const CONTEXT_NOT_THE_CALLERS = {
  field: 'message.contextId',
  description: 'this contextId is not a conversation of this caller; omit it and the server issues one'
}

export function ownedUpstreamBackend (options: OwnedUpstreamBackendOptions): A2ABackend {
  const { agentId, upstream, ownership } = options

  /** -32001 unless the caller owns the task: one store read either way. */
  async function assertOwnsTask (taskId: unknown, owner: string): Promise<void> {
    const id = String(taskId)
    if (await ownership.taskOwner(agentId, id) !== owner) throw new A2AReplyError(taskNotFound(id, `Task not found: ${id}`))
  }

  async function checkTurn (request: CheckedRequest, owner: string): Promise<void> {
    const message = request.params.message as WireMessage
    if (typeof message.taskId === 'string' && message.taskId !== '') await assertOwnsTask(message.taskId, owner)
    if (typeof message.contextId === 'string' && message.contextId !== '' &&
      await ownership.claimContext(agentId, owner, message.contextId) !== owner) {
      throw new A2AReplyError(invalidParams([CONTEXT_NOT_THE_CALLERS]))
    }
  }

  /** Records the task (and context) a result names as the caller's. */
  async function recordResult (result: unknown, owner: string): Promise<void> {
    const { taskId, contextId } = idsNamedBy(result)
    if (taskId !== undefined) await ownership.recordTask(agentId, owner, taskId, contextId)
    else if (contextId !== undefined) await ownership.claimContext(agentId, owner, contextId)
  }

  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const owner = ownerOf(context)
    if (request.method === 'SubscribeToTask') await assertOwnsTask(request.params.id, owner)
    else await checkTurn(request, owner)
    // A turn's stream names its task (or message) in its first result: recorded before the caller sees it, so the
    // caller's next request finds the record.
    let recorded = request.method !== 'SendStreamingMessage'
    for await (const result of iterate(upstream.stream(request, context))) {
      if (!recorded) {
        recorded = true
        await recordResult(result, owner)
      }
      yield result
    }
  }

  return {
    get facts () { return upstream.facts },
    async call (request, context) {
      const owner = ownerOf(context)
      const named = taskToOwn(request)
      if (named !== undefined) {
        await assertOwnsTask(named.taskId, owner)
        return await upstream.call(request, context)
      }
      switch (request.method) {
        case 'ListTasks':
          return await listOwnedTasks(options, owner, request, context)
        case 'SendMessage': {
          await checkTurn(request, owner)
          const result = await upstream.call(request, context)
          await recordResult(result, owner)
          return result
        }
        default:
          return await upstream.call(request, context)
      }
    },
    stream,
    toError (error, request, log) {
      if (isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE)) {
        // The records could not be read or written: say so, the driver's detail (hosts, ports) in the log only.
        log?.error({ agentId, method: request.method, err: error }, 'upstream ownership records unavailable')
        return internalError(STORE_UNAVAILABLE_MESSAGE)
      }
      return upstream.toError(error, request, log)
    }
  }
}

function iterate<T> (iterator: AsyncIterator<T, void, undefined>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator }
}

function ownerOf (context: BackendContext): string {
  return context.caller?.id ?? WALK_IN_OWNER
}

/**
 * The task a call names that the caller must own before it goes on: GetTask's and CancelTask's `id`, the push-config
 * methods' `taskId` (answered by the gateway, relayed-push-backend.ts, for the caller's own tasks only).
 */
function taskToOwn (request: CheckedRequest): { taskId: unknown } | undefined {
  if (request.method === 'GetTask' || request.method === 'CancelTask') return { taskId: request.params.id }
  if (PUSH_CONFIG_METHODS.has(request.method)) return { taskId: request.params.taskId }
  return undefined
}

/** The task and the context a result (a reply or a stream's event) names; empty ids are none. */
function idsNamedBy (result: unknown): { taskId?: string, contextId?: string } {
  if (result === null || typeof result !== 'object') return {}
  const { message, task, statusUpdate, artifactUpdate } = result as Record<string, WireTask & WireMessage & { taskId?: unknown } | undefined>
  const taskId = task?.id ?? message?.taskId ?? statusUpdate?.taskId ?? artifactUpdate?.taskId
  const contextId = (task ?? message ?? statusUpdate ?? artifactUpdate)?.contextId
  return {
    taskId: typeof taskId === 'string' && taskId !== '' ? taskId : undefined,
    contextId: typeof contextId === 'string' && contextId !== '' ? contextId : undefined
  }
}
