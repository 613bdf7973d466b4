/**
 * `a2a-converse/express`: the Express door (express 5.x is an optional peer dependency). Loads neither Fastify
 * nor the gateway.
 */
export {
  converseRouter,
  type ConverseRouter, type ConverseRouterOptions, type ConverseRouterAgentOptions, type ConverseLocals,
  type DecorateRouteOptions, type ExpressUrlOption
} from './express/converse-router.js'
export type { EndpointCapabilities } from './http/endpoint-options.js'
export type { A2ABackend, ServiceLogger } from './protocol/backend.js'
// What the `observer` option is told (metrics of one's own: docs/observability.md).
export type { CallObserver, CallRecord } from './telemetry/observer.js'
export type { AnswerSummary } from './telemetry/attributes.js'
