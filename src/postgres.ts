/**
 * a2a-converse/postgres: the PostgreSQL state layer (several gateway instances, one service). A subpath of its own
 * so that apps on the in-memory default never load it.
 */
export { createPostgresDatabase, type PostgresDatabase, type PostgresDatabaseOptions } from './stores/postgres/postgres-database.js'
export { migrate, type MigrateOptions, type MigrationReport } from './stores/postgres/migrations.js'
export { PostgresConversationStore, type PostgresConversationStoreOptions } from './stores/postgres/postgres-conversation-store.js'
export { PostgresTaskEventHub, type PostgresTaskEventHubOptions } from './stores/postgres/postgres-task-event-hub.js'
export { openPostgresState, DatabaseUnreachableError, type PostgresStateOptions, type StateLogger } from './gateway/postgres-state.js'
export { StoreUnavailableError } from './stores/errors.js'
export { PostgresTaskStore, type PostgresTaskStoreOptions } from './stores/postgres/postgres-task-store.js'
export { PostgresTaskTurnLock, DEFAULT_LEASE_MS, type PostgresTaskTurnLockOptions } from './stores/postgres/postgres-task-turn-lock.js'
