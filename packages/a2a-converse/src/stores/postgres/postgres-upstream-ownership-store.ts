/**
 * Upstream ownership records on PostgreSQL (`converse_upstream_tasks`, `converse_upstream_contexts`), shared by
 * every instance on the database: a task recorded by one instance is its caller's on every other. Each method is
 * one statement on the pool (no transaction); a connection failure is a StoreUnavailableError. Records stay as
 * long as the task table's rows do (nothing expires them).
 */
import type pg from 'pg'
import {
  assertListOptions, type OwnedTaskListOptions, type OwnedTaskPage, type UpstreamOwnershipStore
} from '../upstream-ownership-store.js'
import { toStoreError } from './connection-errors.js'
import { UPSTREAM_CONTEXTS_TABLE, UPSTREAM_TASKS_TABLE } from './migrations.js'
import type { PostgresDatabase } from './postgres-database.js'

const RECORD_TASK = `with context as (
    insert into ${UPSTREAM_CONTEXTS_TABLE} (agent_id, context_id, owner) select $1::text, $4::text, $2::text where $4::text is not null
    on conflict do nothing
  )
  insert into ${UPSTREAM_TASKS_TABLE} (agent_id, owner, task_id, context_id) values ($1::text, $2::text, $3::text, $4::text)
  on conflict do nothing`
// The insert's own row, else the row already there (a statement does not see its own insert: one of the two).
const CLAIM_CONTEXT = `with inserted as (
    insert into ${UPSTREAM_CONTEXTS_TABLE} (agent_id, context_id, owner) values ($1::text, $3::text, $2::text)
    on conflict do nothing returning owner
  )
  select owner from inserted
  union all select owner from ${UPSTREAM_CONTEXTS_TABLE} where agent_id = $1 and context_id = $3
  limit 1`
const TASK_OWNER = `select owner from ${UPSTREAM_TASKS_TABLE} where agent_id = $1 and task_id = $2`
const FILTER = 'agent_id = $1 and owner = $2 and ($3::text is null or context_id = $3)'
const LIST_PAGE = `select task_id, seq from ${UPSTREAM_TASKS_TABLE}
  where ${FILTER} and ($4::bigint is null or seq < $4) order by seq desc limit $5`
const COUNT = `select count(*)::int as total from ${UPSTREAM_TASKS_TABLE} where ${FILTER}`

export class PostgresUpstreamOwnershipStore implements UpstreamOwnershipStore {
  readonly #pool: pg.Pool

  /** Shares the database's pool; `close()` does not end it (the database's own `close()` does). */
  constructor (database: Pick<PostgresDatabase, 'pool'>) {
    this.#pool = database.pool
  }

  async #query<R extends pg.QueryResultRow> (text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(text, values)
    } catch (error) {
      throw toStoreError(error)
    }
  }

  async recordTask (agentId: string, owner: string, taskId: string, contextId: string | undefined): Promise<void> {
    await this.#query(RECORD_TASK, [agentId, owner, taskId, contextId ?? null])
  }

  async claimContext (agentId: string, owner: string, contextId: string): Promise<string> {
    for (;;) {
      const { rows } = await this.#query<{ owner: string }>(CLAIM_CONTEXT, [agentId, owner, contextId])
      // Empty only when another claim's insert committed after this statement's snapshot (the insert waited for
      // it, then did nothing): the next statement sees that row.
      if (rows.length > 0) return rows[0].owner
    }
  }

  async taskOwner (agentId: string, taskId: string): Promise<string | undefined> {
    const { rows } = await this.#query<{ owner: string }>(TASK_OWNER, [agentId, taskId])
    return rows[0]?.owner
  }

  async listTasks (agentId: string, owner: string, options: OwnedTaskListOptions): Promise<OwnedTaskPage> {
    assertListOptions(options)
    const filter = [agentId, owner, options.contextId ?? null]
    // One row more than the page: whether a next page exists.
    const [page, count] = await Promise.all([
      this.#query<{ task_id: string, seq: string }>(LIST_PAGE, [...filter, options.after ?? null, options.pageSize + 1]),
      this.#query<{ total: number }>(COUNT, filter)
    ])
    const rows = page.rows.slice(0, options.pageSize)
    const more = page.rows.length > options.pageSize
    return {
      taskIds: rows.map((row) => row.task_id),
      totalSize: count.rows[0].total,
      ...(more ? { next: Number(rows[rows.length - 1].seq) } : {})
    }
  }

  async close (): Promise<void> {}
}
