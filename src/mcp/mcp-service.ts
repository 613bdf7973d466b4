/**
 * The MCP door's core, framework-free: one MCP server per agent on the official SDK (low-level `Server`, Streamable
 * HTTP transport in stateless mode), whose tools run THROUGH the A2A service — a synthetic SendMessage with
 * `A2A-Version: 1.0` and `A2A-Extensions: <converse URI>` — so an MCP caller meets the same agent, state, checks and
 * envelope as an A2A caller, and a conversation started at one door continues at the other with its contextId.
 *
 * Tools: `ask_agent` (one conversation turn) and one tool per exposed routine, named by its toolName, whose
 * inputSchema is the very object the card's params.tools[] and the tools route serve (the low-level handlers send
 * it as declared; McpServer.registerTool would rewrite it). A routine tool call is the A2A door's typed routine call.
 *
 * Stateless: any instance behind a load balancer answers any request; all state is in the A2A side's stores. A plain
 * `tools/call` or `tools/list` is answered by one long-lived Server per agent through an in-process transport
 * (src/mcp/direct-exchange.ts, the fast path); every other request gets a new Server and Streamable HTTP transport
 * (what the SDK requires without sessions: a stateless transport refuses a second request). Replies are JSON
 * (`enableJsonResponse`), not SSE: a tool call answers once.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type JSONRPCRequest, type RequestId, type Tool
} from '@modelcontextprotocol/sdk/types.js'
import type { Caller, ServiceLogger } from '../protocol/backend.js'
import type { A2AService } from '../a2a/service.js'
import type { RequestBody } from '../bindings/jsonrpc/binding.js'
import { requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js'
import type { ConverseExtension, ResolvedAgent } from '../core/converse-extension.js'
import type { ConverseEnvelope } from '../core/envelope.js'
import { InvalidOptionError } from '../core/errors.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { errorResponse, type JsonRpcResponse } from '../protocol/errors.js'
import { connectDirectExchange, eligibleRequest, type DirectExchange, type ExchangeHeaders } from './direct-exchange.js'
import { serverIdentity } from './server-card.js'
import { traceHeadersOf } from '../telemetry/tracing.js'
import { TOOL_OUTPUT_SCHEMA, toolResultOf } from './tool-result.js'

export const ASK_AGENT = 'ask_agent'

/**
 * ask_agent's input: `message` is required and named so by the issue; the ids continue a conversation, and a
 * `messageId` makes a retry safe (the A2A retry rule: the same messageId with the same content gets the first reply).
 */
export const ASK_AGENT_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    message: Object.freeze({ type: 'string', minLength: 1, description: 'What to say to the agent (plain text).' }),
    contextId: Object.freeze({ type: 'string', minLength: 1, description: 'Continue this conversation (from an earlier reply, either door).' }),
    taskId: Object.freeze({ type: 'string', minLength: 1, description: 'Continue this task (a routine waiting for input or approval).' }),
    messageId: Object.freeze({
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: 'This turn\'s id (default: a new one). A call sent again with the same messageId and message (a lost reply) gets the first reply back; nothing runs twice.'
    })
  }),
  required: Object.freeze(['message']),
  additionalProperties: false
})

/**
 * The `_meta` key of a tools/call request whose value `{ contextId?, taskId?, messageId? }` makes a routine tool call
 * continue a conversation (so that `reentered` and `declined` can happen over MCP too) or be retried safely.
 * Reverse-DNS as MCP's _meta keys are.
 */
export const CONVERSATION_META = 'ai.radioso/conversation'

/** The SDK's type of a tool's input and output schema (the objects are frozen JSON Schema, served as they are). */
type ToolSchema = Tool['inputSchema']

/** What a routine tool call's invocation outcome means to the caller: the routine did not run. */
const NOT_RUN = new Set(['declined', 'not_started', 'unknown_tool'])

