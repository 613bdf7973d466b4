/**
 * The conversation runtime built from agent definitions, framework-free: per agent its card, routines, executor
 * and task store, and the human inbox over all of them. The Fastify gateway (app.ts) and the Express example
 * (examples/express-gateway.ts) mount the same runtime on their doors.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import type { AgentCardInput } from '../core/converse-extension.js'
import type { RoutineDeclaration } from '../core/routine-declarations.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import { createInbox, type Inbox } from '../runtime/inbox.js'
import type { RoutineEngine } from '../runtime/routine-engine.js'
import type { ConversationStore } from '../stores/conversation-store.js'
import type { AgentDefinition } from './agent-definitions.js'
import { builtInExecutors, type ExecutorFactory } from './executors.js'

export interface AgentRuntimeOptions {
  definitions: AgentDefinition[]
  /** Executor factories by name, merged over the built-in ones ("conversation", "knowledge"). */
  executors?: Record<string, ExecutorFactory>
  conversations: ConversationStore
  events: TaskEventHub
  /** The task store of an agent. */
  taskStoreFor (agentId: string): TaskStore
}

/** One agent as the doors take it: a declaration (id, card, routines) and what answers it (executor, taskStore). */
export interface RuntimeAgent {
  id: string
  card: AgentCardInput
  routines: RoutineDeclaration[] | undefined
  executor: Awaited<ReturnType<ExecutorFactory>>
  taskStore: TaskStore
}

export interface AgentRuntime {
  agents: RuntimeAgent[]
  /** Human takeover over these agents' conversations (the operator API's). */
  inbox: Inbox
}

export async function buildAgentRuntime (options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const { conversations, events } = options
  const factories = { ...builtInExecutors, ...options.executors }
  const taskStores = new Map<string, TaskStore>()
  const engines = new Map<string, RoutineEngine>()
  const agents: RuntimeAgent[] = []
  for (const definition of options.definitions) {
    const name = definition.executor ?? 'conversation'
    const factory = factories[name]
    if (factory === undefined) {
      throw new Error(`agent "${definition.id}": unknown executor "${name}" (known: ${Object.keys(factories).join(', ')})`)
    }
    const taskStore = options.taskStoreFor(definition.id)
    taskStores.set(definition.id, taskStore)
    const executor = await factory(definition, { conversations, taskStore, events })
    if (executor.engine !== undefined) engines.set(definition.id, executor.engine)
    agents.push({
      id: definition.id,
      card: {
        name: definition.name,
        description: definition.description,
        version: definition.version ?? '1.0.0',
        capabilities: { streaming: true, pushNotifications: false }
      },
      routines: definition.routines,
      executor,
      taskStore
    })
  }
  return { agents, inbox: createInbox({ store: conversations, taskStores, events, engines }) }
}
