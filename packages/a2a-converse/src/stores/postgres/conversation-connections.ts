/**
 * The PostgreSQL conversation store's use of its pool's connections (postgres-conversation-store.ts): one statement
 * not retried (a write), work retried once on a connection found dead (a read, a lock taken), the row lock of the
 * locked path, and a connection given back or discarded.
 */
import type pg from 'pg'
import { isConnectionFailure, isStatementError, toStoreError } from './connection-errors.js'
import { INSERT_PLACEHOLDER, LOCK, prepared, type LockedRow } from './conversation-statements.js'

/** Closes a connection instead of giving it back: it failed, or its transaction is in an unknown state. */
export function discard (client: pg.PoolClient): void {
  client.release(true)
}

/** Rolls back and gives the connection back; a connection whose rollback fails is discarded. */
export async function rollback (client: pg.PoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK')
    client.release()
  } catch {
    discard(client)
  }
}

/** One statement on a pool connection, not retried: a write whose connection failed may have committed. */
export async function once<R extends pg.QueryResultRow> (pool: pg.Pool, query: pg.QueryConfig, values: unknown[]): Promise<R[]> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw toStoreError(error)
  }
  let rows: R[]
  try {
    rows = (await client.query<R>(query, values)).rows
  } catch (error) {
    // A statement the server refused leaves the connection usable (a refusal at the cap is a turn's answer, not an
    // outage); anything else leaves it in doubt.
    if (isStatementError(error)) client.release()
    else discard(client)
    throw toStoreError(error)
  }
  client.release()
  return rows
}

/**
 * Runs `work` on a pool connection and hands the connection on (the caller releases it). A connection found dead
 * (a server restart leaves idle ones behind) is replaced once: `work` must not have changed anything when its
 * connection fails. An unreachable database rejects with StoreUnavailableError.
 */
export async function withConnection<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, attempt = 1): Promise<{ client: pg.PoolClient, result: T }> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw toStoreError(error)
  }
  try {
    return { client, result: await work(client) }
  } catch (error) {
    discard(client)
    if (attempt === 2 || !isConnectionFailure(error)) throw toStoreError(error)
  }
  return await withConnection(pool, work, 2)
}

/** One query on a pool connection (withConnection), the connection given back. */
export async function query<R extends pg.QueryResultRow> (pool: pg.Pool, text: string | pg.QueryConfig, values: unknown[]): Promise<pg.QueryResult<R>> {
  const { client, result } = await withConnection(pool, async (connection) => await connection.query<R>(text, values))
  client.release()
  return result
}

/**
 * Queries that go out together on a pipelined connection (PostgresDatabaseOptions.pipeline: one round trip), else one
 * after the other — as pg would send them anyway, without its warning: pg 8 deprecates a query issued while another
 * runs on a connection that is not pipelined (pg 9 drops it). The results in order, or the first error (a query after
 * a failed one is then not sent).
 */
export async function together<T extends readonly unknown[]> (client: pg.PoolClient, ...queries: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if ((client as Partial<pg.Client>).pipeline === true) return await (Promise.all(queries.map(async (query) => await query())) as Promise<unknown> as Promise<T>)
  const results: unknown[] = []
  for (const query of queries) results.push(await query())
  return results as unknown as T
}

/**
 * BEGIN and lock the conversation's row. A new conversation gets a placeholder row (state NULL) that our insert
 * holds locked until we commit. When another transaction inserts it first, our insert waits for that one to finish
 * and does nothing: the row is then committed and ours to lock on the next turn of the loop.
 */
export async function lockRow (client: pg.PoolClient, agentId: string, contextId: string): Promise<LockedRow> {
  const keys = [agentId, contextId]
  const [, locked] = await together(client, async () => await client.query('BEGIN'), async () => await client.query<LockedRow>(prepared('converse_lock', LOCK), keys))
  let row = locked.rows[0]
  while (row === undefined) {
    row = (await client.query<LockedRow>(prepared('converse_insert_placeholder', INSERT_PLACEHOLDER), keys)).rows[0] ?? (await client.query<LockedRow>(prepared('converse_lock', LOCK), keys)).rows[0]
  }
  return row
}
