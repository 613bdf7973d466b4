/**
 * a2a-converse/runtime: the conversation runtime behind the gateway's agents, as @a2a-js/sdk executors: knowledge
 * answers with citations and verdicts, routines with slots, typed calls, the human inbox, and the in-memory
 * stores. Loads MiniSearch and the YAML parser (documents' front matter); no web framework.
 */
export {
  KnowledgeBase, KnowledgeBaseError, type KnowledgeDocument, type KnowledgeChunk, type KnowledgeAnswer,
  type KnowledgeBaseOptions, type OutOfScopeTopic
} from './runtime/knowledge-base.js'
export { loadDocuments, loadKnowledgeBase, parseDocument, type KnowledgeDeclaration } from './runtime/load-documents.js'
export { knowledgeExecutor, answerTurn, buildReplyMessage, type KnowledgeExecutorOptions, type TurnReply } from './runtime/knowledge-executor.js'
export {
  createRoutineEngine, isTerminal, RoutineStateError, UnknownRoutineError,
  type RoutineEngine, type RoutineEngineOptions, type RoutineProgress, type InvokeResult, type FillResult, type RoutineCall
} from './runtime/routine-engine.js'
export { parseSlotInput, detectApproval, detectCancel, interpretRoutineMessage, toWireParts } from './runtime/slot-input.js'
export { createTriggerMatcher, recognizeRoutine } from './runtime/routine-triggers.js'
export { conversationExecutor, typedCallOf, type ConversationExecutorOptions, type TypedCall } from './runtime/conversation-executor.js'
export {
  createInbox, inboxEntry, type Inbox, type InboxOptions, type ConversationView, type HumanReplyResult, type InboxEntry,
  type InboxPage, type ConversationTrace, type TraceTurn
} from './runtime/inbox.js'
export { ConversationFeedStore } from './runtime/conversation-feed.js'
export {
  newConversationState, needsPersonReasons, ConversationStoreClosedError, NEEDS_PERSON_REASONS,
  type ConversationStore, type ConversationState, type ConversationTurn, type ConversationRoutine,
  type ConversationSummary, type ConversationListOptions, type NeedsPersonReason
} from './stores/conversation-store.js'
export { MemoryConversationStore, type MemoryConversationStoreOptions } from './stores/memory-conversation-store.js'
export {
  questionKey, newAnswers, MemoryAnswerLog, ANSWER_WINDOWS, type AnswerLog, type AnswerLogLimits, type AnswerRecord, type AnswerSeries,
  type AnswerBucket, type AnswerWindow, type CoverageCounts, type QuestionGroup, type QuestionGroupPage, type QuestionGroupQuery, type GroupCursor
} from './stores/answer-log.js'
export { BoundedMemoryTaskStore, type MemoryTaskStoreOptions } from './stores/memory-task-store.js'
export { tracedTaskStore } from './stores/traced-task-store.js'
export { MemoryTaskEventHub, type TaskEventHub, type TaskEventListener } from './events/task-event-hub.js'
