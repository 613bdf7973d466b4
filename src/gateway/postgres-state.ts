/**
 * The gateway's state on PostgreSQL: tasks in @a2a-js/sdk's DatabaseTaskStore table (Kysely; our save keeps a
 * finished task finished), conversations in our own tables, the schema migrated at start (idempotent, safe when
 * instances start together).
 *
 * - STATE=postgres (DATABASE_URL): a server, so that several gateway instances behave as one service — live task
 *   events over LISTEN/NOTIFY, a lease row per task with a turn running.
 * - STATE=embedded (DATA_DIR): the same stores and migrations on PGlite in this process; one process per folder, so
 *   live events and turn locks stay in this process's memory.
 */
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { isUnavailable } from 'a2a-converse/postgres'
import { migrate } from 'a2a-converse/postgres'
import { PostgresConversationStore } from 'a2a-converse/postgres'
import { createPostgresDatabase, type PostgresDatabase, type PostgresLogger } from 'a2a-converse/postgres'
import { PostgresTaskEventHub } from 'a2a-converse/postgres'
import { PostgresTaskStore, failuresAsUnavailable, type PostgresSaveSignals } from 'a2a-converse/postgres'
import { PostgresTaskTurnLock } from 'a2a-converse/postgres'
import { openEmbeddedDatabase } from 'a2a-converse/postgres'
import { FolderInUseError } from 'a2a-converse/postgres'
import { MemoryTaskEventHub } from 'a2a-converse/runtime'
import { MemoryTaskTurnLock } from 'a2a-converse/service'
import { PostgresUpstreamOwnershipStore } from 'a2a-converse/postgres'
import { PostgresAgentStore } from 'a2a-converse/postgres'
import type { GatewayState } from './state.js'
import { callerKeyOf } from 'a2a-converse/runtime'
import { PostgresPushConfigStore, resealPushSecrets, sealedPushSecrets } from 'a2a-converse/postgres'
import { SecretBox, SecretsKeyError } from 'a2a-converse/push'
import type { SecretsConfig } from './config.js'
import { embeddedSecretBox, prepareDataDir, type PreparedDataDir } from './data-dir.js'
import { PostgresPushOutbox, type PostgresPushOutboxOptions } from 'a2a-converse/postgres'
import { join } from 'node:path'
import { packageRoot } from './package-root.js'
import type { PushStats } from 'a2a-converse/push'

/** The driver's warnings, and one info line per migration applied at start (or that the schema is up to date). */
export interface StateLogger extends PostgresLogger {
  info (obj: Record<string, unknown>, msg: string): void
}

