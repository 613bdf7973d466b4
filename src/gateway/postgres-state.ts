/**
 * DATABASE_URL: every store on PostgreSQL so that several gateway instances behave as one service —
 * tasks through @a2a-js/sdk's DatabaseTaskStore (Kysely over pg), conversations in our own tables, live task
 * events over LISTEN/NOTIFY. The schema is migrated at start (idempotent, safe when instances start together).
 */
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database'
import type { TaskEventHub } from '../events/task-event-hub.js'
import type { ConversationStore } from '../stores/conversation-store.js'
import { toStoreError } from '../stores/postgres/connection-errors.js'
import { migrate } from '../stores/postgres/migrations.js'
import { PostgresConversationStore } from '../stores/postgres/postgres-conversation-store.js'
import { createPostgresDatabase, type PostgresLogger } from '../stores/postgres/postgres-database.js'
import { PostgresTaskEventHub } from '../stores/postgres/postgres-task-event-hub.js'
import type { ReadinessCheck } from '../../plugins/health.js'

/** Where the gateway keeps its state. */
export interface GatewayState {
  conversations: ConversationStore
  events: TaskEventHub
  taskStoreFor (agentId: string): TaskStore
  readinessChecks: Record<string, ReadinessCheck>
  close (): Promise<void>
}

export interface PostgresStateOptions {
  connectionString: string
  /** Schema holding every table (created by the migration). Default: the server's search path. */
  schema?: string
  logger: PostgresLogger
}

/**
 * One table serves every agent: the owner scope is prefixed with the agent id so an agent never sees
 * another agent's tasks (GetTask, ListTasks), exactly as separate in-memory stores behave.
 */
function agentScope (agentId: string) {
  // Agent ids never hold ":" (^[A-Za-z0-9_-]+$), so the prefix is unambiguous; PostgreSQL text refuses NUL.
  return (context: ServerCallContext): string => `${agentId}:${resolveUserScope(context)}`
}

/** Connection failures become StoreUnavailableError, which the endpoint answers with -32603 and a clear message. */
class UnavailableAwareTaskStore implements TaskStore {
  readonly #inner: TaskStore
  constructor (inner: TaskStore) { this.#inner = inner }
  save: TaskStore['save'] = async (task, context) => { try { return await this.#inner.save(task, context) } catch (error) { throw toStoreError(error) } }
  load: TaskStore['load'] = async (taskId, context) => { try { return await this.#inner.load(taskId, context) } catch (error) { throw toStoreError(error) } }
  list: TaskStore['list'] = async (params, context) => { try { return await this.#inner.list(params, context) } catch (error) { throw toStoreError(error) } }
}

export async function openPostgresState (options: PostgresStateOptions): Promise<GatewayState> {
  const database = createPostgresDatabase({ connectionString: options.connectionString, schema: options.schema, logger: options.logger })
  try {
    await migrate(database.db, { schema: options.schema })
  } catch (error) {
    await database.close()
    throw error
  }
  const conversations = new PostgresConversationStore(database)
  const events = new PostgresTaskEventHub(database)
  return {
    conversations,
    events,
    taskStoreFor: (agentId) => new UnavailableAwareTaskStore(new DatabaseTaskStore(database.db, { ownerResolver: agentScope(agentId) })),
    readinessChecks: { database: () => database.ping() },
    async close () {
      await events.close()
      await conversations.close()
      await database.close()
    }
  }
}
