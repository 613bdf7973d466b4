/**
 * The migrations of push notifications' tables (docs/push.md): the configs and the outbox, then the outbox's trace
 * context. Apart from the runner (migrations.ts), which only orders the histories.
 */
import type { Migration } from 'kysely'
import { sqlMigration } from './sql-migration.js'
import { PUSH_CONFIGS_TABLE, PUSH_OUTBOX_TABLE } from './table-names.js'

/**
 * Push notifications (docs/push.md):
 * - configs, in the scope of their task (tenant, the agent-prefixed owner, task id), with the caller key that created
 *   each (MAX_PUSH_CONFIGS_PER_CALLER counts by agent and caller key);
 * - the outbox: one row per notification, written in the transaction of the task save it reports, deleted once
 *   delivered or given up. `seq` orders a task's notifications per config; an instance claims a row only when no
 *   earlier row of its task and config is left (the queue index), for a lease (`claimed_until`).
 */
export function createPushTables (schema: string): Migration {
  return sqlMigration(schema, [
    `create table ${PUSH_CONFIGS_TABLE} (
      tenant text collate "C" not null,
      owner text collate "C" not null,
      task_id text collate "C" not null,
      id text collate "C" not null,
      agent_id text collate "C" not null,
      caller_key text collate "C" not null,
      config text not null,
      converse boolean not null,
      constraint ${PUSH_CONFIGS_TABLE}_pkey primary key (tenant, owner, task_id, id)
    )`,
    `create index ${PUSH_CONFIGS_TABLE}_caller_idx on ${PUSH_CONFIGS_TABLE} (agent_id, caller_key)`,
    `create table ${PUSH_OUTBOX_TABLE} (
      seq bigserial primary key,
      agent_id text collate "C" not null,
      tenant text collate "C" not null,
      owner text collate "C" not null,
      task_id text collate "C" not null,
      config_id text collate "C" not null,
      target text not null,
      converse boolean not null,
      event text not null,
      notification_id uuid not null,
      recorded_at timestamptz not null default now(),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      claimed_until timestamptz
    )`,
    `create index ${PUSH_OUTBOX_TABLE}_queue_idx on ${PUSH_OUTBOX_TABLE} (tenant, owner, task_id, config_id, seq)`,
    `create index ${PUSH_OUTBOX_TABLE}_due_idx on ${PUSH_OUTBOX_TABLE} (next_attempt_at)`
  ])
}

/**
 * The outbox keeps the W3C trace context of the turn that recorded each notification (`traceparent`, `tracestate`;
 * null when the turn had none), so a delivery from any instance, after any restart, continues that trace.
 */
export function addOutboxTraceContext (schema: string): Migration {
  return sqlMigration(schema, [`alter table ${PUSH_OUTBOX_TABLE} add column traceparent text, add column tracestate text`])
}
