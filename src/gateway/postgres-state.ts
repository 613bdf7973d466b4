/**
 * The gateway's state on PostgreSQL: tasks in @a2a-js/sdk's DatabaseTaskStore table (Kysely; our save keeps a
 * finished task finished), conversations in our own tables, the schema migrated at start (idempotent, safe when
 * instances start together).
 *
 * - STATE=postgres (DATABASE_URL): a server, so that several gateway instances behave as one service — live task
 *   events over LISTEN/NOTIFY, a lease row per task with a turn running.
 * - STATE=embedded (DATA_DIR): the same stores and migrations on PGlite in this process: embedded-state.ts.
 *
 * The stores both share are database-stores.ts's; this module opens a server and chooses what only a server needs.
 */
import { isUnavailable } from 'a2a-converse/postgres'
import { migrate } from 'a2a-converse/postgres'
import { PostgresConversationStore } from 'a2a-converse/postgres'
import { createPostgresDatabase } from 'a2a-converse/postgres'
import { PostgresTaskEventHub } from 'a2a-converse/postgres'
import { PostgresTaskTurnLock } from 'a2a-converse/postgres'
import type { GatewayState } from './state.js'
import { SecretBox } from 'a2a-converse/push'
import type { SecretsConfig } from './config.js'
import { agentOwner, agentTaskStore, databaseStores, PushState, type DatabaseStateOptions } from './database-stores.js'
import { resealed } from './push-secrets-reseal.js'

export interface PostgresStateOptions extends DatabaseStateOptions {
  connectionString: string
  /** Schema holding every table (created by the migration). Default: the server's search path. */
  schema?: string
  /** SECRETS_KEY and SECRETS_KEY_PREVIOUS: push credentials sealed; without a key, in clear (a warning at start). */
  secrets?: SecretsConfig
}

/** The database named by DATABASE_URL cannot be reached at start; the message names the variable, never credentials. */
export class DatabaseUnreachableError extends Error {
  constructor (connectionString: string, cause: unknown) {
    super(`DATABASE_URL: PostgreSQL at ${hostOf(connectionString)} is unreachable (${reasonOf(cause)}); ` +
      'start the server or fix DATABASE_URL')
    this.name = 'DatabaseUnreachableError'
    this.cause = cause
  }
}

function hostOf (connectionString: string): string {
  try {
    const url = new URL(connectionString)
    return url.host === '' ? 'the default host' : url.host
  } catch {
    return 'the configured host'
  }
}

/** The driver's code (ECONNREFUSED, ENOTFOUND, 57P03, …), the first of an AggregateError's, else its message. */
function reasonOf (error: unknown): string {
  const first = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error
  const code = (first as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : String((first as Error).message)
}

export async function openPostgresState (options: PostgresStateOptions): Promise<GatewayState> {
  const database = createPostgresDatabase({ connectionString: options.connectionString, schema: options.schema, logger: options.logger })
  let report
  try {
    report = await migrate(database.db, { schema: options.schema })
  } catch (error) {
    await database.close()
    throw isUnavailable(error) ? new DatabaseUnreachableError(options.connectionString, error) : error
  }
  for (const migration of report.applied) options.logger.info({ schema: report.schema, migration }, `migration applied: ${migration}`)
  if (report.applied.length === 0) options.logger.info({ schema: report.schema }, 'database schema up to date')
  const key = options.secrets?.key
  const secrets = key === undefined ? undefined : new SecretBox(key, options.secrets?.previous)
  if (secrets === undefined) {
    options.logger.warn({ variable: 'SECRETS_KEY' }, 'SECRETS_KEY is not set: push notification configs (webhook URLs, tokens, credentials) are stored in clear in PostgreSQL; set SECRETS_KEY to seal them')
  }
  try {
    await resealed(database, secrets, options.logger)
  } catch (error) {
    await database.close()
    throw error
  }
  const conversations = new PostgresConversationStore(database, { maxConversationsPerCaller: options.maxConversationsPerCaller, joinsTaskSaves: true })
  const events = new PostgresTaskEventHub(database)
  // Another instance's save that recorded notifications wakes this outbox over the hub's LISTEN connection.
  const push = new PushState(database, options.maxPushConfigsPerCaller, secrets, events)
  return {
    kind: 'postgresql',
    conversations,
    events,
    ...databaseStores(database, options, push, {}),
    // Saves are signalled over the hub's LISTEN connection: a turn waiting for another instance's save wakes on it.
    taskStoreFor: (agentId) => agentTaskStore(database, agentId, options.maxOpenTasksPerCaller, push, { signals: events }),
    // Turns on one task, one at a time across every instance on the database; the take reads the task too, as the
    // agent's task store would (its owner: agentScope).
    taskTurnLockFor: (agentId) => new PostgresTaskTurnLock(database, {
      scope: agentId,
      waitTimeoutMs: options.turnWaitTimeoutMs,
      taskOwner: (key) => agentOwner(agentId, key.owner)
    }),
    pool: database.pool,
    async close () {
      await push.close()
      await events.close()
      await conversations.close()
      await database.close()
    }
  }
}
