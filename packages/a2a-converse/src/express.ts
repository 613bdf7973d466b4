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
// A backend, a logger and what an `observer` is told are a2a-converse/service's names (each name lives in one entry).
