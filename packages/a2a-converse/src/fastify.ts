/**
 * a2a-converse/fastify: the Fastify door. `converse` decorates your own JSON-RPC route (and serves the cards and
 * the tools route); `a2aEndpoint` is a complete A2A 1.0 JSON-RPC endpoint for any @a2a-js/sdk AgentExecutor;
 * the MCP door is a2a-converse/mcp (it needs the MCP SDK, an optional peer).
 */
export {
  converse, type ConversePluginOptions, type ConverseAgentOptions, type AgentCardInput, type ConverseApi,
  type ConverseRequestState, type ConverseRouteConfig, type ResolvedAgent, type UrlOption
} from './fastify/converse-plugin.js'
export {
  a2aEndpoint, InvalidJsonBodyError, ACCEPTED_CONTENT_TYPES,
  type A2AEndpointOptions, type A2AEndpointAgentOptions, type A2AEndpointCapabilities
} from './fastify/a2a-endpoint.js'
// What the `observer` option is told (metrics of one's own: docs/observability.md).
export type { CallObserver, CallRecord } from './telemetry/observer.js'
export type { AnswerSummary } from './telemetry/attributes.js'
// What `a2aEndpoint`'s `events` option takes.
export type { TaskEventSource, TaskStreamEvent } from './backends/local/task-event-relay.js'
export { MemoryTaskEventHub, type TaskEventHub, type TaskEventListener } from './events/task-event-hub.js'
