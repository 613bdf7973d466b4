/** Public API of a2a-converse. What is exported here is what the README documents. */
export { CONVERSE_EXTENSION_URI, CONVERSE_EXTENSION_DESCRIPTION, EXTENSIONS_HEADER } from './core/uri.js'
export { negotiate, parseExtensionsHeader, formatExtensionsHeader, type Negotiation } from './core/negotiate.js'
export * from './core/envelope.js'
export { envelopeSchema, validateEnvelope } from './core/envelope-schema.js'
export { normalizeEnvelope, type NormalizedEnvelope } from './core/normalize-envelope.js'
export {
  attachedEnvelopeProvider, functionEnvelopeProvider, staticEnvelopeProvider,
  type EnvelopeContext, type EnvelopeProvider
} from './core/envelope-provider.js'
export {
  attachEnvelope, stripEnvelope, stripResult, createEnvelopeDecorator, carriesEnvelopes,
  type EnvelopeDecorator, type EnvelopeLogger, type TurnContext, type DecoratorOptions
} from './core/decorate.js'
export { stringifyWithKnownEnvelopes } from './core/envelope-json.js'
export {
  validateRoutineDeclarations, TOOL_NAME_PATTERN,
  type RoutineDeclaration, type SlotDeclaration, type RoutineStepDeclaration
} from './core/routine-declarations.js'
export { buildToolDescriptors, routineInputSchema, type ToolDescriptor, type ToolInputSchema } from './core/tool-descriptors.js'
export {
  augmentAgentCard, converseExtensionEntry, converseSkills, ASK_AGENT_SKILL,
  type AgentExtensionEntry, type AgentSkillEntry, type CardLike
} from './core/card.js'
export { ConverseError, RoutineDeclarationError, InvalidOptionError, ProviderTimeoutError } from './core/errors.js'
export type * from './core/wire.js'
export {
  converse, type ConversePluginOptions, type ConverseAgentOptions, type AgentCardInput, type ConverseApi,
  type ConverseRequestState, type ConverseRouteConfig, type ResolvedAgent, type UrlOption
} from './fastify/converse-plugin.js'
export {
  a2aEndpoint, InvalidJsonBodyError, ACCEPTED_CONTENT_TYPES,
  type A2AEndpointOptions, type A2AEndpointAgentOptions, type A2AEndpointCapabilities
} from './fastify/a2a-endpoint.js'
export * as a2aErrors from './jsonrpc/errors.js'
export type { JsonRpcError, JsonRpcErrorResponse, JsonRpcResponse, JsonRpcId, FieldViolation } from './jsonrpc/errors.js'
export { A2A_METHODS, STREAMING_METHODS, isA2AMethod, type A2AMethod } from './jsonrpc/methods.js'
export { validateParams, paramsSchema, isRfc3339Timestamp } from './jsonrpc/params.js'
export { checkEnvelope, checkRequest, type AgentFacts, type RequestFacts, type CheckedRequest, type CheckResult } from './jsonrpc/check-request.js'
export { A2A_VERSION_HEADER, SUPPORTED_A2A_VERSIONS, requestedVersion, checkVersion } from './jsonrpc/version.js'
export { A2ADispatcher, type DispatcherOptions, type CallOptions, type OpenedStream } from './jsonrpc/dispatch.js'
export { relayTaskEvents, type TaskEventSource, type TaskStreamEvent, type RelayedStream } from './jsonrpc/task-event-relay.js'
export { MemoryTaskEventHub, type TaskEventHub, type TaskEventListener } from './events/task-event-hub.js'
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
export { createInbox, type Inbox, type InboxOptions, type ConversationView, type HumanReplyResult } from './runtime/inbox.js'
export {
  newConversationState, ConversationStoreClosedError,
  type ConversationStore, type ConversationState, type ConversationTurn, type ConversationRoutine
} from './stores/conversation-store.js'
export { MemoryConversationStore, type MemoryConversationStoreOptions } from './stores/memory-conversation-store.js'
export { buildGateway, type GatewayOptions } from './gateway/app.js'
export { loadConfig, ConfigError, type GatewayConfig } from './gateway/config.js'
export { loadAgentDefinitions, AgentsFileError, type AgentDefinition } from './gateway/agent-definitions.js'
export { builtInExecutors, type ExecutorFactory, type ExecutorServices } from './gateway/executors.js'
export { openGatewayState, memoryState, type GatewayState } from './gateway/state.js'
