/**
 * The stores every agent gets on the database, the same on a PostgreSQL server and on the embedded database: its
 * task store on the shared task table (scoped by agent and owner), its proxied upstream tasks' copies, its push
 * configs and the outbox; and the rest of the state both modes build alike (databaseStores). Apart from
 * postgres-state.ts and embedded-state.ts, which open the database and choose what differs (the event hub, the turn
 * locks, the push peers).
 */
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { type PostgresDatabase, type PostgresLogger } from 'a2a-converse/postgres'
import { PostgresTaskEventHub } from 'a2a-converse/postgres'
import { PostgresTaskStore, failuresAsUnavailable, type PostgresSaveSignals, type RememberedTasks } from 'a2a-converse/postgres'
import { callerKeyOf } from 'a2a-converse/runtime'
import { PostgresPushConfigStore } from 'a2a-converse/postgres'
import type { SecretBox } from 'a2a-converse/push'
import { PostgresPushOutbox, type PostgresPushOutboxOptions } from 'a2a-converse/postgres'
import type { PushStats } from 'a2a-converse/push'
import { PostgresAgentStore, PostgresUpstreamOwnershipStore } from 'a2a-converse/postgres'
import type { GatewayState } from './state.js'

/** The driver's warnings, and one info line per migration applied at start (or that the schema is up to date). */
export interface StateLogger extends PostgresLogger {
  info (obj: Record<string, unknown>, msg: string): void
}

/** What both openers take (postgres-state.ts, embedded-state.ts): the log and the bounds of the stores. */
export interface DatabaseStateOptions {
  logger: StateLogger
  /** How long a turn waits for the task's earlier turns (the turn lock's waitTimeoutMs). Default 30 000 ms. */
  turnWaitTimeoutMs?: number
  /** Open tasks one caller holds per agent at most (MAX_OPEN_TASKS_PER_CALLER). Default 1 000. */
  maxOpenTasksPerCaller?: number
  /** Conversations one caller keeps per agent (MAX_CONVERSATIONS_PER_CALLER). Default 1 000. */
  maxConversationsPerCaller?: number
  /** Push configs per agent one caller holds (MAX_PUSH_CONFIGS_PER_CALLER). Default 100. */
  maxPushConfigsPerCaller?: number
  /** Agents the store holds at most (MAX_AGENTS). Default 1 000. */
  maxAgents?: number
}

/**
 * One table serves every agent: the owner scope is prefixed with the agent id so an agent never sees
 * another agent's tasks (GetTask, ListTasks), exactly as separate in-memory stores behave.
 */
export function agentScope (agentId: string) {
  return (context: ServerCallContext): string => agentOwner(agentId, resolveUserScope(context))
}

/** The owner column of `userScope`'s rows of `agentId` (the SDK's user scope, prefixed with the agent id). */
export function agentOwner (agentId: string, userScope: string): string {
  // Agent ids never hold ":" (^[A-Za-z0-9_-]+$), so the prefix is unambiguous; PostgreSQL text refuses NUL.
  return `${agentId}:${userScope}`
}

/**
 * Who else writes the task table, as the task stores are told. On a server: other instances, told of each save by the
 * event hub (`signals`). Embedded: nobody (the folder lock), so every task store of the process shares one memory of
 * the tasks it saved or read (`soleWriter`), which answers their loads.
 */
export interface TaskWriters {
  signals?: PostgresSaveSignals
  soleWriter?: RememberedTasks
}

/**
 * An agent's task store on the shared task table (server or embedded): its tasks scoped by agent and owner, a caller's
 * open tasks counted per agent (as each memory store counts them), store failures answered as the store's.
 */
export function agentTaskStore (
  database: PostgresDatabase, agentId: string, maxOpenTasksPerCaller: number | undefined, push: PushState, writers: TaskWriters, scope = agentId
): TaskStore {
  return failuresAsUnavailable(new PostgresTaskStore(database.db, {
    ownerResolver: agentScope(scope),
    signals: writers.signals,
    soleWriter: writers.soleWriter,
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
export function upstreamCopies (database: PostgresDatabase, agentId: string, maxOpenTasksPerCaller: number | undefined, push: PushState, writers: TaskWriters) {
  const scope = `${agentId}!upstream`
  return {
    taskStore: agentTaskStore(database, agentId, maxOpenTasksPerCaller, push, { soleWriter: writers.soleWriter }, scope),
    configs: push.configsFor(agentId, scope)
  }
}

/** The instances on one database, as the push outbox sees them (the PostgreSQL task event hub). */
type PushPeers = Pick<PostgresTaskEventHub, 'pushRecorded' | 'onPushRecorded'>

/**
 * Push notifications on the database: configs in the agent's task scope, the outbox written by the task store and
 * delivered by every instance (packages/a2a-converse/src/stores/postgres/push-outbox.ts) once the gateway starts delivery.
 */
export class PushState {
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
 * The part of the state both modes build alike on the database: the records, the agents, push, the readiness check.
 * `writers`: what the upstream copies' task stores are told (`soleWriter` only: their saves signal no other instance).
 */
export function databaseStores (
  database: PostgresDatabase, options: DatabaseStateOptions, push: PushState, writers: TaskWriters
): Pick<GatewayState, 'upstreamOwnership' | 'agents' | 'pushConfigsFor' | 'startPushDelivery' | 'upstreamCopiesFor' | 'readinessChecks'> {
  return {
    upstreamOwnership: new PostgresUpstreamOwnershipStore(database),
    agents: new PostgresAgentStore(database.db, { maxAgents: options.maxAgents }),
    pushConfigsFor: (agentId) => push.configsFor(agentId),
    startPushDelivery: (delivery) => push.start(delivery),
    upstreamCopiesFor: (agentId) => upstreamCopies(database, agentId, options.maxOpenTasksPerCaller, push, writers),
    readinessChecks: { database: () => database.ping() }
  }
}
