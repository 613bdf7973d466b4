/**
 * Agents on PostgreSQL (and the embedded database), shared by every instance on the database: the contract of
 * packages/a2a-converse/src/stores/agent-store.ts (test/library/stores/agent-store-contract.ts runs on memory, embedded and
 * PostgreSQL). Each change is one transaction writing the agent's row and its audit row; a publish counts the agents
 * under an advisory lock, so concurrent publishes on any instance are counted one after the other.
 */
import type { Kysely } from 'kysely'
import { sql } from '../../peers/postgres.js'
import {
  AgentExistsError, AgentLimitError, AgentVersionConflictError, maxAgentsOption, MAX_AGENT_VERSIONS_KEPT,
  type AgentAudit, type AgentDocument, type AgentHead, type AgentStore, type AgentVersion, type StoredAgent
} from '../agent-store.js'
import { toStoreError } from './connection-errors.js'
import { AGENT_VERSIONS_TABLE, AGENTS_TABLE } from './migrations.js'

export interface PostgresAgentStoreOptions {
  /** Default 1000. */
  maxAgents?: number
  /** The clock (epoch ms). Default Date.now. */
  now?: () => number
}

/** The advisory lock of the agent count (apart from the task store's 230_006 and the push configs' 230_007). */
const AGENT_COUNT_LOCK = 230_008

interface AgentRow { id: string, version: number, definition: string, updated_at: string, updated_by: string }
interface VersionRow { version: number, at: string, by: string, change: string, detail: string | null }

function agentOf (row: AgentRow): StoredAgent {
  return { id: row.id, version: row.version, definition: JSON.parse(row.definition), updatedAt: Number(row.updated_at), updatedBy: row.updated_by }
}

/** jsonb is not used (key order and numbers kept as given); text refuses U+0000, which becomes U+FFFD. */
function toJson (definition: AgentDocument): string {
  const json = JSON.stringify(definition)
  if (!json.includes('\\u0000')) return json
  return JSON.stringify(definition, (_key, value: unknown) => typeof value === 'string' ? value.replaceAll('\0', '\uFFFD') : value)
}

export class PostgresAgentStore implements AgentStore {
  readonly maxAgents: number
  readonly #db: Kysely<any>
  readonly #now: () => number

  constructor (db: Kysely<any>, options: PostgresAgentStoreOptions = {}) {
    this.#db = db
    this.maxAgents = maxAgentsOption(options.maxAgents)
    this.#now = options.now ?? Date.now
  }

