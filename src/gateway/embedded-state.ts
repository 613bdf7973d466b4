/**
 * The gateway's state on the embedded database (STATE=embedded, DATA_DIR): the same stores and migrations as on a
 * PostgreSQL server (database-stores.ts), on PGlite in this process; one process per folder, so live events and
 * turn locks stay in this process's memory. Apart from postgres-state.ts (a server) because the folder, its lock,
 * its key and its errors are this mode's alone.
 */
import { migrate } from 'a2a-converse/postgres'
import { PostgresConversationStore } from 'a2a-converse/postgres'
import { type PostgresDatabase } from 'a2a-converse/postgres'
import { openEmbeddedDatabase } from 'a2a-converse/postgres'
import { RememberedTasks } from 'a2a-converse/postgres'
import { FolderInUseError } from 'a2a-converse/postgres'
import { MemoryTaskEventHub } from 'a2a-converse/runtime'
import { MemoryTaskTurnLock } from 'a2a-converse/service'
import type { GatewayState } from './state.js'
import { SecretsKeyError, type SecretBox } from 'a2a-converse/push'
import type { SecretsConfig } from './config.js'
import { embeddedSecretBox, prepareDataDir, type PreparedDataDir } from './data-dir.js'
import { join } from 'node:path'
import { packageRoot } from './package-root.js'
import { agentTaskStore, databaseStores, PushState, type DatabaseStateOptions } from './database-stores.js'
import { resealed, SecretsKeyMissingError } from './push-secrets-reseal.js'

/**
 * The embedded database's cluster templates, made by the build (scripts/make-cluster-template.js): a first start
 * unpacks one instead of running initdb. Absent (the sources run as they are, in tests), initdb runs in a child.
 */
const CLUSTER_TEMPLATES = join(packageRoot(), 'dist', 'cluster-templates')

export interface EmbeddedStateOptions extends DatabaseStateOptions {
  /** The data folder (DATA_DIR). */
  dataDir: string
  /** SECRETS_KEY and SECRETS_KEY_PREVIOUS; without a key, the key generated into DATA_DIR/secrets.key. */
  secrets?: SecretsConfig
}

/** DATA_DIR cannot be used: not writable, held by another gateway, or written by a newer version. Names the folder. */
export class DataDirError extends Error {
  constructor (dataDir: string, problem: string, cause?: unknown) {
    super(`DATA_DIR ${dataDir}: ${problem}`)
    this.name = 'DataDirError'
    this.cause = cause
  }
}

/** What went wrong with the folder, in words a user acts on. */
function dataDirProblem (error: unknown): string {
  if (error instanceof FolderInUseError) return `is in use by another running process (pid ${error.pid}); stop it or choose another DATA_DIR`
  if (error instanceof SecretsKeyError) return error.message
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `cannot be created or written (${code})`
  const message = String((error as Error | undefined)?.message)
  // Kysely's Migrator refuses a ledger naming migrations this version does not have.
  if (/corrupted migrations/.test(message)) return 'was written by a newer version of a2a-converse (its schema has migrations this version does not know); run that version, or start with another DATA_DIR'
  return `the embedded database cannot be opened (${message})`
}

export async function openEmbeddedState (options: EmbeddedStateOptions): Promise<GatewayState> {
  let folder: PreparedDataDir
  let database: PostgresDatabase
  let secrets: SecretBox
  try {
    folder = await prepareDataDir(options.dataDir, options.logger)
  } catch (error) {
    throw new DataDirError(options.dataDir, dataDirProblem(error), error)
  }
  const { release } = folder
  try {
    secrets = await embeddedSecretBox(options.dataDir, options.secrets ?? { previous: [] }, options.logger)
    database = await openEmbeddedDatabase({ dataDir: folder.databaseFolder, templates: CLUSTER_TEMPLATES, logger: options.logger })
  } catch (error) {
    await release()
    throw new DataDirError(options.dataDir, dataDirProblem(error), error)
  }
  let report
  try {
    report = await migrate(database.db, { schema: 'public' })
    for (const migration of report.applied) options.logger.info({ dataDir: options.dataDir, migration }, `migration applied: ${migration}`)
    await resealed(database, secrets, options.logger)
  } catch (error) {
    await database.close()
    await release()
    throw error instanceof SecretsKeyMissingError ? error : new DataDirError(options.dataDir, dataDirProblem(error), error)
  }
  // This process alone writes the folder, and its task stores share it: a routine step's conversation write goes
  // in the statement of its task's saves.
  const conversations = new PostgresConversationStore(database, { maxConversationsPerCaller: options.maxConversationsPerCaller, joinsTaskSaves: true, soleWriter: true })
  const events = new MemoryTaskEventHub()
  const push = new PushState(database, options.maxPushConfigsPerCaller, secrets)
  // This process alone writes the folder's tables: the task stores answer loads from the tasks saved or read here.
  const writers = { soleWriter: new RememberedTasks() }
  return {
    kind: 'embedded',
    conversations,
    events,
    ...databaseStores(database, options, push, writers),
    // Saves are signalled in this process (the only one on the folder).
    taskStoreFor: (agentId) => agentTaskStore(database, agentId, options.maxOpenTasksPerCaller, push, writers),
    taskTurnLockFor: () => new MemoryTaskTurnLock({ waitTimeoutMs: options.turnWaitTimeoutMs }),
    async close () {
      await push.close()
      await events.close()
      await conversations.close()
      await database.close()
      await release()
    }
  }
}
