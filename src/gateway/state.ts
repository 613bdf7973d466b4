/**
 * Where the gateway keeps tasks, conversations and live task events (STATE): an embedded PostgreSQL in this process
 * (DATA_DIR; the default), a PostgreSQL server (DATABASE_URL: several instances, one service), or this process's
 * memory. The PostgreSQL layer is imported only when it is used.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import { MemoryTaskEventHub, type TaskEventHub } from 'a2a-converse/runtime'
import type { ConversationStore } from 'a2a-converse/runtime'
import { MemoryConversationStore } from 'a2a-converse/runtime'
import { BoundedMemoryTaskStore } from 'a2a-converse/runtime'
import { MemoryTaskTurnLock, type TaskTurnLock } from 'a2a-converse/service'
import { MemoryUpstreamOwnershipStore } from 'a2a-converse/runtime'
import type { UpstreamOwnershipStore } from 'a2a-converse/runtime'
import { MemoryAgentStore, type AgentStore } from 'a2a-converse/runtime'
import type { StateLogger } from './database-stores.js'
import type { ReadinessCheck } from '../../plugins/health.js'
import type { GatewayConfig } from './config.js'
import type { PushConfigStore } from 'a2a-converse/push'
import type { PushStats } from 'a2a-converse/push'
import type { PostgresPushOutboxOptions } from 'a2a-converse/postgres'

/** What pg's Pool says about its connections. */
export interface PoolCounts {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

export interface GatewayState {
  /** Where the state lives (the start-up log says it). */
  kind: 'memory' | 'embedded' | 'postgresql'
  conversations: ConversationStore
  events: TaskEventHub
  /** Who owns each proxied agent's upstream tasks and contexts. */
  upstreamOwnership: UpstreamOwnershipStore
  /** The agents published through the operator API (docs/agents.md). */
  agents: AgentStore
  taskStoreFor (agentId: string): TaskStore
  /** Serializes turns on one task of the agent (for every instance that shares the state). */
  taskTurnLockFor (agentId: string): TaskTurnLock
  /** Where the agent's push configs live (shared by instances); absent: in this process's memory. */
  pushConfigsFor?: (agentId: string) => PushConfigStore
  /**
   * With pushConfigsFor: the task stores record notifications in an outbox (the save's transaction); this starts
   * delivering it from this instance. Closed with the state.
   */
  startPushDelivery?: (options: PostgresPushOutboxOptions) => PushStats
  /** The PostgreSQL connection pool's counts (STATE=postgres), for the metrics. */
  pool?: PoolCounts
  /**
   * Where a proxied agent keeps the copies of its configured upstream tasks (packages/a2a-converse/src/backends/proxy/relayed-push-backend.ts):
   * a task store apart from the agent's (held turns, the inbox), and with pushConfigsFor the configs in the copies'
   * scope (recorded in the outbox by that store's saves).
   */
  upstreamCopiesFor (agentId: string): { taskStore: TaskStore, configs?: PushConfigStore }
  readinessChecks: Record<string, ReadinessCheck>
  close (): Promise<void>
}

/** The memory bounds (MEMORY_* variables); the stores' defaults where a field is absent. */
export type MemoryBounds = Partial<Pick<GatewayConfig, 'memoryMaxTasks' | 'memoryMaxTaskBytes' | 'maxOpenTasksPerCaller' | 'memoryFinishedTaskTtlMs' | 'memoryMaxConversations' | 'maxConversationsPerCaller' | 'turnWaitTimeoutMs' | 'maxAgents'>>

/**
 * One process: nothing shared, nothing to check, lost on restart; bounded (tasks per agent, conversations; upstream
 * ownership records per agent by the same two bounds).
 */
export function memoryState (bounds: MemoryBounds = {}): GatewayState {
  const conversations = new MemoryConversationStore({
    maxConversations: bounds.memoryMaxConversations,
    maxConversationsPerCaller: bounds.maxConversationsPerCaller
  })
  const events = new MemoryTaskEventHub()
  const upstreamOwnership = new MemoryUpstreamOwnershipStore({ maxTasks: bounds.memoryMaxTasks, maxContexts: bounds.memoryMaxConversations })
  return {
    kind: 'memory',
    conversations,
    events,
    upstreamOwnership,
    agents: new MemoryAgentStore({ maxAgents: bounds.maxAgents }),
    taskStoreFor: () => new BoundedMemoryTaskStore({
      maxTasks: bounds.memoryMaxTasks,
      maxTaskBytes: bounds.memoryMaxTaskBytes,
      maxOpenTasksPerCaller: bounds.maxOpenTasksPerCaller,
      finishedTaskTtlMs: bounds.memoryFinishedTaskTtlMs
    }),
    taskTurnLockFor: () => new MemoryTaskTurnLock({ waitTimeoutMs: bounds.turnWaitTimeoutMs }),
    // A store of their own, bounded as the agent's (its own count of each caller's open tasks).
    upstreamCopiesFor: () => ({
      taskStore: new BoundedMemoryTaskStore({
        maxTasks: bounds.memoryMaxTasks,
        maxTaskBytes: bounds.memoryMaxTaskBytes,
        maxOpenTasksPerCaller: bounds.maxOpenTasksPerCaller,
        finishedTaskTtlMs: bounds.memoryFinishedTaskTtlMs
      })
    }),
    readinessChecks: {},
    async close () {
      await conversations.close()
      await events.close()
      await upstreamOwnership.close()
    }
  }
}

export type StateConfig = Pick<GatewayConfig, 'state' | 'dataDir' | 'databaseUrl' | 'databaseSchema'> & MemoryBounds & Partial<Pick<GatewayConfig, 'push' | 'secrets'>>

export async function openGatewayState (config: StateConfig, logger: StateLogger): Promise<GatewayState> {
  if (config.state === 'memory') return memoryState(config)
  const { maxOpenTasksPerCaller, maxConversationsPerCaller, turnWaitTimeoutMs, secrets, maxAgents } = config
  const maxPushConfigsPerCaller = config.push?.maxConfigsPerCaller
  if (config.state === 'embedded') {
    const { openEmbeddedState } = await import('./embedded-state.js')
    return await openEmbeddedState({ dataDir: config.dataDir, logger, turnWaitTimeoutMs, maxOpenTasksPerCaller, maxConversationsPerCaller, maxPushConfigsPerCaller, secrets, maxAgents })
  }
  const { openPostgresState } = await import('./postgres-state.js')
  // STATE=postgres comes with DATABASE_URL (loadConfig checks).
  return await openPostgresState({ connectionString: config.databaseUrl as string, schema: config.databaseSchema, logger, turnWaitTimeoutMs, maxOpenTasksPerCaller, maxConversationsPerCaller, maxPushConfigsPerCaller, secrets, maxAgents })
}
