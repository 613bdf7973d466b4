/**
 * Who owns each task and context of an upstream agent (proxy mode). The upstream knows nothing of the gateway's
 * callers: the gateway records, for every task and context a forwarded SendMessage / SendStreamingMessage
 * returned, the caller it returned them to, and answers a request naming a task or context by that record alone.
 * The owner is the authenticated caller's id, or `WALK_IN_OWNER` for a walk-in (the SDK's walk-in user name, the
 * owner the local task stores give walk-ins' tasks too). Keyed by agent id: agents never share a record.
 *
 * Implementations: memory (memory-upstream-ownership-store.ts, bounded per agent), PostgreSQL
 * (postgres/postgres-upstream-ownership-store.ts, shared by every instance).
 */
import { InvalidOptionError } from '../core/errors.js'

/** The owner of a walk-in's tasks and contexts: @a2a-js/sdk's user name without a user (`resolveUserScope`). */
export const WALK_IN_OWNER = 'unknown'

export interface OwnedTaskListOptions {
  /** Only the tasks recorded in this context. */
  contextId?: string
  /** Tasks per page, >= 1. */
  pageSize: number
  /** The position after which the page starts (a page's `next`); absent: the newest record. */
  after?: number
}

export interface OwnedTaskPage {
  /** Newest recorded first. */
  taskIds: string[]
  /** The owner's recorded tasks matching the filter, all pages together. */
  totalSize: number
  /** Where the next page starts; absent on the last page. */
  next?: number
}

export interface UpstreamOwnershipStore {
  /** Records a task (and its context) as the owner's. A task or context already recorded keeps its first owner. */
  recordTask (agentId: string, owner: string, taskId: string, contextId: string | undefined): Promise<void>
  /**
   * The owner of the context: the one recorded, or `owner` when none was (recorded now). One atomic step, so two
   * callers naming a new contextId at once do not both get it.
   */
  claimContext (agentId: string, owner: string, contextId: string): Promise<string>
  /** The recorded owner of the task; undefined when the gateway never recorded it (or forgot it). One read. */
  taskOwner (agentId: string, taskId: string): Promise<string | undefined>
  /** The owner's recorded tasks, newest first, one page. */
  listTasks (agentId: string, owner: string, options: OwnedTaskListOptions): Promise<OwnedTaskPage>
  close (): Promise<void>
}

export function assertListOptions (options: OwnedTaskListOptions): void {
  if (!Number.isInteger(options.pageSize) || options.pageSize < 1) throw new InvalidOptionError('pageSize', 'must be a positive integer')
  if (options.after !== undefined && (!Number.isSafeInteger(options.after) || options.after < 1)) {
    throw new InvalidOptionError('after', 'must be a positive integer')
  }
}
