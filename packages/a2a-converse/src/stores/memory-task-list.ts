/**
 * ListTasks over the tasks a BoundedMemoryTaskStore holds in one scope, as the SDK's InMemoryTaskStore answers it:
 * the same filters, order (newest status first, then id), page size default and page token (base64
 * `<status timestamp>|<id>`). Apart from the store, which only holds and bounds the tasks.
 */
import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk'
import { RequestMalformedError } from '@a2a-js/sdk/errors'
import { cloneData } from '../core/clone-data.js'

/** ListTasks' page size when the request gives none (the SDK's). */
const DEFAULT_PAGE_SIZE = 50

/** A page of `held` (one scope's tasks, not copied yet) for the request: copies, as the store hands tasks out. */
export function listTasks (held: Iterable<Task>, params: ListTasksRequest): ListTasksResponse {
  const { contextId, status, pageSize = DEFAULT_PAGE_SIZE, pageToken, statusTimestampAfter, includeArtifacts = false } = params
  let tasks = [...held]
  if (contextId !== '' && contextId !== undefined) tasks = tasks.filter((task) => task.contextId === contextId)
  if (status !== undefined && status !== TaskState.TASK_STATE_UNSPECIFIED) tasks = tasks.filter((task) => task.status?.state === status)
  if (statusTimestampAfter !== undefined && statusTimestampAfter !== '') {
    const after = new Date(statusTimestampAfter).getTime()
    tasks = tasks.filter((task) => task.status?.timestamp !== undefined && task.status.timestamp !== '' && new Date(task.status.timestamp).getTime() > after)
  }
  const stamp = (task: Task): string => task.status?.timestamp ?? ''
  tasks.sort((a, b) => stamp(a) !== stamp(b) ? stamp(b).localeCompare(stamp(a)) : b.id.localeCompare(a.id))
  const totalSize = tasks.length
  if (pageToken !== undefined && pageToken !== '') {
    const cursor = decodePageToken(pageToken)
    const at = tasks.findIndex((task) => stamp(task) === cursor.timestamp && task.id === cursor.id)
    tasks = at === -1 ? [] : tasks.slice(at + 1)
  }
  const page = tasks.slice(0, pageSize)
  const last = page[page.length - 1]
  return {
    tasks: page.map((task) => ({ ...cloneData(task), ...(includeArtifacts ? {} : { artifacts: [] }) })),
    nextPageToken: page.length > 0 && tasks.length > page.length ? Buffer.from(`${stamp(last)}|${last.id}`).toString('base64') : '',
    pageSize,
    totalSize
  }
}

/** The SDK's cursor: base64 of `<status timestamp>|<id>`; anything else is RequestMalformedError (-32602). */
function decodePageToken (pageToken: string): { timestamp: string, id: string } {
  const [timestamp, ...idParts] = Buffer.from(pageToken, 'base64').toString('utf-8').split('|')
  if (idParts.length === 0) throw new RequestMalformedError('Invalid page token format.')
  return { timestamp, id: idParts.join('|') }
}
