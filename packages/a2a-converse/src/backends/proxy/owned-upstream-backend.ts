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
 * - ListTasks: the caller's recorded tasks (newest recorded first, paged by the record, `contextId` filtered,
 *   `totalSize` the caller's own), each read upstream with GetTask, `FETCH_CONCURRENCY` at a time; `status` and
 *   `statusTimestampAfter` filter the tasks of the page read (a page may hold fewer than `pageSize`).
 *
 * The owner is the authenticated caller's id, or WALK_IN_OWNER for a walk-in: a walk-in reaches a walk-in task by
 * its id, never a caller's, and a caller never a walk-in's.
 */
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { internalError, invalidParams, JsonRpcErrorCode, taskNotFound } from '../../protocol/errors.js'
import { STORE_UNAVAILABLE_MESSAGE } from '../local/dispatch.js'
import { withoutUnsetStatusFilter } from '../../protocol/params.js'
import { WALK_IN_OWNER, type UpstreamOwnershipStore } from '../../stores/upstream-ownership-store.js'
import { ERROR_CODES, isConverseError } from '../../core/errors.js'

export interface OwnedUpstreamBackendOptions {
  agentId: string
  upstream: A2ABackend
  ownership: UpstreamOwnershipStore
}

/** Upstream GetTask calls of one ListTasks page running at once. */
export const FETCH_CONCURRENCY = 8
/** ListTasks' page size when the request gives none (A2A's default, the local stores'). */
const DEFAULT_PAGE_SIZE = 50
const PAGE_TOKEN = /^[1-9][0-9]{0,15}$/

interface WireTask {
  id?: unknown
  contextId?: unknown
  status?: { state?: unknown, timestamp?: unknown }
  artifacts?: unknown
}

interface WireMessage {
  taskId?: unknown
  contextId?: unknown
}

export function ownedUpstreamBackend (options: OwnedUpstreamBackendOptions): A2ABackend {
  const { agentId, upstream, ownership } = options

  function ownerOf (context: BackendContext): string {
    return context.caller?.id ?? WALK_IN_OWNER
  }

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
      throw new A2AReplyError(invalidParams([{
        field: 'message.contextId',
        description: 'this contextId is not a conversation of this caller; omit it and the server issues one'
      }]))
    }
  }

  /** Records the task (and context) a result names as the caller's. */
  async function recordResult (result: unknown, owner: string): Promise<void> {
    if (result === null || typeof result !== 'object') return
    const { message, task, statusUpdate, artifactUpdate } = result as Record<string, WireTask & WireMessage & { taskId?: unknown } | undefined>
    const taskId = task?.id ?? message?.taskId ?? statusUpdate?.taskId ?? artifactUpdate?.taskId
    const contextId = (task ?? message ?? statusUpdate ?? artifactUpdate)?.contextId
    const context = typeof contextId === 'string' && contextId !== '' ? contextId : undefined
    if (typeof taskId === 'string' && taskId !== '') {
      await ownership.recordTask(agentId, owner, taskId, context)
    } else if (context !== undefined) {
      await ownership.claimContext(agentId, owner, context)
    }
  }

  async function listTasks (request: CheckedRequest, context: BackendContext): Promise<unknown> {
    const params = withoutUnsetStatusFilter(request.params) as {
      contextId?: string,
      status?: string,
      pageSize?: number,
      pageToken?: string,
      historyLength?: number,
      statusTimestampAfter?: string,
      includeArtifacts?: boolean
    }
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE
    let after: number | undefined
    if (params.pageToken !== undefined && params.pageToken !== '') {
      if (!PAGE_TOKEN.test(params.pageToken)) {
        throw new A2AReplyError(invalidParams([{ field: 'pageToken', description: 'not a page token this agent issued' }]))
      }
      after = Number(params.pageToken)
    }
    const contextId = params.contextId === '' ? undefined : params.contextId
    const page = await ownership.listTasks(agentId, ownerOf(context), { contextId, pageSize, after })
    const read = await mapBounded(page.taskIds, FETCH_CONCURRENCY, async (id) => {
      const getTask: CheckedRequest = {
        ...request,
        method: 'GetTask',
        params: params.historyLength === undefined ? { id } : { id, historyLength: params.historyLength }
      }
      try {
        return await upstream.call(getTask, context) as WireTask
      } catch (error) {
        // Gone upstream since it was recorded: not listed.
        if (error instanceof A2AReplyError && error.error.code === JsonRpcErrorCode.TaskNotFound) return undefined
        throw error
      }
    })
    const since = params.statusTimestampAfter === undefined || params.statusTimestampAfter === '' ? undefined : Date.parse(params.statusTimestampAfter)
    const tasks = read.filter((task): task is WireTask => task !== undefined &&
      (params.status === undefined || task.status?.state === params.status) &&
      (since === undefined || (typeof task.status?.timestamp === 'string' && Date.parse(task.status.timestamp) > since)))
    return {
      tasks: params.includeArtifacts === true ? tasks : tasks.map((task) => ({ ...task, artifacts: [] })),
      nextPageToken: page.next === undefined ? '' : String(page.next),
      pageSize,
      totalSize: page.totalSize
    }
  }

  async function * stream (request: CheckedRequest, context: BackendContext): AsyncGenerator<unknown, void, undefined> {
    const owner = ownerOf(context)
    if (request.method === 'SubscribeToTask') {
      await assertOwnsTask(request.params.id, owner)
    } else {
      await checkTurn(request, owner)
    }
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
      switch (request.method) {
        case 'GetTask':
        case 'CancelTask':
          await assertOwnsTask(request.params.id, owner)
          return await upstream.call(request, context)
        case 'ListTasks':
          return await listTasks(request, context)
        case 'CreateTaskPushNotificationConfig':
        case 'GetTaskPushNotificationConfig':
        case 'ListTaskPushNotificationConfigs':
        case 'DeleteTaskPushNotificationConfig':
          // Answered by the gateway (relayed-push-backend.ts), for the caller's own tasks only.
          await assertOwnsTask(request.params.taskId, owner)
          return await upstream.call(request, context)
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

/** `work` over `items`, at most `limit` at once, results in order. */
async function mapBounded<T, R> (items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