  async #run<T> (work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw toStoreError(error)
    }
  }

  async list (): Promise<StoredAgent[]> {
    return await this.#run(async () => {
      const { rows } = await sql<AgentRow>`select id, version, definition, updated_at, updated_by from ${sql.table(AGENTS_TABLE)} order by id`.execute(this.#db)
      return rows.map(agentOf)
    })
  }

  async heads (): Promise<AgentHead[]> {
    return await this.#run(async () => {
      const { rows } = await sql<AgentHead>`select id, version from ${sql.table(AGENTS_TABLE)} order by id`.execute(this.#db)
      return rows
    })
  }

  async get (id: string): Promise<StoredAgent | undefined> {
    return await this.#run(async () => {
      const { rows } = await sql<AgentRow>`select id, version, definition, updated_at, updated_by from ${sql.table(AGENTS_TABLE)} where id = ${id}`.execute(this.#db)
      return rows.length === 0 ? undefined : agentOf(rows[0])
    })
  }

  async create (id: string, definition: AgentDocument, audit: AgentAudit): Promise<StoredAgent> {
    const json = toJson(definition)
    return await this.#run(async () => await this.#db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${AGENT_COUNT_LOCK})`.execute(trx)
      const { rows: [counts] } = await sql<{ agents: number, taken: boolean, last: number }>`select
          (select count(*)::int from ${sql.table(AGENTS_TABLE)}) as agents,
          exists (select 1 from ${sql.table(AGENTS_TABLE)} where id = ${id}) as taken,
          (select coalesce(max(version), 0)::int from ${sql.table(AGENT_VERSIONS_TABLE)} where agent_id = ${id}) as last`.execute(trx)
      if (counts.taken) throw new AgentExistsError(id)
      if (counts.agents >= this.maxAgents) throw new AgentLimitError(this.maxAgents)
      const version = counts.last + 1
      const at = this.#now()
      await sql`insert into ${sql.table(AGENTS_TABLE)} (id, version, definition, updated_at, updated_by)
        values (${id}, ${version}, ${json}, ${at}, ${audit.by})`.execute(trx)
      await this.#audit(trx, id, version, at, audit)
      return { id, version, definition: JSON.parse(json), updatedAt: at, updatedBy: audit.by }
    }))
  }

  async replace (id: string, definition: AgentDocument, expectedVersion: number | undefined, audit: AgentAudit): Promise<StoredAgent | undefined> {
    const json = toJson(definition)
    return await this.#run(async () => await this.#db.transaction().execute(async (trx) => {
      const version = await this.#lockVersion(trx, id, expectedVersion)
      if (version === undefined) return undefined
      const at = this.#now()
      await sql`update ${sql.table(AGENTS_TABLE)} set version = ${version + 1}, definition = ${json}, updated_at = ${at}, updated_by = ${audit.by}
        where id = ${id}`.execute(trx)
      await this.#audit(trx, id, version + 1, at, audit)
      return { id, version: version + 1, definition: JSON.parse(json), updatedAt: at, updatedBy: audit.by }
    }))
  }

  async delete (id: string, expectedVersion: number | undefined, audit: AgentAudit): Promise<number | undefined> {
    return await this.#run(async () => await this.#db.transaction().execute(async (trx) => {
      const version = await this.#lockVersion(trx, id, expectedVersion)
      if (version === undefined) return undefined
      const at = this.#now()
      await sql`delete from ${sql.table(AGENTS_TABLE)} where id = ${id}`.execute(trx)
      await this.#audit(trx, id, version + 1, at, audit)
      return version + 1
    }))
  }

  async versions (id: string): Promise<AgentVersion[]> {
    return await this.#run(async () => {
      const { rows } = await sql<VersionRow>`select version, at, by, change, detail from ${sql.table(AGENT_VERSIONS_TABLE)}
        where agent_id = ${id} order by version desc limit ${MAX_AGENT_VERSIONS_KEPT}`.execute(this.#db)
      return rows.map((row) => ({ version: row.version, at: Number(row.at), by: row.by, change: row.change, ...(row.detail !== null ? { detail: row.detail } : {}) }))
    })
  }

  async close (): Promise<void> {}

  /** The agent's version, its row locked for this transaction; undefined when there is no such agent. */
  async #lockVersion (trx: Kysely<any>, id: string, expectedVersion: number | undefined): Promise<number | undefined> {
    const { rows } = await sql<{ version: number }>`select version from ${sql.table(AGENTS_TABLE)} where id = ${id} for update`.execute(trx)
    if (rows.length === 0) return undefined
    const { version } = rows[0]
    if (expectedVersion !== undefined && expectedVersion !== version) throw new AgentVersionConflictError(id, version)
    return version
  }

  /** The audit row of a change, and the id's oldest rows past the bound pruned. */
  async #audit (trx: Kysely<any>, id: string, version: number, at: number, audit: AgentAudit): Promise<void> {
    await sql`insert into ${sql.table(AGENT_VERSIONS_TABLE)} (agent_id, version, at, by, change, detail)
      values (${id}, ${version}, ${at}, ${audit.by}, ${audit.change}, ${audit.detail ?? null})`.execute(trx)
    await sql`delete from ${sql.table(AGENT_VERSIONS_TABLE)} where agent_id = ${id} and version <= ${version - MAX_AGENT_VERSIONS_KEPT}`.execute(trx)
  }
}
