/**
 * The MCP door's core, framework-free: one MCP server per agent on the official v2 server SDK
 * (`@modelcontextprotocol/server`: the low-level `Server`, served by `createMcpHandler`), whose tools run THROUGH
 * the A2A service — a synthetic SendMessage with `A2A-Version: 1.0` and `A2A-Extensions: <converse URI>` — so an
 * MCP caller meets the same agent, state, checks and envelope as an A2A caller, and a conversation started at one
 * door continues at the other with its contextId.
 *
 * Tools: `ask_agent` (one conversation turn) and one tool per exposed routine, named by its toolName, whose
 * inputSchema is the very object the card's params.tools[] and the tools route serve (the low-level handlers send
 * it as declared; McpServer.registerTool would rewrite it). A routine tool call is the A2A door's typed routine call.
 *
 * Revisions: `createMcpHandler` answers the 2026-07-28 revision (per-request `_meta` envelope, `server/discover`)
 * and, through its stateless legacy leg, every older revision the SDK accepts (`initialize`, 2025-11-25 …
 * 2024-10-07). Stateless either way: each HTTP request gets a new `Server` from one factory, so any instance behind
 * a load balancer answers any request; all state is in the A2A side's stores.
 *
 * A routine waiting for the user's input (the A2A task in TASK_STATE_INPUT_REQUIRED) is, on 2026-07-28 and for a
 * client that declares elicitation, an `input_required` result: the agent's question as a form elicitation whose
 * answer the client sends back with the same call, which continues the task (packages/a2a-converse/src/mcp/input-required.ts).
 * `_meta.traceparent` / `tracestate` (W3C trace context, SEP-414) go to the A2A call as its headers of those names.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { JSONRPCRequest, ServerContext, Tool } from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator, createMcpHandler, ProtocolError, ProtocolErrorCode, Server } from '../peers/mcp.js'
import type { Caller, ServiceLogger } from '../protocol/backend.js'
import type { A2AService } from '../a2a/service.js'
import { unknownAgentBody, type RequestBody } from '../bindings/jsonrpc/binding.js'
import type { ConverseExtension, ResolvedAgent } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { errorResponse, rateLimited } from '../protocol/errors.js'
import { askForInput, continuationOf, verifyRequestState } from './input-required.js'
import {
  connectDirectExchange, eligibleLegacyRequest, eligibleRequest, envelopeRefused, openLegacyStream, type DirectExchange, type Exchange, type ExchangeHeaders
} from './direct-exchange.js'
import { serverIdentity, type ServerIdentity } from './server-card.js'
import { TOOL_OUTPUT_SCHEMA } from './tool-result.js'
import { webRequestOf, writeWebResponse } from './web-exchange.js'
import { ASK_AGENT, firstRound, nextRound } from './tool-calls.js'

export { ASK_AGENT, CONVERSATION_META } from './tool-calls.js'

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

/** The SDK's type of a tool's input and output schema (the objects are frozen JSON Schema, served as they are). */
type ToolSchema = Tool['inputSchema']

/** A JSON-RPC batch's messages at most, by default (maxBatch); the SDK's own bound is 100. */
export const DEFAULT_MAX_BATCH = 10
const SDK_MAX_BATCH = 100

/** Long-lived Servers of the fast path at most, per era (one per agent and public base URL). */
const MAX_PINNED = 64

export interface McpServiceOptions {
  extension: ConverseExtension
  /** The A2A service answering each agent (the A2A endpoint's): the door serves these agents. */
  services: ReadonlyMap<string, A2AService>
  /** Largest accepted request body in bytes (the A2A endpoint's limit). */
  bodyLimit: number
  /**
   * Answer plain `tools/call` and `tools/list` requests (2026-07-28, and the older revisions' as the v1 client sends
   * them) through one long-lived Server per agent and era (packages/a2a-converse/src/mcp/direct-exchange.ts) instead of the SDK's new
   * Server per request. Same replies; default true. `false` is for comparisons.
   */
  directToolCalls?: boolean
  /** Told of every tools/call by its tool name (a name the agent does not have: `unknown`), for metrics. */
  onToolCall?: (agentId: string, tool: string) => void
  /** Messages in one JSON-RPC batch at most (1 to 100; default DEFAULT_MAX_BATCH); longer: HTTP 400 -32600, none run. */
  maxBatch?: number
}

