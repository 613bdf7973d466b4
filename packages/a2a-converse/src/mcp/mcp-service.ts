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
import { AjvJsonSchemaValidator, createMcpHandler } from '../peers/mcp.js'
import type { Caller, ServiceLogger } from '../protocol/backend.js'
import type { A2AService } from '../a2a/service.js'
import type { RequestBody } from '../bindings/jsonrpc/binding.js'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { createFastPath, type BuildServer } from './fast-path.js'
import { accessRefused, bodyRefused, jsonRpcError, notFound } from './http-refusals.js'
import { agentTools, checkAskAgentFree } from './mcp-tools.js'
import { serverIdentity } from './server-card.js'
import { buildToolServer, toolCallCounter, type HeldRequest } from './tool-server.js'
import { webRequestOf, writeWebResponse } from './web-exchange.js'

export { ASK_AGENT, CONVERSATION_META } from './tool-calls.js'
export { ASK_AGENT_INPUT_SCHEMA } from './mcp-tools.js'

/** A JSON-RPC batch's messages at most, by default (maxBatch); the SDK's own bound is 100. */
export const DEFAULT_MAX_BATCH = 10
const SDK_MAX_BATCH = 100

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

/** The options' checks, at construction: the direct flag, the body limit, the batch bound, ask_agent's name free. */
function checkOptions (options: McpServiceOptions): { direct: boolean, maxBatch: number } {
  const direct = options.directToolCalls ?? true
  if (typeof direct !== 'boolean') throw new InvalidOptionError('directToolCalls', 'must be a boolean')
  const { bodyLimit } = options
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw new InvalidOptionError('bodyLimit', 'must be a positive integer (bytes)')
  const maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1 || maxBatch > SDK_MAX_BATCH) throw new InvalidOptionError('maxBatch', `must be an integer from 1 to ${SDK_MAX_BATCH}`)
  checkAskAgentFree(options.extension, options.services)
  return { direct, maxBatch }
}

export function createMcpService (options: McpServiceOptions): McpService {
  const { extension, services, bodyLimit } = options
  const { direct, maxBatch } = checkOptions(options)
  const toolsFor = agentTools(extension, services)

  /**
   * What an HTTP request holds from its start to its end: the agent's A2A service, tools and card as they were when
   * it came (an agent changed or removed at runtime meanwhile: the next request sees it).
   */
  const held = new WeakMap<McpRequest, HeldRequest>()
  const wiring = { jsonSchemaValidator: new AjvJsonSchemaValidator(), heldBy: (request: McpRequest) => held.get(request) as HeldRequest, countToolCall: toolCallCounter((agentId, tool) => options.onToolCall?.(agentId, tool)) }
  const buildServer: BuildServer = (identity, agentId, requestOf, modern) => buildToolServer(wiring, identity, agentId, requestOf, modern)
  const answerFast = createFastPath(buildServer)

  /** One handler for every agent: the SDK's stateless serving of 2026-07-28 and, per request, of the older revisions. */
  const requests = new WeakMap<Request, McpRequest>()
  const handler = createMcpHandler((context) => {
    const request = requests.get(context.requestInfo as Request) as McpRequest
    return buildServer(serverIdentity(request.cardOf()), request.agentId, () => request, context.era === 'modern')
  }, { maxRequestBodySize: bodyLimit, onerror: () => {} })

  /**
   * The request as it is answered: the agent's card read once and the caller authenticated once per HTTP request, as
   * the A2A door would (a door that knows the caller passes it instead); undefined: refused and answered.
   */
  async function admitted (given: McpRequest): Promise<McpRequest | undefined> {
    const tools = toolsFor(given.agentId)
    // Removed since the door looked (an agent changed at runtime): what the door answers an unknown agent.
    if (tools === undefined) {
      notFound(given.response, given.agentId)
      return undefined
    }
    const service = services.get(given.agentId) as A2AService
    const card = given.cardOf()
    let request: McpRequest = { ...given, cardOf: () => card }
    // GET and DELETE are answered 405 by the SDK whoever asks (no sessions, no standalone stream).
    if (request.caller === undefined && request.request.method === 'POST') {
      const access = await service.authenticate(request.agentId, request.request.headers, request.log)
      if (access.kind === 'refused') {
        accessRefused(request.response, access)
        return undefined
      }
      request = { ...request, caller: access.caller }
    }
    held.set(request, { service, tools })
    return request
  }

  /** The SDK's handler: every request the door and the fast path did not answer. */
  async function answerWithHandler (request: McpRequest): Promise<void> {
    const { body, response } = request
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

  async function handle (given: McpRequest): Promise<void> {
    const request = await admitted(given)
    if (request === undefined || await bodyRefused(request, maxBatch)) return
    const { body } = request
    if (direct && body?.kind === 'json' && await answerFast(request, body.value)) return
    await answerWithHandler(request)
  }

  return { serves: (agentId) => toolsFor(agentId) !== undefined, handle }
}
