/**
 * A tools/call of the MCP door as A2A calls (mcp-service.ts serves them): `ask_agent` and a routine tool's first round
 * are a SendMessage activating the extension; a later round of an input_required exchange continues the task (or,
 * declined, reads it with GetTask). Everything goes through the agent's A2A service, as an A2A caller's request would.
 */
import { randomUUID } from 'node:crypto'
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server'
import type { A2AService } from '../a2a/service.js'
import type { ConverseEnvelope } from '../core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import type { JsonRpcResponse } from '../protocol/errors.js'
import { traceHeadersOf as httpTraceHeadersOf } from '../telemetry/tracing.js'
import type { Continuation } from './input-required.js'
import { toolResultOf } from './tool-result.js'
import { traceHeadersOf } from './trace-context.js'
import type { McpRequest } from './mcp-service.js'

/** The door's own tool: a message to the agent. */
export const ASK_AGENT = 'ask_agent'

/**
 * The `_meta` key of a tools/call request whose value `{ contextId?, taskId?, messageId? }` makes a routine tool call
 * continue a conversation (so that `reentered` and `declined` can happen over MCP too) or be retried safely.
 * Reverse-DNS as MCP's _meta keys are.
 */
export const CONVERSATION_META = 'ai.radioso/conversation'

/** What a routine tool call's invocation outcome means to the caller: the routine did not run. */
const NOT_RUN = new Set(['declined', 'not_started', 'unknown_tool'])

/** Runs one A2A method through the A2A service, as an A2A caller activating the extension would send it. */
async function callA2A (service: A2AService, request: McpRequest, method: string, params: Record<string, unknown>, context: ServerContext): Promise<JsonRpcResponse> {
  // The trace the request's `_meta` names, else the one its HTTP headers name.
  const fromMeta = traceHeadersOf(context.mcpReq._meta)
  const trace = fromMeta.traceparent === undefined ? httpTraceHeadersOf(request.request.headers) : fromMeta
  const result = await service.call({
    agentId: request.agentId,
    binding: 'mcp',
    headers: {
      'a2a-version': '1.0',
      'a2a-extensions': CONVERSE_EXTENSION_URI,
      'content-type': 'application/json',
      ...trace
    },
    method,
    params,
    signal: context.mcpReq.signal,
    caller: request.caller,
    log: request.log,
    doorRequest: request.request,
    clientAddress: request.clientAddress
  })
  // SendMessage and GetTask are not streaming methods: a value or an error, read as the JSON-RPC response it would be.
  return result.kind === 'error' ? { jsonrpc: '2.0', id: 1, error: result.error } : { jsonrpc: '2.0', id: 1, result: (result as { value: unknown }).value }
}

async function sendMessage (service: A2AService, request: McpRequest, message: Record<string, unknown>, context: ServerContext): Promise<JsonRpcResponse> {
  return await callA2A(service, request, 'SendMessage', {
    message: { messageId: randomUUID(), role: 'ROLE_USER', extensions: [CONVERSE_EXTENSION_URI], ...message }
  }, context)
}

/** The tool call's first round: the arguments as the A2A message. */
export async function firstRound (service: A2AService, request: McpRequest, name: string, args: Record<string, unknown>, context: ServerContext): Promise<CallToolResult> {
  if (name === ASK_AGENT) {
    const { message } = args
    if (typeof message !== 'string' || message === '') return argumentError(ASK_AGENT, 'message must be a non-empty string')
    const ids = idsOf(args)
    if (typeof ids === 'string') return argumentError(ASK_AGENT, ids)
    return toolResultOf(await sendMessage(service, request, { parts: [{ text: message }], ...ids }, context))
  }
  // A routine tool's arguments are the routine's slots only (its schema is the card's): the conversation to
  // continue, if any, travels in the request's _meta.
  const continued = context.mcpReq._meta?.[CONVERSATION_META]
  const ids = continued === undefined ? {} : idsOf(continued)
  if (typeof ids === 'string') return argumentError(name, `_meta["${CONVERSATION_META}"].${ids}`)
  const call = { toolName: name, arguments: args }
  const response = await sendMessage(service, request, {
    parts: [{ data: call }],
    metadata: { [CONVERSE_EXTENSION_URI]: { call } },
    ...ids
  }, context)
  return toolResultOf(response, (envelope: ConverseEnvelope) => NOT_RUN.has(envelope.invocation?.outcome as string))
}

/** A later round of an input_required exchange: the client's answer continues the task (or, declined, the task as it stands). */
export async function nextRound (service: A2AService, request: McpRequest, continuation: Continuation, context: ServerContext): Promise<CallToolResult> {
  const { ids, reply } = continuation
  if (reply === undefined) return toolResultOf(wrapTask(await callA2A(service, request, 'GetTask', { id: ids.taskId }, context)))
  return toolResultOf(await sendMessage(service, request, { parts: [{ text: reply }], ...ids }, context))
}

/** GetTask's reply (the task itself) as SendMessage's (`{ task }`), which the tool result reads. */
function wrapTask (response: JsonRpcResponse): JsonRpcResponse {
  return 'error' in response ? response : { ...response, result: { task: response.result } }
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
