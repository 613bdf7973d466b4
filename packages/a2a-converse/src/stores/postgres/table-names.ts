/**
 * The names of every table the PostgreSQL stores use, and of the migration ledgers: one list, apart from the
 * migrations that create the tables (migrations.ts and its *-migrations.ts) and the stores that query them, which
 * all import it.
 */
import { TASK_TABLE } from '../../peers/postgres.js'

/** The SDK CLI's ledger of its task store (`a2a_${tableName}_migrations`) and its lock table. */
export const TASK_MIGRATION_TABLE = `a2a_${TASK_TABLE}_migrations`
export const TASK_MIGRATION_LOCK_TABLE = 'a2a_migrations_lock'
export const CONVERSE_MIGRATION_TABLE = 'converse_migrations'
export const CONVERSE_MIGRATION_LOCK_TABLE = 'converse_migrations_lock'

export const CONVERSATIONS_TABLE = 'converse_conversations'
export const CONVERSATION_TASKS_TABLE = 'converse_conversation_tasks'
export const TASK_EVENTS_TABLE = 'converse_task_events'
export const TASK_TURN_LOCKS_TABLE = 'converse_task_turn_locks'
export const UPSTREAM_TASKS_TABLE = 'converse_upstream_tasks'
export const UPSTREAM_CONTEXTS_TABLE = 'converse_upstream_contexts'
export const TASK_RESERVATIONS_TABLE = 'converse_task_reservations'
export const CONVERSATION_OWNERS_TABLE = 'converse_conversation_owners'
export const PUSH_CONFIGS_TABLE = 'converse_push_configs'
export const PUSH_OUTBOX_TABLE = 'converse_push_outbox'
export const ANSWERS_TABLE = 'converse_answers'
export const AGENTS_TABLE = 'converse_agents'
export const AGENT_VERSIONS_TABLE = 'converse_agent_versions'
