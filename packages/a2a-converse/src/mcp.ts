/**
 * a2a-converse/mcp: the MCP door (Streamable HTTP, every revision the MCP SDK speaks) to the same agents the A2A doors
 * serve: `mcpEndpoint`, a Fastify plugin with the agents' MCP server cards, and `createMcpService` for a door of your
 * own (the Express router is one). Needs `@modelcontextprotocol/server` (v2), an optional peer dependency.
 */
export { mcpEndpoint, type McpEndpointOptions } from './fastify/mcp-endpoint.js'
export {
  createMcpService, ASK_AGENT, ASK_AGENT_INPUT_SCHEMA, DEFAULT_MAX_BATCH,
  type McpService, type McpServiceOptions, type McpRequest
} from './mcp/mcp-service.js'