export interface PostgresStateOptions {
  connectionString: string
  /** Schema holding every table (created by the migration). Default: the server's search path. */
  schema?: string
  logger: StateLogger
  /** How long a turn waits for the task's earlier turns (PostgresTaskTurnLock's waitTimeoutMs). Default 30 000 ms. */
  turnWaitTimeoutMs?: number
  /** Open tasks one caller holds per agent at most (MAX_OPEN_TASKS_PER_CALLER). Default 1 000. */
  maxOpenTasksPerCaller?: number
  /** Conversations one caller keeps per agent (MAX_CONVERSATIONS_PER_CALLER). Default 1 000. */
  maxConversationsPerCaller?: number
  /** Push configs per agent one caller holds (MAX_PUSH_CONFIGS_PER_CALLER). Default 100. */
  maxPushConfigsPerCaller?: number
  /** SECRETS_KEY and SECRETS_KEY_PREVIOUS: push credentials sealed; without a key, in clear (a warning at start). */
  secrets?: SecretsConfig
  /** Agents the store holds at most (MAX_AGENTS). Default 1 000. */
  maxAgents?: number
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

/**
 * One table serves every agent: the owner scope is prefixed with the agent id so an agent never sees
 * another agent's tasks (GetTask, ListTasks), exactly as separate in-memory stores behave.
 */
function agentScope (agentId: string) {
  // Agent ids never hold ":" (^[A-Za-z0-9_-]+$), so the prefix is unambiguous; PostgreSQL text refuses NUL.
  return (context: ServerCallContext): string => `${agentId}:${resolveUserScope(context)}`
}

/**
 * An agent's task store on the shared task table (server or embedded): its tasks scoped by agent and owner, a caller's
 * open tasks counted per agent (as each memory store counts them), store failures answered as the store's.
 */
function agentTaskStore (
  database: PostgresDatabase, agentId: string, maxOpenTasksPerCaller: number | undefined, push: PushState, signals?: PostgresSaveSignals, scope = agentId
): TaskStore {
  return failuresAsUnavailable(new PostgresTaskStore(database.db, {
    ownerResolver: agentScope(scope),
    signals,
    callerResolver: (context) => `${scope}:${callerKeyOf(context)}`,
    maxOpenTasksPerCaller,
    push: { agentId, recorded: () => { push.recorded() }, secrets: push.secrets }
  }))
}

/**
 * The scope of a proxied agent's copies of its configured upstream tasks (packages/a2a-converse/src/backends/proxy/relayed-push-backend.ts):
 * on the same tables, apart from the agent's own tasks (held turns, the inbox's) — "!" is never in an agent id — with
 * their own count of a caller's open tasks. Their configs count with the agent's (the cap is per agent id).
 */
function upstreamCopies (database: PostgresDatabase, agentId: string, maxOpenTasksPerCaller: number | undefined, push: PushState) {
  const scope = `${agentId}!upstream`
  return {
    taskStore: agentTaskStore(database, agentId, maxOpenTasksPerCaller, push, undefined, scope),
    configs: push.configsFor(agentId, scope)
  }
}

/** The instances on one database, as the push outbox sees them (the PostgreSQL task event hub). */
type PushPeers = Pick<PostgresTaskEventHub, 'pushRecorded' | 'onPushRecorded'>

/**
 * Push notifications on the database: configs in the agent's task scope, the outbox written by the task store and
 * delivered by every instance (packages/a2a-converse/src/stores/postgres/push-outbox.ts) once the gateway starts delivery.
 */
class PushState {
  outbox: PostgresPushOutbox | undefined
  /** Seals the configs and outbox rows (packages/a2a-converse/src/stores/secret-box.ts); undefined: in clear. */
  readonly secrets: SecretBox | undefined
  readonly #database: PostgresDatabase
  readonly #maxConfigsPerCaller: number | undefined
  readonly #peers: PushPeers | undefined

  /** `peers`: the other instances on the database, told when a save here recorded notifications (PostgreSQL only). */
  constructor (database: PostgresDatabase, maxConfigsPerCaller: number | undefined, secrets: SecretBox | undefined, peers?: PushPeers) {
    this.#database = database
    this.#maxConfigsPerCaller = maxConfigsPerCaller
    this.secrets = secrets
    this.#peers = peers
  }

  /** A save here recorded notifications: this instance's outbox looks now, and so do the others'. */
  recorded (): void {
    this.outbox?.wake()
    this.#peers?.pushRecorded()
  }

