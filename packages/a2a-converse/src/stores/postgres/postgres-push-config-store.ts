/**
 * Push-notification configs on PostgreSQL (and the embedded database), shared by every instance: the contract of
 * packages/a2a-converse/src/push/push-config-store.ts (test/library/stores/push-config-store-contract.ts runs on memory, embedded and PostgreSQL).
 * A config is kept in its task's scope (tenant, owner as the agent's task store resolves it, task id); the cap per
 * caller is counted under an advisory lock of the caller, in the transaction that inserts, so concurrent creations
 * on any instance are counted one after the other.
 */
import { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server'
import type { Kysely } from 'kysely'
import { sql } from '../../peers/postgres.js'
import { activatesConverse, assignId, capReached, DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER, type PushConfigStore, type StoredPushConfig } from '../../push/push-config-store.js'
import { callerKeyOf } from '../caller-key.js'
import { currentPrefix, openWith, sealWith, type SecretBox } from '../secret-box.js'
import { PUSH_CONFIGS_TABLE, PUSH_OUTBOX_TABLE } from './migrations.js'

export interface PostgresPushConfigStoreOptions {
  /** The agent whose configs these are (the per-caller cap counts per agent). */
  agentId: string
  /** The owner column of a call: the agent's task store's (so a config is in its task's scope). */
  ownerResolver?: (context: ServerCallContext) => string
  maxConfigsPerCaller?: number
  /**
   * Seals each config (its URL, token and authentication credentials) before it is written (packages/a2a-converse/src/stores/secret-box.ts),
   * and opens what is read. Absent: configs are written in clear.
   */
  secrets?: SecretBox
}

/** The advisory-lock class of a caller's config count (two-key form, apart from the task store's 230_006). */
const CONFIG_LOCK_CLASS = 230_007

interface Row { config: string, converse: boolean }

export class PostgresPushConfigStore implements PushConfigStore {
  readonly #db: Kysely<any>
  readonly #agentId: string
  readonly #owner: (context: ServerCallContext) => string
  readonly #secrets: SecretBox | undefined
  readonly maxConfigsPerCaller: number

  constructor (db: Kysely<any>, options: PostgresPushConfigStoreOptions) {
    this.#db = db
    this.#agentId = options.agentId
    this.#owner = options.ownerResolver ?? resolveUserScope
    this.maxConfigsPerCaller = options.maxConfigsPerCaller ?? DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER
    this.#secrets = options.secrets
  }

  async save (taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    assignId(config)
    const tenant = context.tenant ?? ''
    const owner = this.#owner(context)
    const caller = callerKeyOf(context)
    const json = sealWith(this.#secrets, JSON.stringify(TaskPushNotificationConfig.toJSON({ ...config, taskId })))
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
    return await pushConfigsIn(this.#db, context.tenant ?? '', this.#owner(context), taskId, this.#secrets)
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
export async function pushConfigsIn (db: Kysely<any>, tenant: string, owner: string, taskId: string, secrets?: SecretBox): Promise<StoredPushConfig[]> {
  const { rows } = await sql<Row>`select config, converse from ${sql.table(PUSH_CONFIGS_TABLE)}
    where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId} order by id`.execute(db)
  return rows.map((row) => ({ config: TaskPushNotificationConfig.fromJSON(JSON.parse(openWith(secrets, row.config))), converse: row.converse }))
}

/** Whether any push config or outbox row is sealed (so a store without a key could not read it). */
export async function sealedPushSecrets (db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql`select 1 from ${sql.table(PUSH_CONFIGS_TABLE)} where starts_with(config, 'sb1.')
    union all select 1 from ${sql.table(PUSH_OUTBOX_TABLE)} where starts_with(target, 'sb1.') limit 1`.execute(db)
  return rows.length > 0
}

/**
 * Re-seals, with the box's current key, every push config and outbox row that is not sealed with it: rows written
 * in clear before sealing existed, and rows sealed with a previous key (a rotation). Returns the rows rewritten. A
 * row sealed with a key the box does not hold throws SealedValueError (nothing after it is rewritten).
 */
export async function resealPushSecrets (db: Kysely<any>, secrets: SecretBox): Promise<number> {
  const prefix = currentPrefix(secrets)
  let rewritten = 0
  // Rows by their physical address (ctid): both tables, one statement shape.
  for (const [table, column] of [[PUSH_CONFIGS_TABLE, 'config'], [PUSH_OUTBOX_TABLE, 'target']] as const) {
    // Rewritten rows leave the selection, so each batch is the next; a row changed meanwhile is read again.
    for (;;) {
      const { rows } = await sql<{ key: string, value: string }>`select ctid::text as key, ${sql.ref(column)} as value
        from ${sql.table(table)} where not starts_with(${sql.ref(column)}, ${prefix}) limit 500`.execute(db)
      if (rows.length === 0) break
      const before = rewritten
      for (const row of rows) {
        const resealed = secrets.seal(secrets.open(row.value))
        const { numAffectedRows } = await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${resealed}
          where ctid = ${row.key}::tid and ${sql.ref(column)} = ${row.value}`.execute(db)
        // An update's count is always given (pg's rowCount): 1, or 0 when the row changed meanwhile.
        rewritten += Number(numAffectedRows)
      }
      /* c8 ignore next -- every row of the batch changed by another instance between the select and the update */
      if (rewritten === before) break
    }
  }
  return rewritten
}

/**
 * Re-seals the task's configs with the box's current key (or, without a box, opens them: a sealed one throws
 * SealedValueError): a task save copies each config as stored into its outbox rows (task-store-functions.ts).
 */
export async function resealTaskPushConfigs (db: Kysely<any>, tenant: string, owner: string, taskId: string, secrets?: SecretBox): Promise<void> {
  const { rows } = await sql<{ id: string, config: string }>`select id, config from ${sql.table(PUSH_CONFIGS_TABLE)}
    where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId}`.execute(db)
  for (const row of rows) {
    const resealed = sealWith(secrets, openWith(secrets, row.config))
    await sql`update ${sql.table(PUSH_CONFIGS_TABLE)} set config = ${resealed}
      where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId} and id = ${row.id} and config = ${row.config}`.execute(db)
  }
}

export async function dropPushConfigs (db: Kysely<any>, tenant: string, owner: string, taskId: string): Promise<void> {
  await sql`delete from ${sql.table(PUSH_CONFIGS_TABLE)} where tenant = ${tenant} and owner = ${owner} and task_id = ${taskId}`.execute(db)
}
