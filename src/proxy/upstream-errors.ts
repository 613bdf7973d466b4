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
 * An upstream JSON-RPC error (`{ error: { code, message, data } }`) is passed through unchanged.
 */
import { a2aError, JsonRpcErrorCode, type JsonRpcError } from '../jsonrpc/errors.js'

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
export class UpstreamError extends Error {
  readonly error: JsonRpcError
  readonly causeCode: string | undefined

  constructor (error: JsonRpcError, causeCode?: string) {
    super(error.message)
    this.name = 'UpstreamError'
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
