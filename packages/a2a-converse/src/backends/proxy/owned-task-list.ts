/**
 * ListTasks for a proxied agent answered from the ownership records (owned-upstream-backend.ts): the caller's
 * recorded tasks (newest recorded first, paged by the record, `contextId` filtered, `totalSize` the caller's own),
 * each read upstream with GetTask, `FETCH_CONCURRENCY` at a time; `status` and `statusTimestampAfter` filter the
 * tasks of the page read (a page may hold fewer than `pageSize`).
 */
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import { invalidParams, JsonRpcErrorCode } from '../../protocol/errors.js'
import { withoutUnsetStatusFilter } from '../../protocol/params.js'
import type { UpstreamOwnershipStore } from '../../stores/upstream-ownership-store.js'

/** Upstream GetTask calls of one ListTasks page running at once. */
export const FETCH_CONCURRENCY = 8
/** ListTasks' page size when the request gives none (A2A's default, the local stores'). */
const DEFAULT_PAGE_SIZE = 50
const PAGE_TOKEN = /^[1-9][0-9]{0,15}$/

export interface WireTask {
  id?: unknown
  contextId?: unknown
  status?: { state?: unknown, timestamp?: unknown }
  artifacts?: unknown
}

interface ListParams {
  contextId?: string
  status?: string
  pageSize?: number
  pageToken?: string
  historyLength?: number
  statusTimestampAfter?: string
  includeArtifacts?: boolean
}

export interface OwnedTaskListing {
  agentId: string
  upstream: A2ABackend
  ownership: UpstreamOwnershipStore
}

/** The caller's page of tasks, as ListTasks answers it. */
export async function listOwnedTasks (listing: OwnedTaskListing, owner: string, request: CheckedRequest, context: BackendContext): Promise<unknown> {
  const params = withoutUnsetStatusFilter(request.params) as ListParams
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE
  const contextId = params.contextId === '' ? undefined : params.contextId
  const page = await listing.ownership.listTasks(listing.agentId, owner, { contextId, pageSize, after: recordAfter(params.pageToken) })
  const read = await mapBounded(page.taskIds, FETCH_CONCURRENCY, async (id) => {
    const getTask: CheckedRequest = {
      ...request,
      method: 'GetTask',
      params: params.historyLength === undefined ? { id } : { id, historyLength: params.historyLength }
    }
    try {
      return await listing.upstream.call(getTask, context) as WireTask
    } catch (error) {
      // Gone upstream since it was recorded: not listed.
      if (error instanceof A2AReplyError && error.error.code === JsonRpcErrorCode.TaskNotFound) return undefined
      throw error
    }
  })
  const tasks = read.filter((task): task is WireTask => task !== undefined && matchesFilters(task, params))
  return {
    tasks: params.includeArtifacts === true ? tasks : tasks.map((task) => ({ ...task, artifacts: [] })),
    nextPageToken: page.next === undefined ? '' : String(page.next),
    pageSize,
    totalSize: page.totalSize
  }
}

/** The record a page token starts after; undefined for the first page; -32602 for a token this agent never issued. */
export function recordAfter (pageToken: string | undefined): number | undefined {
  if (pageToken === undefined || pageToken === '') return undefined
  if (!PAGE_TOKEN.test(pageToken)) {
    throw new A2AReplyError(invalidParams([{ field: 'pageToken', description: 'not a page token this agent issued' }]))
  }
  return Number(pageToken)
}

/** Whether a task read upstream passes the request's `status` and `statusTimestampAfter` filters. */
function matchesFilters (task: WireTask, params: ListParams): boolean {
  const since = params.statusTimestampAfter === undefined || params.statusTimestampAfter === '' ? undefined : Date.parse(params.statusTimestampAfter)
  return (params.status === undefined || task.status?.state === params.status) &&
    (since === undefined || (typeof task.status?.timestamp === 'string' && Date.parse(task.status.timestamp) > since))
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
