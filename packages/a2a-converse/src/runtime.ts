/**
 * a2a-converse/runtime: the conversation runtime behind the gateway's agents, as @a2a-js/sdk executors: knowledge
 * answers with citations and verdicts, routines with slots, typed calls, the human inbox, and the in-memory
 * stores. Loads MiniSearch and the YAML parser (documents' front matter); no web framework.
 */
export {
  KnowledgeBase, KnowledgeBaseError, type KnowledgeDocument, type KnowledgeChunk, type KnowledgeAnswer,
  type KnowledgeBaseOptions, type OutOfScopeTopic
} from './runtime/knowledge-base.js'
export { loadDocuments, loadKnowledgeBase, type KnowledgeDeclaration } from './runtime/load-documents.js'
export { knowledgeExecutor, type KnowledgeExecutorOptions } from './runtime/knowledge-executor.js'
export {
  createRoutineEngine, RoutineStateError, UnknownRoutineError,
  type RoutineEngine, type RoutineEngineOptions, type RoutineProgress, type InvokeResult, type FillResult, type RoutineCall
} from './runtime/routine-engine.js'
export { conversationExecutor, type ConversationExecutorOptions } from './runtime/conversation-executor.js'
export { createInbox, type Inbox, type InboxOptions, type ConversationView, type HumanReplyResult } from './runtime/inbox.js'
export { ConversationFeedStore } from './runtime/conversation-feed.js'
export {
  needsPersonReasons, ConversationStoreClosedError, NEEDS_PERSON_REASONS,
  type ConversationStore, type ConversationState, type ConversationTurn, type ConversationRoutine,
  type ConversationSummary, type ConversationListOptions, type NeedsPersonReason
} from './stores/conversation-store.js'
export { MemoryConversationStore, type MemoryConversationStoreOptions } from './stores/memory-conversation-store.js'
export { type AnswerLog, type AnswerRecord, type AnswerWindow } from './stores/answer-log.js'
export { MemoryAnswerLog } from './stores/memory-answer-log.js'
export { BoundedMemoryTaskStore, type MemoryTaskStoreOptions } from './stores/memory-task-store.js'
export { tracedTaskStore } from './stores/traced-task-store.js'
export { MemoryTaskEventHub, type TaskEventHub, type TaskEventListener } from './events/task-event-hub.js'
// For the gateway app and other integrators.
export { messageText } from './runtime/slot-input.js'
export { ANSWER_WINDOW_NAMES } from './stores/answer-log.js'
export { decodeGroupCursor, encodeGroupCursor } from './stores/answer-queries.js'
export { callerKeyOf } from './stores/caller-key.js'
export { MAX_CONVERSATION_KEY_LENGTH } from './stores/conversation-store.js'
export { StoreUnavailableError } from './stores/errors.js'
export { MemoryUpstreamOwnershipStore } from './stores/memory-upstream-ownership-store.js'
export {
  AgentExistsError, AgentLimitError, AgentVersionConflictError, DEFAULT_MAX_AGENTS, MAX_AGENT_VERSIONS_KEPT, MemoryAgentStore,
  type AgentAudit, type AgentDocument, type AgentHead, type AgentStore, type AgentVersion, type MemoryAgentStoreOptions, type StoredAgent
} from './stores/agent-store.js'
export { type TaskReservations } from './stores/task-reservations.js'
export { withSaveSignals, type TaskSaveSignals } from './stores/task-save-signals.js'
export { inAnswerLogSpan } from './stores/traced-conversations.js'
export { type UpstreamOwnershipStore } from './stores/upstream-ownership-store.js'
