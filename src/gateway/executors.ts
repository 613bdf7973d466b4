import type { AgentExecutor, TaskStore } from '@a2a-js/sdk/server'
import { KnowledgeBase, loadKnowledgeBase } from 'a2a-converse/runtime'
import { knowledgeExecutor } from 'a2a-converse/runtime'
import { conversationExecutor } from 'a2a-converse/runtime'
import type { RoutineEngine } from 'a2a-converse/runtime'
import type { TaskEventHub } from 'a2a-converse/runtime'
import type { ConversationStore } from 'a2a-converse/runtime'
import type { AgentDefinition } from './agent-definitions.js'

/** What the gateway hands every executor factory. */
export interface ExecutorServices {
  conversations: ConversationStore
  /** The agent's task store (the one its A2A endpoint uses). */
  taskStore: TaskStore
  /** Live task events, relayed by the A2A endpoint to open streams. */
  events: TaskEventHub
  /** Characters of a message's text an executor reads (MAX_READ_CHARS). Default: the runtime's, 4,096. */
  maxReadChars?: number
}

/** Builds the executor that runs one declared agent (and its routine engine, when it has one). */
export type ExecutorFactory = (definition: AgentDefinition, services: ExecutorServices) =>
  (AgentExecutor & { engine?: RoutineEngine }) | Promise<AgentExecutor & { engine?: RoutineEngine }>

/** An agent's `documents` folder is missing or not a folder: names the agent, the folder and where it is resolved. */
export class DocumentsFolderError extends Error {
  constructor (agentId: string, folder: string, code: string) {
    super(`agent "${agentId}": documents folder ${folder} is missing or not a folder (${code}); ` +
      '"documents" in the agents file is a folder of Markdown files, relative to the agents file\'s own folder')
    this.name = 'DocumentsFolderError'
  }
}

/**
 * The agent's knowledge base: its inline documents (a published agent), or its folder's (AGENTS_FILE) with a
 * start-up error that says what to fix when the folder is not there.
 */
export async function agentKnowledgeBase (definition: AgentDefinition): Promise<KnowledgeBase> {
  const { documents, outOfScope } = definition
  if (Array.isArray(documents)) return new KnowledgeBase({ documents, outOfScope })
  try {
    // `documents` is already absolute (resolved against the agents file), so the base folder does not matter.
    return await loadKnowledgeBase({ documents, outOfScope }, '/')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if ((code === 'ENOENT' || code === 'ENOTDIR') && documents !== undefined) {
      throw new DocumentsFolderError(definition.id, documents, code)
    }
    throw error
  }
}

/** Knowledge answers only: citations and an honest coverage verdict from `documents` and `outOfScope`. */
export const knowledgeExecutorFactory: ExecutorFactory = async (definition, services) => {
  const knowledgeBase = await agentKnowledgeBase(definition)
  return knowledgeExecutor({ knowledgeBase, maxReadChars: services.maxReadChars })
}

/** Knowledge answers, routines with slots, typed routine calls and human takeover. */
export const conversationExecutorFactory: ExecutorFactory = async (definition, services) => {
  const knowledgeBase = await agentKnowledgeBase(definition)
  return conversationExecutor({
    agentId: definition.id,
    knowledgeBase,
    routines: definition.routines,
    store: services.conversations,
    taskStore: services.taskStore,
    events: services.events,
    maxReadChars: services.maxReadChars
  })
}

/** The executors an AGENTS_FILE can name in `executor` ("conversation" when it names none). */
export const builtInExecutors: Record<string, ExecutorFactory> = {
  conversation: conversationExecutorFactory,
  knowledge: knowledgeExecutorFactory
}