export interface McpServiceOptions {
  extension: ConverseExtension
  /** The A2A service answering each agent (the A2A endpoint's): the door serves these agents. */
  services: ReadonlyMap<string, A2AService>
  /** Largest accepted request body in bytes (the A2A endpoint's limit). */
  bodyLimit: number
  /**
   * Answer plain `tools/call` and `tools/list` requests through one long-lived Server per agent (src/mcp/direct-exchange.ts)
   * instead of a new Server and transport per request. Same replies; default true. `false` is for comparisons.
   */
  directToolCalls?: boolean
  /** Told of every tools/call by its tool name (a name the agent does not have: `unknown`), for metrics. */
  onToolCall?: (agentId: string, tool: string) => void
}

export interface McpRequest {
  agentId: string
  /** Node's request and response: the SDK's transport reads the body (unless parsed) and writes the reply. */
  request: IncomingMessage
  response: ServerResponse
  /**
   * The body as the door read it (its limit, JSON.parse): parsed JSON goes to the transport as is (reading the
   * stream again through Web streams costs more than the rest of a tool call); too large or not JSON is answered
   * here with the transport's own errors. Absent, or of another media type: the transport reads the stream and
   * answers (415 for a media type other than JSON).
   */
  body?: RequestBody
  /** The agent's card as this request sees it (its MCP URL and identity go into serverInfo); read only when needed. */
  cardOf: () => Record<string, unknown>
  /**
   * Who is calling, when the door has authenticated the request itself; handed to the A2A service with every tool
   * call. Otherwise the A2A service authenticates the request's headers once (an agent that requires a caller:
   * 401 or 503 for the whole HTTP request, as at the A2A door).
   */
  caller?: Caller
  log?: ServiceLogger
  /** The client's address as the door sees it, handed to every A2A call (a walk-in's key for per-caller bounds). */
  clientAddress?: string
}

export interface McpService {
  /** Whether an agent is served (doors answer 404 before anything else otherwise). */
  serves (agentId: string): boolean
  /** Answers one HTTP request of the MCP endpoint (POST; other methods get 405). Never rejects. */
  handle (request: McpRequest): Promise<void>
}

/** The tools of one agent, built once: ask_agent, then the routine tools in declaration order. */
function toolsOf (agent: ResolvedAgent): Tool[] {
  return [
    {
      name: ASK_AGENT,
      title: 'Ask the agent',
      description: 'Send one message to the agent and get its reply, with the converse envelope (coverage, ' +
        'citations, ownership, routine status) and the contextId/taskId to continue the conversation.',
      inputSchema: ASK_AGENT_INPUT_SCHEMA as unknown as ToolSchema,
      outputSchema: TOOL_OUTPUT_SCHEMA as unknown as ToolSchema
    },
    ...agent.tools.map((tool) => ({
      name: tool.toolName,
      description: tool.description,
      // The very object of the card and the tools route.
      inputSchema: tool.inputSchema as unknown as ToolSchema,
      outputSchema: TOOL_OUTPUT_SCHEMA as unknown as ToolSchema
    }))
  ]
}

