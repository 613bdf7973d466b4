/**
 * The migrations of the records kept beside the tasks and conversations: who owns each upstream task and context
 * (proxy mode), the answer log (the knowledge-gaps view) and the agents published through the operator API. Apart
 * from the runner (migrations.ts), which only orders the histories.
 */
import type { Migration } from 'kysely'
import { sqlMigration } from './sql-migration.js'
import { AGENT_VERSIONS_TABLE, AGENTS_TABLE, ANSWERS_TABLE, UPSTREAM_CONTEXTS_TABLE, UPSTREAM_TASKS_TABLE } from './table-names.js'

/**
 * Who owns each task and context of an upstream agent (proxy mode; packages/a2a-converse/src/stores/upstream-ownership-store.ts): the
 * upstream does not know the gateway's callers, so every instance reads these records to keep callers apart. `seq`
 * orders a caller's tasks for ListTasks (newest recorded first) and is its page position.
 */
export function createUpstreamOwnership (schema: string): Migration {
  return sqlMigration(schema, [
    `create table ${UPSTREAM_TASKS_TABLE} (
      agent_id text collate "C" not null,
      task_id text collate "C" not null,
      owner text collate "C" not null,
      context_id text collate "C",
      seq bigserial not null,
      recorded_at timestamptz not null default now(),
      constraint ${UPSTREAM_TASKS_TABLE}_pkey primary key (agent_id, task_id)
    )`,
    `create index ${UPSTREAM_TASKS_TABLE}_owner_idx on ${UPSTREAM_TASKS_TABLE} (agent_id, owner, seq desc)`,
    `create index ${UPSTREAM_TASKS_TABLE}_owner_context_idx on ${UPSTREAM_TASKS_TABLE} (agent_id, owner, context_id, seq desc)`,
    `create table ${UPSTREAM_CONTEXTS_TABLE} (
      agent_id text collate "C" not null,
      context_id text collate "C" not null,
      owner text collate "C" not null,
      recorded_at timestamptz not null default now(),
      constraint ${UPSTREAM_CONTEXTS_TABLE}_pkey primary key (agent_id, context_id)
    )`
  ])
}

/**
 * The answer log (packages/a2a-converse/src/stores/answer-log.ts, docs/knowledge-gaps.md): one row per agent answer a conversation write
 * added, in write order (`seq`), at the store's clock (`at`, epoch ms: the chart's buckets are integer arithmetic,
 * the same in memory). `question_key` is the grouping key computed on write, in the "C" collation so that the list's
 * order is code point order in both stores. Indexed per agent in write order (the cap, the prune) and by time (the
 * windows).
 */
export function createAnswerLog (schema: string): Migration {
  return sqlMigration(schema, [
    `create table ${ANSWERS_TABLE} (
      seq bigserial primary key,
      agent_id text collate "C" not null,
      context_id text collate "C" not null,
      at bigint not null,
      availability text not null,
      coverage text,
      reason text,
      question text not null,
      question_key text collate "C" not null
    )`,
    `create index ${ANSWERS_TABLE}_agent_seq_idx on ${ANSWERS_TABLE} (agent_id, seq)`,
    `create index ${ANSWERS_TABLE}_agent_at_idx on ${ANSWERS_TABLE} (agent_id, at)`
  ])
}

/**
 * Agents published through the operator API (packages/a2a-converse/src/stores/postgres/postgres-agent-store.ts): one row per agent, its
 * definition as JSON text and its version; and the audit, one row per change (an unpublish's too), kept after the
 * agent's row goes so that a later publish of the id continues its numbering.
 */
export function createAgentTables (schema: string): Migration {
  return sqlMigration(schema, [
    `create table ${AGENTS_TABLE} (
      id text collate "C" primary key,
      version integer not null,
      definition text not null,
      updated_at bigint not null,
      updated_by text not null
    )`,
    `create table ${AGENT_VERSIONS_TABLE} (
      agent_id text collate "C" not null,
      version integer not null,
      at bigint not null,
      by text not null,
      change text not null,
      detail text,
      primary key (agent_id, version)
    )`
  ])
}
