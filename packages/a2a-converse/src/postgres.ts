/**
 * a2a-converse/postgres: the PostgreSQL state layer (several gateway instances, one service). A subpath of its own
 * so that apps on the in-memory default never load it.
 */
export { createPostgresDatabase, type PostgresDatabase, type PostgresDatabaseOptions } from './stores/postgres/postgres-database.js'
export { migrate, type MigrateOptions, type MigrationReport } from './stores/postgres/migrations.js'
export { PostgresConversationStore, type PostgresConversationStoreOptions } from './stores/postgres/postgres-conversation-store.js'
export { PostgresTaskEventHub, type PostgresTaskEventHubOptions } from './stores/postgres/postgres-task-event-hub.js'
export { PostgresTaskStore, type PostgresTaskStoreOptions } from './stores/postgres/postgres-task-store.js'
export { RememberedTasks } from './stores/postgres/remembered-tasks.js'
export { PostgresTaskTurnLock, DEFAULT_LEASE_MS, type PostgresTaskTurnLockOptions } from './stores/postgres/postgres-task-turn-lock.js'
// For the gateway app and other integrators.
export { isUnavailable, toStoreError } from './stores/postgres/connection-errors.js'
export { executorStoreFailure, failuresAsUnavailable } from './stores/postgres/task-store-failures.js'
export { openEmbeddedDatabase } from './stores/postgres/embedded-database.js'
export { makeClusterTemplate, templateFile } from './stores/postgres/cluster-template.js'
export { FolderInUseError, LOCK_FILE, lockFolder } from './stores/postgres/folder-lock.js'
export { octal, privateFolder } from './stores/postgres/folder-permissions.js'
export { type PostgresLogger } from './stores/postgres/postgres-database.js'
export { PostgresPushConfigStore, resealPushSecrets, sealedPushSecrets } from './stores/postgres/postgres-push-config-store.js'
export { type PostgresSaveSignals } from './stores/postgres/postgres-task-store.js'
export { PostgresUpstreamOwnershipStore } from './stores/postgres/postgres-upstream-ownership-store.js'
export { PostgresPushOutbox, type PostgresPushOutboxOptions } from './stores/postgres/push-outbox.js'
export { PostgresAgentStore, type PostgresAgentStoreOptions } from './stores/postgres/postgres-agent-store.js'
