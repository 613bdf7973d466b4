/** The `a2aEndpoint` plugin's options: the doors' shared endpoint options (packages/a2a-converse/src/http/endpoint-options.ts) with Fastify's request. */
import type { FastifyRequest } from 'fastify'
import type { EndpointAgentOptions, EndpointCapabilities, EndpointOptions } from '../http/endpoint-options.js'

export type A2AEndpointCapabilities = EndpointCapabilities
export type A2AEndpointAgentOptions = EndpointAgentOptions<FastifyRequest>
export type A2AEndpointOptions = EndpointOptions<FastifyRequest>
