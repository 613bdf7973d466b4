/**
 * Where the gateway keeps tasks, conversations and live task events: this process's memory, or PostgreSQL when
 * DATABASE_URL is set (several instances, one service). The PostgreSQL layer is imported only when it is used.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import { MemoryTaskEventHub, type TaskEventHub } from '../events/task-event-hub.js'
import type { ConversationStore } from '../stores/conversation-store.js'
import { MemoryConversationStore } from '../stores/memory-conversation-store.js'
import { BoundedMemoryTaskStore } from '../stores/memory-task-store.js'
import { MemoryTaskTurnLock, type TaskTurnLock } from '../stores/task-turn-lock.js'
import type { StateLogger } from './postgres-state.js'
import type { ReadinessCheck } from '../../plugins/health.js'
import type { GatewayConfig } from './config.js'

export interface GatewayState {
  /** Where the state lives (the start-up log says it). */
  kind: 'memory' | 'postgresql'
  conversations: ConversationStore
  events: TaskEventHub
  taskStoreFor (agentId: string): TaskStore
  /** Serializes turns on one task of the agent (for every instance that shares the state). */
  taskTurnLockFor (agentId: string): TaskTurnLock
  readinessChecks: Record<string, ReadinessCheck>
  close (): Promise<void>
}

/** The memory bounds (MEMORY_* variables); the stores' defaults where a field is absent. */
export type MemoryBounds = Partial<Pick<GatewayConfig, 'memoryMaxTasks' | 'memoryMaxTaskBytes' | 'maxOpenTasksPerCaller' | 'memoryFinishedTaskTtlMs' | 'memoryMaxConversations' | 'maxConversationsPerCaller' | 'turnWaitTimeoutMs'>>

/** One process: nothing shared, nothing to check, lost on restart; bounded (tasks per agent, conversations). */
export function memoryState (bounds: MemoryBounds = {}): GatewayState {
  const conversations = new MemoryConversationStore({
    maxConversations: bounds.memoryMaxConversations,
    maxConversationsPerCaller: bounds.maxConversationsPerCaller
  })
  const events = new MemoryTaskEventHub()
  return {
    kind: 'memory',
    conversations,
    events,
    taskStoreFor: () => new BoundedMemoryTaskStore({
      maxTasks: bounds.memoryMaxTasks,
      maxTaskBytes: bounds.memoryMaxTaskBytes,
      maxOpenTasksPerCaller: bounds.maxOpenTasksPerCaller,
      finishedTaskTtlMs: bounds.memoryFinishedTaskTtlMs
    }),
    taskTurnLockFor: () => new MemoryTaskTurnLock({ waitTimeoutMs: bounds.turnWaitTimeoutMs }),
    readinessChecks: {},
    async close () {
      await conversations.close()
      await events.close()
    }
  }
}

export async function openGatewayState (config: Pick<GatewayConfig, 'databaseUrl' | 'databaseSchema'> & MemoryBounds, logger: StateLogger): Promise<GatewayState> {
  /* c8 ignore start -- the PostgreSQL path runs in the tests that need TEST_DATABASE_URL (CI sets it); without a
     database it cannot run, and counting it there would fail `npm test` on a machine without PostgreSQL */
  if (config.databaseUrl !== undefined) {
    const { openPostgresState } = await import('./postgres-state.js')
    return openPostgresState({
      connectionString: config.databaseUrl,
      schema: config.databaseSchema,
      logger,
      turnWaitTimeoutMs: config.turnWaitTimeoutMs,
      maxOpenTasksPerCaller: config.maxOpenTasksPerCaller
    })
  }
  /* c8 ignore stop */
  return memoryState(config)
}
