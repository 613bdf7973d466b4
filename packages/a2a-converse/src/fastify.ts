/**
 * a2a-converse/fastify: the Fastify door. `converse` decorates your own JSON-RPC route (and serves the cards and
 * the tools route); `a2aEndpoint` is a complete A2A 1.0 JSON-RPC endpoint for any @a2a-js/sdk AgentExecutor;
 * the MCP door is a2a-converse/mcp (it needs the MCP SDK, an optional peer).
 */
// Each name lives in one entry: an agent's options are the root's (ConverseAgentOptions, AgentCardInput), what an
// `observer` is told is a2a-converse/service's (CallObserver, CallRecord, AnswerSummary), the event hubs are
// a2a-converse/runtime's.
export {
  converse, type ConversePluginOptions, type ConverseApi, type ConverseRequestState, type ConverseRouteConfig, type UrlOption
} from './fastify/converse-plugin.js'
export {
  a2aEndpoint, InvalidJsonBodyError, ACCEPTED_CONTENT_TYPES,
  type A2AEndpointOptions, type A2AEndpointAgentOptions, type A2AEndpointCapabilities
} from './fastify/a2a-endpoint.js'
// What `a2aEndpoint`'s `events` option takes (a2a-converse/runtime's MemoryTaskEventHub is one).
export type { TaskEventSource, TaskStreamEvent } from './backends/local/task-event-relay.js'
