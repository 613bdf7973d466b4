/**
 * Push-notification configs on PostgreSQL (and the embedded database), shared by every instance: the contract of
 * src/push/push-config-store.ts (test/stores/push-config-store-contract.ts runs on memory, embedded and PostgreSQL).
 * A config is kept in its task's scope (tenant, owner as the agent's task store resolves it, task id); the cap per
 * caller is counted under an advisory lock of the caller, in the transaction that inserts, so concurrent creations
 * on any instance are counted one after the other.
 */
import { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server'
import { sql, type Kysely } from 'kysely'
import { activatesConverse, assignId, capReached, DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER, type PushConfigStore, type StoredPushConfig } from '../../push/push-config-store.js'
import { callerKeyOf } from '../caller-key.js'
import { PUSH_CONFIGS_TABLE } from './migrations.js'

export interface PostgresPushConfigStoreOptions {
  /** The agent whose configs these are (the per-caller cap counts per agent). */
  agentId: string
  /** The owner column of a call: the agent's task store's (so a config is in its task's scope). */
  ownerResolver?: (context: ServerCallContext) => string
  maxConfigsPerCaller?: number
}

/** The advisory-lock class of a caller's config count (two-key form, apart from the task store's 230_006). */
const CONFIG_LOCK_CLASS = 230_007

interface Row { config: string, converse: boolean }

export class PostgresPushConfigStore implements PushConfigStore {
  readonly #db: Kysely<any>
  readonly #agentId: string
  readonly #owner: (context: ServerCallContext) => string
  readonly maxConfigsPerCaller: number

  constructor (db: Kysely<any>, options: PostgresPushConfigStoreOptions) {
    this.#db = db
    this.#agentId = options.agentId
    this.#owner = options.ownerResolver ?? resolveUserScope
    this.maxConfigsPerCaller = options.maxConfigsPerCaller ?? DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER
  }

  async save (taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    assignId(config)
    const tenant = context.tenant ?? ''
    const owner = this.#owner(context)
    const caller = callerKeyOf(context)
    const json = JSON.stringify(TaskPushNotificationConfig.toJSON({ ...config, taskId }))
    await this.#db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${CONFIG_LOCK_CLASS}, hashtext(${`${this.#agentId}:${caller}`}))`.execute(trx)
      const { rows } = await sql<{ held: string, replaces: boolean }>`select count(*) as held,
          bool_or(tenant = ${tenant} and owner = ${owner} and task_id = ${taskId} and id = ${config.id}) as replaces
        from ${sql.table(PUSH_CONFIGS_TABLE)} where agent_id = ${this.#agentId} and caller_key = ${caller}`.execute(trx)
      if (rows[0].replaces !== true && Number(rows[0].held) >= this.maxConfigsPerCaller) throw capReached(this.maxConfigsPerCaller)
      await sql`insert into ${sql.table(PUSH_CONFIGS_TABLE)} (tenant, owner, task_id, id, agent_id, caller_key, config, converse)
        values (${tenant}, ${owner}, ${taskId}, ${config.id}, ${this.#agentId}, ${caller}, ${json}, ${activatesConverse(context)})
        on conflict (tenant, owner, task_id, id) do update set config = excluded.config, converse = excluded.converse,
          caller_key = excluded.caller_key`.execute(trx)
    })
  }

  async load (taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.configsOf(taskId, context)).map((stored) => stored.config)
  }

  async configsOf (taskId: string, context: ServerCallContext): Promise<StoredPushConfig[]> {
    return await pushConfigsIn(this.#db, context.tenant ?? '', this.#owner(context), taskId)
  }

  async delete (taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    await sql`delete from ${sql.table(PUSH_CONFIGS_TABLE)} where tenant = ${context.tenant ?? ''} and owner = ${this.#owner(context)}
      and task_id = ${taskId} and id = ${configId ?? taskId}`.execute(this.#db)
  }

  async dropTask (taskId: string, context: ServerCallContext): Promise<void> {
    await dropPushConfigs(this.#db, context.tenant ?? '', this.#owner(context), taskId)
  }
}

/** The configs of a task in a scope, oldest first (for the store, and for a task save's outbox rows). */
export async function pushConfigsIn (db: Kysely<any>, tenant: string, owner: string, taskId: string): Promise<StoredPushConfig[]> {
  const { rows } = await sql<Row>`select config, converse from ${sql.table(PUSH_CONFIGS_TABLE)}
    where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId} order by id`.execute(db)
  return rows.map((row) => ({ config: TaskPushNotificationConfig.fromJSON(JSON.parse(row.config)), converse: row.converse }))
}

export async function dropPushConfigs (db: Kysely<any>, tenant: string, owner: string, taskId: string): Promise<void> {
  await sql`delete from ${sql.table(PUSH_CONFIGS_TABLE)} where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId}`.execute(db)
}