  /** The agent's configs in the scope of its task store (`scope`: the agent's own, or its upstream copies'). */
  configsFor (agentId: string, scope = agentId): PostgresPushConfigStore {
    return new PostgresPushConfigStore(this.#database.db, { agentId, ownerResolver: agentScope(scope), maxConfigsPerCaller: this.#maxConfigsPerCaller, secrets: this.secrets })
  }

  start (options: PostgresPushOutboxOptions): PushStats {
    const outbox = new PostgresPushOutbox(this.#database.db, { ...options, secrets: this.secrets })
    this.outbox = outbox
    this.#peers?.onPushRecorded(() => { outbox.wake() })
    outbox.start()
    return outbox.stats
  }

  async close (): Promise<void> {
    await this.outbox?.close()
  }
}

/**
 * The embedded database's cluster templates, made by the build (scripts/make-cluster-template.js): a first start
 * unpacks one instead of running initdb. Absent (the sources run as they are, in tests), initdb runs in a child.
 */
const CLUSTER_TEMPLATES = join(packageRoot(), 'dist', 'cluster-templates')

export interface EmbeddedStateOptions {
  /** The data folder (DATA_DIR). */
  dataDir: string
  logger: StateLogger
  /** How long a turn waits for the task's earlier turns. Default 30 000 ms. */
  turnWaitTimeoutMs?: number
  /** Open tasks per agent one caller holds (MAX_OPEN_TASKS_PER_CALLER). */
  maxOpenTasksPerCaller?: number
  /** Conversations per agent one caller keeps (MAX_CONVERSATIONS_PER_CALLER). */
  maxConversationsPerCaller?: number
  /** Push configs per agent one caller holds (MAX_PUSH_CONFIGS_PER_CALLER). */
  maxPushConfigsPerCaller?: number
  /** SECRETS_KEY and SECRETS_KEY_PREVIOUS; without a key, the key generated into DATA_DIR/secrets.key. */
  secrets?: SecretsConfig
  /** Agents the store holds at most (MAX_AGENTS). Default 1 000. */
  maxAgents?: number
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
  const conversations = new PostgresConversationStore(database, { maxConversationsPerCaller: options.maxConversationsPerCaller })
  const events = new MemoryTaskEventHub()
  const push = new PushState(database, options.maxPushConfigsPerCaller, secrets)
  return {
    kind: 'embedded',
    conversations,
    events,
    upstreamOwnership: new PostgresUpstreamOwnershipStore(database),
    agents: new PostgresAgentStore(database.db, { maxAgents: options.maxAgents }),
    // Saves are signalled in this process (the only one on the folder).
    taskStoreFor: (agentId) => agentTaskStore(database, agentId, options.maxOpenTasksPerCaller, push),
    taskTurnLockFor: () => new MemoryTaskTurnLock({ waitTimeoutMs: options.turnWaitTimeoutMs }),
    pushConfigsFor: (agentId) => push.configsFor(agentId),
    startPushDelivery: (delivery) => push.start(delivery),
    upstreamCopiesFor: (agentId) => upstreamCopies(database, agentId, options.maxOpenTasksPerCaller, push),
    readinessChecks: { database: () => database.ping() },
    async close () {
      await push.close()
      await events.close()
      await conversations.close()
      await database.close()
      await release()
    }
  }
}

/** A push credential sealed with a key the gateway was not given: the start is refused, naming the variables. */
export class SecretsKeyMissingError extends Error {
  constructor (problem: string, cause?: unknown) {
    super(problem)
    this.name = 'SecretsKeyMissingError'
    this.cause = cause
  }
}

/**
 * Every push config and outbox row sealed with the current key at start: rows in clear (written before sealing)
 * and rows under a previous key (a rotation) are re-sealed; one line says how many. Without a box (PostgreSQL
 * without SECRETS_KEY) a sealed row refuses the start (it could not be read).
 */
async function resealed (database: PostgresDatabase, secrets: SecretBox | undefined, logger: StateLogger): Promise<void> {
  if (secrets === undefined) {
    if (await sealedPushSecrets(database.db)) {
      throw new SecretsKeyMissingError('SECRETS_KEY is not set, but the database holds push configs sealed with a key: set SECRETS_KEY (and SECRETS_KEY_PREVIOUS) to the key they were sealed with')
    }
    return
  }
  const rewritten = await resealPushSecrets(database.db, secrets).catch((error: Error) => {
    throw new SecretsKeyMissingError(`push credentials cannot be re-sealed with SECRETS_KEY: ${error.message}; give the key they were sealed with in SECRETS_KEY_PREVIOUS`, error)
  })
  if (rewritten > 0) logger.info({ rows: rewritten, keyId: secrets.keyId }, `push credentials: ${rewritten} rows re-sealed with the current key (key id ${secrets.keyId}); keys other than SECRETS_KEY are no longer needed by this database`)
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
  const conversations = new PostgresConversationStore(database, { maxConversationsPerCaller: options.maxConversationsPerCaller })
  const events = new PostgresTaskEventHub(database)
  // Another instance's save that recorded notifications wakes this outbox over the hub's LISTEN connection.
  const push = new PushState(database, options.maxPushConfigsPerCaller, secrets, events)
  return {
    kind: 'postgresql',
    conversations,
    events,
    upstreamOwnership: new PostgresUpstreamOwnershipStore(database),
    agents: new PostgresAgentStore(database.db, { maxAgents: options.maxAgents }),
    // Saves are signalled over the hub's LISTEN connection: a turn waiting for another instance's save wakes on it.
    taskStoreFor: (agentId) => agentTaskStore(database, agentId, options.maxOpenTasksPerCaller, push, events),
    // Turns on one task, one at a time across every instance on the database.
    taskTurnLockFor: (agentId) => new PostgresTaskTurnLock(database, { scope: agentId, waitTimeoutMs: options.turnWaitTimeoutMs }),
    pushConfigsFor: (agentId) => push.configsFor(agentId),
    startPushDelivery: (delivery) => push.start(delivery),
    upstreamCopiesFor: (agentId) => upstreamCopies(database, agentId, options.maxOpenTasksPerCaller, push),
    readinessChecks: { database: () => database.ping() },
    pool: database.pool,
    async close () {
      await push.close()
      await events.close()
      await conversations.close()
      await database.close()
    }
  }
}
