/**
 * The JSON-RPC errors the gateway answers when an upstream agent (proxy mode) fails, and the classification of
 * undici's failures into them. The upstream's address, stack or body never reach the caller: the error names the
 * agent id only (the log has the cause's code).
 *
 * - -32050 UPSTREAM_UNAVAILABLE: refused, unreachable, the connection lost (a stream cut mid-way included), an
 *   HTTP 5xx without a JSON-RPC body, or the upstream's card not read yet;
 * - -32051 UPSTREAM_TIMEOUT: no connection, no reply, or no stream event within the agent's timeouts;
 * - -32006 INVALID_AGENT_RESPONSE (A2A's own code): a reply that is not JSON-RPC (garbage, HTML, a bad SSE frame,
 *   too large).
 *
 * An upstream JSON-RPC error (`{ error: { code, message, data } }`) reaches the caller as far as the agent's
 * `upstream.errorDetails` allows (`upstreamReplyError`): by default its code only, with the gateway's own message
 * for that code; `full` passes it through unchanged.
 */
import { a2aError, JsonRpcErrorCode, type JsonRpcError } from '../../protocol/errors.js'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

/**
 * How much of an upstream JSON-RPC error reaches the caller: `code` (the default) its code with a generic message
 * (A2A's standard message and reason for A2A's own codes) and none of its `data`; `full` all of it as sent.
 */
export type UpstreamErrorDetails = 'code' | 'full'

export const UPSTREAM_ERROR_DETAILS = ['code', 'full'] as const

/** A2A's own codes (§5.4): their standard reason and a message of ours. */
const A2A_ERRORS = new Map<number, [reason: string, message: string]>([
  [JsonRpcErrorCode.TaskNotFound, ['TASK_NOT_FOUND', 'Task not found']],
  [JsonRpcErrorCode.TaskNotCancelable, ['TASK_NOT_CANCELABLE', 'Task cannot be canceled']],
  [JsonRpcErrorCode.PushNotificationNotSupported, ['PUSH_NOTIFICATION_NOT_SUPPORTED', 'Push notifications are not supported by this agent']],
  [JsonRpcErrorCode.UnsupportedOperation, ['UNSUPPORTED_OPERATION', 'This operation is not supported']],
  [JsonRpcErrorCode.ContentTypeNotSupported, ['CONTENT_TYPE_NOT_SUPPORTED', 'Content type not supported']],
  [JsonRpcErrorCode.InvalidAgentResponse, ['INVALID_AGENT_RESPONSE', 'Invalid agent response']],
  [JsonRpcErrorCode.ExtendedAgentCardNotConfigured, ['EXTENDED_AGENT_CARD_NOT_CONFIGURED', 'Extended agent card is not configured']],
  [JsonRpcErrorCode.ExtensionSupportRequired, ['EXTENSION_SUPPORT_REQUIRED', 'Required extension not activated']],
  [JsonRpcErrorCode.VersionNotSupported, ['VERSION_NOT_SUPPORTED', 'A2A version not supported']]
])

/** JSON-RPC 2.0's own codes: their standard messages (as the gateway words them). */
const JSON_RPC_MESSAGES = new Map<number, string>([
  [JsonRpcErrorCode.ParseError, 'Invalid JSON payload'],
  [JsonRpcErrorCode.InvalidRequest, 'Invalid JSON-RPC request'],
  [JsonRpcErrorCode.MethodNotFound, 'Method not found'],
  [JsonRpcErrorCode.InvalidParams, 'Invalid parameters'],
  [JsonRpcErrorCode.InternalError, 'Internal error']
])

/** What the caller gets of an upstream's JSON-RPC error (see UpstreamErrorDetails). */
export function upstreamReplyError (original: JsonRpcError, details: UpstreamErrorDetails): JsonRpcError {
  if (details === 'full') return original
  const known = A2A_ERRORS.get(original.code)
  if (known !== undefined) return a2aError(original.code, known[0], known[1])
  return { code: original.code, message: JSON_RPC_MESSAGES.get(original.code) ?? 'Upstream agent error' }
}

export const UpstreamErrorCode = Object.freeze({
  Unavailable: -32050,
  Timeout: -32051,
  InvalidResponse: JsonRpcErrorCode.InvalidAgentResponse
})

export function upstreamUnavailable (agentId: string, detail: string): JsonRpcError {
  return a2aError(UpstreamErrorCode.Unavailable, 'UPSTREAM_UNAVAILABLE', `Upstream agent unavailable: ${detail}`, { agentId })
}

export function upstreamTimeout (agentId: string, detail: string): JsonRpcError {
  return a2aError(UpstreamErrorCode.Timeout, 'UPSTREAM_TIMEOUT', `Upstream agent timed out: ${detail}`, { agentId })
}

export function upstreamInvalidResponse (agentId: string, detail: string): JsonRpcError {
  return a2aError(UpstreamErrorCode.InvalidResponse, 'INVALID_AGENT_RESPONSE', `Invalid upstream agent response: ${detail}`, { agentId })
}

/** A failure the upstream backend decided on: the JSON-RPC error to answer, and a cause code for the log. */
export class UpstreamError extends ConverseError {
  readonly error: JsonRpcError
  readonly causeCode: string | undefined

  constructor (error: JsonRpcError, causeCode?: string) {
    super(ERROR_CODES.UPSTREAM, error.message)
    this.error = error
    this.causeCode = causeCode
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'])

/** The UpstreamError for anything undici (or the network under it) threw. */
export function classifyNetworkError (agentId: string, error: unknown, phase: 'request' | 'stream'): UpstreamError {
  if (error instanceof UpstreamError) return error
  const code = networkCode(error)
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new UpstreamError(upstreamTimeout(agentId, phase === 'stream' ? 'no stream event in time' : 'no reply in time'), code)
  }
  return new UpstreamError(upstreamUnavailable(agentId, phase === 'stream' ? 'the stream was cut' : 'cannot be reached'), code)
}

/** undici's code, or the socket's under it (ECONNREFUSED, ENOTFOUND, ECONNRESET…). */
function networkCode (error: unknown): string | undefined {
  const err = error as { code?: unknown, cause?: { code?: unknown } } | null
  const code = err?.code ?? err?.cause?.code
  return typeof code === 'string' ? code : undefined
}