export interface McpRequest {
  agentId: string
  /** Node's request and response: the door answers on them. */
  request: IncomingMessage
  response: ServerResponse
  /**
   * The body as the door read it (its limit, JSON.parse): parsed JSON goes to the SDK's handler as is; too large or
   * not JSON is answered here with the SDK's own errors. Absent, or of another media type: the handler answers
   * (415 for a POST of a media type other than JSON).
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
  /**
   * Asked before a JSON-RPC batch (an array body) runs, with its number of messages: a refusal is answered HTTP 429
   * (Retry-After, JSON-RPC -32000 RATE_LIMITED) and none of them runs. The door's rate limit.
   */
  admitBatch?: (messages: number) => Promise<{ retryAfterSec: number } | undefined>
}

export interface McpService {
  /** Whether an agent is served (doors answer 404 before anything else otherwise). */
  serves (agentId: string): boolean
  /** Answers one HTTP request of the MCP endpoint (POST; other methods get 405). Never rejects. */
  handle (request: McpRequest): Promise<void>
}

/** Whether a routine of the agent takes the MCP door's own tool name. */
function ownsAskAgent (agent: ResolvedAgent): boolean {
  return agent.tools.some((tool) => tool.toolName === ASK_AGENT)
}

/** The tools of one agent: ask_agent, then the routine tools in declaration order. */
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
  // request in stateless mode. One per service.
  const jsonSchemaValidator = new AjvJsonSchemaValidator()
  const { extension, services, bodyLimit } = options
  const direct = options.directToolCalls ?? true
  if (typeof direct !== 'boolean') throw new InvalidOptionError('directToolCalls', 'must be a boolean')
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  const maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1 || maxBatch > SDK_MAX_BATCH) throw new InvalidOptionError('maxBatch', `must be an integer from 1 to ${SDK_MAX_BATCH}`)
  for (const [agentId, agent] of extension.agents) {
    if (services.has(agentId) && ownsAskAgent(agent)) {
      throw new InvalidOptionError(`agents "${agentId}" routines`, `toolName "${ASK_AGENT}" is the MCP door's own tool: rename the routine's toolName`)
    }
  }
  // An agent's tools, built once per declaration: an agent put or replaced at runtime (the extension's putAgent) is a
  // new declaration, so its tools follow at once, and a removed one's go with it (nothing here keeps it alive).
  const built = new WeakMap<ResolvedAgent, Tool[]>()
  /** The tools of an agent served here now; undefined: not served (one put at runtime whose routine takes ask_agent's name is not). */
  function toolsFor (agentId: string): Tool[] | undefined {
    const agent = extension.agents.get(agentId)
    if (agent === undefined || !services.has(agentId)) return undefined
    let tools = built.get(agent)
    if (tools === undefined) {
      if (ownsAskAgent(agent)) return undefined
      built.set(agent, tools = toolsOf(agent))
    }
    return tools
  }

  /**
   * A Server of the agent's tools; `requestOf` names the HTTP request a tool call belongs to; `modern`: it serves the
   * 2026-07-28 revision.
   */
  /** Tells `onToolCall`: what it throws is logged, never the call's failure (it runs inside the call). */
  function countToolCall (request: McpRequest, agentId: string, tool: string): void {
    try {
      options.onToolCall?.(agentId, tool)
    } catch (error) {
      request.log?.error({ err: error }, 'the MCP onToolCall callback threw; the call is answered as if it had not')
    }
  }

  function buildServer (identity: ServerIdentity, agentId: string, requestOf: (context: ServerContext) => McpRequest, modern: boolean): Server {
    const server = new Server(identity, {
      capabilities: { tools: {} }, jsonSchemaValidator, requestState: { verify: verifyRequestState }
    })
    // Read per request: a long-lived Server of the fast path answers with the agent's tools as they are now.
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

  /** One handler for every agent: the SDK's stateless serving of 2026-07-28 and, per request, of the older revisions. */
  const requests = new WeakMap<Request, McpRequest>()
  const handler = createMcpHandler((context) => {
    const request = requests.get(context.requestInfo as Request) as McpRequest
    return buildServer(serverIdentity(request.cardOf()), request.agentId, () => request, context.era === 'modern')
  }, { maxRequestBodySize: bodyLimit, onerror: () => {} })

  /**
   * The fast path's long-lived Servers, one per era and server identity (an agent as a card names it: a card per
   * public base URL), built on first use. At most MAX_PINNED per era: a further identity (a Host header the door has
   * not seen) is answered by the SDK's handler, the same reply.
   */
  const exchanges = { modern: new Map<string, DirectExchange<McpRequest>>(), legacy: new Map<string, DirectExchange<McpRequest>>() }
  function exchangeFor (request: McpRequest, era: 'modern' | 'legacy'): DirectExchange<McpRequest> | undefined {
    const pinned = exchanges[era]
    const identity = serverIdentity(request.cardOf())
    const key = JSON.stringify(identity)
    let exchange = pinned.get(key)
    if (exchange === undefined && pinned.size < MAX_PINNED) {
      const connected: DirectExchange<McpRequest> = connectDirectExchange<McpRequest>(() =>
        buildServer(identity, request.agentId, (context) => connected.contextOf(context.mcpReq.id), era === 'modern'), era)
      exchange = connected
      pinned.set(key, exchange)
    }
    return exchange
  }

  /**
   * Runs `call` on the era's long-lived Server; a client gone before its reply cancels it, so its A2A call stops
   * waiting. Undefined: no Server for this identity (MAX_PINNED reached), the SDK's handler answers.
   */
  function exchangeOn (request: McpRequest, call: JSONRPCRequest, era: 'modern' | 'legacy'): Exchange | undefined {
    const exchange = exchangeFor(request, era)?.exchange(call, request)
    const { response } = request
    if (exchange !== undefined) response.once('close', () => { if (!response.writableFinished) exchange.cancel() })
    return exchange
  }

  /** The fast path: the reply the SDK's handler would write, without a new Server. False: not taken. */
  async function answerDirectly (request: McpRequest, call: JSONRPCRequest): Promise<boolean> {
    const exchange = exchangeOn(request, call, 'modern')
    if (exchange === undefined) return false
    const reply = await exchange.reply
    if (reply === undefined) return true
    if (envelopeRefused(reply)) return false
    const text = JSON.stringify(reply)
    request.response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    request.response.end(text)
    return true
  }

  /** The legacy fast path: the SSE reply the SDK's stateless legacy leg would write, without a new Server. False: not taken. */
  async function answerInLegacyStream (request: McpRequest, call: JSONRPCRequest): Promise<boolean> {
    const exchange = exchangeOn(request, call, 'legacy')
    if (exchange === undefined) return false
    const stream = openLegacyStream(request.response)
    stream.end(await exchange.reply)
    return true
  }

  /** Whether a batch of `messages` was refused (and answered): longer than maxBatch, or not admitted. */
  async function batchRefused (request: McpRequest, messages: number): Promise<boolean> {
    const { response } = request
    // The SDK's own refusal past its bound (HTTP 400, -32600), at ours.
    if (messages > maxBatch) {
      jsonRpcError(response, 400, -32600, `Invalid Request: Batch must not exceed ${maxBatch} messages`)
      return true
    }
    const refusal = await request.admitBatch?.(messages)
    if (refusal === undefined) return false
    response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(refusal.retryAfterSec) })
    response.end(JSON.stringify(errorResponse(null, rateLimited(refusal.retryAfterSec))))
    return true
  }

  /**
   * What an HTTP request holds from its start to its end: the agent's A2A service, tools and card as they were when
   * it came (an agent changed or removed at runtime meanwhile: the next request sees it).
   */
  const held = new WeakMap<McpRequest, { service: A2AService, tools: Tool[] }>()
  const heldBy = (request: McpRequest): { service: A2AService, tools: Tool[] } => held.get(request) as { service: A2AService, tools: Tool[] }

  async function handle (given: McpRequest): Promise<void> {
    const { response } = given
    const tools = toolsFor(given.agentId)
    // Removed since the door looked (an agent changed at runtime): what the door answers an unknown agent.
    if (tools === undefined) return notFound(response, given.agentId)
    const service = services.get(given.agentId) as A2AService
    const card = given.cardOf()
    let request: McpRequest = { ...given, cardOf: () => card }
    // Authenticated once per HTTP request, as the A2A door would (a door that knows the caller passes it instead).
    // GET and DELETE are answered 405 by the SDK whoever asks (no sessions, no standalone stream).
    if (request.caller === undefined && request.request.method === 'POST') {
      const access = await service.authenticate(request.agentId, request.request.headers, request.log)
      if (access.kind === 'refused') {
        response.writeHead(access.status, { 'content-type': 'application/json; charset=utf-8', ...access.headers })
        // 401 / 503 (the door answered an unknown agent before): the A2A door's JSON-RPC body.
        response.end(JSON.stringify(errorResponse(null, access.error)))
        return
      }
      request = { ...request, caller: access.caller }
    }
    held.set(request, { service, tools })
    const body = request.body
    if (body?.kind === 'too_large') return jsonRpcError(response, 413, -32000, `Payload Too Large: Request body must not exceed ${body.limit} bytes`)
    if (body?.kind === 'invalid_json') return jsonRpcError(response, 400, -32700, 'Parse error: Invalid JSON')
    // A batch (the older revisions' JSON-RPC array) is bounded, and each of its messages counted, before any runs.
    if (body?.kind === 'json' && Array.isArray(body.value) && await batchRefused(request, body.value.length)) return
    if (direct && body?.kind === 'json') {
      const { method, headers } = request.request
      const call = eligibleRequest(method, headers as ExchangeHeaders, body.value)
      if (call !== undefined) {
        if (await answerDirectly(request, call)) return
      } else {
        const legacyCall = eligibleLegacyRequest(method, headers as ExchangeHeaders, body.value)
        if (legacyCall !== undefined && await answerInLegacyStream(request, legacyCall)) return
      }
    }
    try {
      const webRequest = webRequestOf(request.request, response)
      requests.set(webRequest, request)
      const answer = await handler.fetch(webRequest, body?.kind === 'json' ? { parsedBody: body.value } : undefined)
      // 499: the SDK's word for a client gone before its reply; there is no one to write to.
      if (answer.status === 499 || response.destroyed) return
      await writeWebResponse(answer, response)
      /* c8 ignore start -- the SDK's handler answers every failure itself (500); this guards against its own failure */
    } catch (error) {
      request.log?.error({ err: error }, 'MCP request failed')
      if (!response.headersSent) jsonRpcError(response, 500, -32603, 'Internal error')
    }
    /* c8 ignore stop */
  }

  return { serves: (agentId) => toolsFor(agentId) !== undefined, handle }
}

/** 404 with the body the doors answer an unknown agent with. */
function notFound (response: ServerResponse, agentId: string): void {
  response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
  response.end(JSON.stringify(unknownAgentBody(agentId)))
}

/** An HTTP error with a JSON-RPC error body of id null, the shape (and, for body errors, the text) of the SDK's. */
function jsonRpcError (response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}
