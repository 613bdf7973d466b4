import type { AgentExecutor } from '@a2a-js/sdk/server'
import { loadKnowledgeBase } from '../runtime/load-documents.js'
import { knowledgeExecutor } from '../runtime/knowledge-executor.js'
import type { AgentDefinition } from './agent-definitions.js'

/** Builds the executor that runs one declared agent. */
export type ExecutorFactory = (definition: AgentDefinition) => AgentExecutor | Promise<AgentExecutor>

/** Knowledge answers with citations and an honest coverage verdict (documents + outOfScope). */
export const knowledgeExecutorFactory: ExecutorFactory = async (definition) => {
  // documents is already absolute (resolved against the agents file), so the base folder is irrelevant here.
  const knowledgeBase = await loadKnowledgeBase(definition, '/')
  return knowledgeExecutor({ knowledgeBase })
}

/** The executors an AGENTS_FILE can name in `executor`. */
export const builtInExecutors: Record<string, ExecutorFactory> = {
  knowledge: knowledgeExecutorFactory,
  conversation: knowledgeExecutorFactory
}
