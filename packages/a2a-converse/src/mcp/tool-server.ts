/**
 * The low-level SDK `Server` of one agent's tools, as both serving paths build it (the SDK's handler per request,
 * the fast path once per era and identity): `tools/list` and `tools/call`, a call run through the A2A service.
 */
import type { ServerContext, Tool } from '@modelcontextprotocol/server'
import type { AjvJsonSchemaValidator as Validator } from '@modelcontextprotocol/server/validators/ajv'
import { ProtocolError, ProtocolErrorCode, Server } from '../peers/mcp.js'
import type { A2AService } from '../a2a/service.js'
import { askForInput, continuationOf, verifyRequestState } from './input-required.js'
import type { McpRequest } from './mcp-service.js'
import type { ServerIdentity } from './server-card.js'
import { firstRound, nextRound } from './tool-calls.js'

/** What an HTTP request holds from its start to its end: the agent's A2A service and tools as they were when it came. */
export interface HeldRequest {
  service: A2AService
  tools: Tool[]
}

/** What every Server of a service shares (given by the service's factory). */
export interface ToolServerWiring {
  /** One per service: a Server builds its own ajv instance (most of its construction cost) unless given one. */
  jsonSchemaValidator: Validator
  heldBy: (request: McpRequest) => HeldRequest
  /** Told of every tools/call by its tool name (a name the agent does not have: `unknown`). */
  countToolCall: (request: McpRequest, agentId: string, tool: string) => void
}

/**
 * A Server of the agent's tools; `requestOf` names the HTTP request a tool call belongs to; `modern`: it serves the
 * 2026-07-28 revision.
 */
export function buildToolServer (
  wiring: ToolServerWiring, identity: ServerIdentity, agentId: string, requestOf: (context: ServerContext) => McpRequest, modern: boolean
): Server {
  const { jsonSchemaValidator, heldBy, countToolCall } = wiring
  const server = new Server(identity, {
    capabilities: { tools: {} }, jsonSchemaValidator, requestState: { verify: verifyRequestState }
  })
  // The tools the HTTP request found when it came (a long-lived Server of the fast path serves many requests).
  server.setRequestHandler('tools/list', (_list, context) => ({ tools: heldBy(requestOf(context)).tools }))
  server.setRequestHandler('tools/call', async (call, context) => {
    const { name } = call.params
    const request = requestOf(context)
    const tool = heldBy(request).tools.find((candidate) => candidate.name === name)
    countToolCall(request, agentId, tool === undefined ? 'unknown' : name)
    if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 256)}`)
    const continuation = modern ? continuationOf(context) : undefined
    const result = continuation === undefined
      ? await firstRound(heldBy(request).service, request, name, call.params.arguments ?? {}, context)
      : await nextRound(heldBy(request).service, request, continuation, context)
    // A routine waiting for the user: ask the client for the answer, where the revision and the client can (not
    // again once the user declined: the call then answers with the task as it stands).
    const declined = continuation !== undefined && continuation.reply === undefined
    const asked = modern && !declined ? askForInput(result, context) : undefined
    return asked ?? server.projectCallToolResult(result, tool.outputSchema)
  })
  return server
}

/** Tells `onToolCall`: what it throws is logged, never the call's failure (it runs inside the call). */
export function toolCallCounter (onToolCall: (agentId: string, tool: string) => void): ToolServerWiring['countToolCall'] {
  return (request, agentId, tool) => {
    try {
      onToolCall(agentId, tool)
    } catch (error) {
      request.log?.error({ err: error }, 'the MCP onToolCall callback threw; the call is answered as if it had not')
    }
  }
}