export function createMcpService (options: McpServiceOptions): McpService {
  // A Server builds its own ajv instance (and its formats) unless given one: most of its construction cost, per
  // request in stateless mode. One per service; the door's tools never ask the client for anything it validates.
  const jsonSchemaValidator = new AjvJsonSchemaValidator()
  const { extension, services, bodyLimit } = options
  const direct = options.directToolCalls ?? true
  if (typeof direct !== 'boolean') throw new InvalidOptionError('directToolCalls', 'must be a boolean')
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  const tools = new Map<string, Tool[]>()
  for (const [agentId, agent] of extension.agents) {
    if (!services.has(agentId)) continue
    const index = agent.tools.findIndex((tool) => tool.toolName === ASK_AGENT)
    if (index !== -1) throw new InvalidOptionError(`agents "${agentId}" routines`, `toolName "${ASK_AGENT}" is the MCP door's own tool: rename the routine's toolName`)
    tools.set(agentId, toolsOf(agent))
  }

  /** Runs one SendMessage through the A2A service, as an A2A caller activating the extension would send it. */
  async function sendMessage (request: McpRequest, message: Record<string, unknown>, signal: AbortSignal): Promise<JsonRpcResponse> {
    const result = await (services.get(request.agentId) as A2AService).call({
      agentId: request.agentId,
      binding: 'mcp',
      // The HTTP request's trace context: the turn's server span joins the MCP client's trace.
      headers: { ...traceHeadersOf(request.request.headers), 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI, 'content-type': 'application/json' },
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', extensions: [CONVERSE_EXTENSION_URI], ...message } },
      signal,
      caller: request.caller,
      log: request.log,
      doorRequest: request.request,
      clientAddress: request.clientAddress
    })
    // SendMessage is not a streaming method: a value or an error, read as the JSON-RPC response it would be.
    return result.kind === 'error' ? { jsonrpc: '2.0', id: 1, error: result.error } : { jsonrpc: '2.0', id: 1, result: (result as { value: unknown }).value }
  }

  async function callTool (
    request: McpRequest, name: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, signal: AbortSignal
  ): Promise<CallToolResult> {
    const known = name === ASK_AGENT || (tools.get(request.agentId) as Tool[]).some((tool) => tool.name === name)
    options.onToolCall?.(request.agentId, known ? name : 'unknown')
    if (name === ASK_AGENT) {
      const { message } = args
      if (typeof message !== 'string' || message === '') return argumentError(ASK_AGENT, 'message must be a non-empty string')
      const ids = idsOf(args)
      if (typeof ids === 'string') return argumentError(ASK_AGENT, ids)
      return toolResultOf(await sendMessage(request, { parts: [{ text: message }], ...ids }, signal))
    }
    if (!known) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 256)}`)
    }
    // A routine tool's arguments are the routine's slots only (its schema is the card's): the conversation to
    // continue, if any, travels in the request's _meta.
    const continued = meta?.[CONVERSATION_META]
    const ids = continued === undefined ? {} : idsOf(continued)
    if (typeof ids === 'string') return argumentError(name, `_meta["${CONVERSATION_META}"].${ids}`)
    const call = { toolName: name, arguments: args }
    const response = await sendMessage(request, {
      parts: [{ data: call }],
      metadata: { [CONVERSE_EXTENSION_URI]: { call } },
      ...ids
    }, signal)
    return toolResultOf(response, (envelope: ConverseEnvelope) => NOT_RUN.has(envelope.invocation?.outcome as string))
  }

  /** A Server of the agent's tools; `requestOf` names the HTTP request a tool call belongs to. */
  function buildServer (request: McpRequest, requestOf: (requestId: RequestId) => McpRequest): Server {
    const server = new Server(serverIdentity(request.cardOf()), { capabilities: { tools: {} }, jsonSchemaValidator })
    const agentTools = tools.get(request.agentId) as Tool[]
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: agentTools }))
    server.setRequestHandler(CallToolRequestSchema, (call, extra) =>
      callTool(requestOf(extra.requestId), call.params.name, call.params.arguments ?? {}, call.params._meta, extra.signal))
    return server
  }

  /** The agent's long-lived Server on the fast path, connected on first use (its serverInfo is never sent: no initialize). */
  const exchanges = new Map<string, Promise<DirectExchange<McpRequest>>>()
  function exchangeFor (request: McpRequest): Promise<DirectExchange<McpRequest>> {
    let exchange = exchanges.get(request.agentId)
    if (exchange === undefined) {
      let connected: DirectExchange<McpRequest> | undefined
      exchange = connectDirectExchange<McpRequest>(buildServer(request, (requestId) => (connected as DirectExchange<McpRequest>).contextOf(requestId)))
        .then((value) => (connected = value))
      exchanges.set(request.agentId, exchange)
    }
    return exchange
  }

  /** The fast path: the reply the stateless transport would write, without the transport. */
  async function answerDirectly (request: McpRequest, call: JSONRPCRequest): Promise<void> {
    const { response } = request
    const exchange = (await exchangeFor(request)).exchange(call, request)
    // A client gone before its reply: the tool call is cancelled, so its A2A call stops waiting.
    response.once('close', () => { if (!response.writableFinished) exchange.cancel() })
    const reply = await exchange.reply
    if (reply === undefined) return
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(reply))
  }

  async function handle (request: McpRequest): Promise<void> {
    const { response } = request
    if (request.request.method !== 'POST') {
      // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE), as the SDK's stateless example answers.
      jsonRpcError(response, 405, -32000, 'Method not allowed.', { allow: 'POST' })
      return
    }
    // Authenticated once per HTTP request, as the A2A door would (a door that knows the caller passes it instead).
    if (request.caller === undefined) {
      const access = await (services.get(request.agentId) as A2AService).authenticate(request.agentId, request.request.headers, request.log)
      if (access.kind === 'refused') {
        response.writeHead(access.status, { 'content-type': 'application/json; charset=utf-8', ...access.headers })
        // 401 / 503 (the door answered an unknown agent before): the A2A door's JSON-RPC body.
        response.end(JSON.stringify(errorResponse(null, access.error)))
        return
      }
      request = { ...request, caller: access.caller }
    }
    const body = request.body
    if (body?.kind === 'too_large') return jsonRpcError(response, 413, -32000, requestBodyTooLargeMessage(body.limit))
    if (body?.kind === 'invalid_json') return jsonRpcError(response, 400, -32700, 'Parse error: Invalid JSON')
    if (direct) {
      const call = body?.kind === 'json' ? eligibleRequest(request.request.method, request.request.headers as ExchangeHeaders, body.value) : undefined
      if (call !== undefined) return await answerDirectly(request, call)
    }
    const fixed = request
    const server = buildServer(request, () => fixed)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: bodyLimit })
    // A client gone before its reply: closing the transport aborts the tool call still running, so its A2A call
    // stops waiting. After a reply there is nothing to stop (no timer, no stream): the objects are simply dropped,
    // which spares a close that builds an McpError per request.
    response.once('close', () => {
      if (!response.writableFinished) server.close().then(undefined, closeFailed)
    })
    try {
      await server.connect(transport)
      await transport.handleRequest(request.request, response, body?.kind === 'json' ? body.value : undefined)
      /* c8 ignore start -- the SDK answers every malformed request itself; this guards against its own failure */
    } catch (error) {
      request.log?.error({ err: error }, 'MCP request failed')
      if (!response.headersSent) jsonRpcError(response, 500, -32603, 'Internal error')
    }
    /* c8 ignore stop */
  }

  return { serves: (agentId) => tools.has(agentId), handle }
}

/* c8 ignore next 2 -- closing an in-memory server and transport does not reject; nothing to do if it did */
function closeFailed (): void {}

/** An HTTP error with a JSON-RPC error body of id null, the shape (and, for body errors, the text) of the transport's. */
function jsonRpcError (response: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...headers, 'content-type': 'application/json' })
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/** `{ contextId?, taskId?, messageId? }` from an object, or what is wrong with it. */
function idsOf (value: unknown): { contextId?: string, taskId?: string, messageId?: string } | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object with contextId, taskId and/or messageId'
  const ids: { contextId?: string, taskId?: string, messageId?: string } = {}
  for (const key of ['contextId', 'taskId', 'messageId'] as const) {
    const id = (value as Record<string, unknown>)[key]
    if (id === undefined) continue
    if (typeof id !== 'string' || id === '') return `${key} must be a non-empty string`
    ids[key] = id
  }
  return ids
}

function argumentError (tool: string, text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `Invalid arguments for ${tool}: ${text}` }] }
}
