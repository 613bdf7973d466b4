/**
 * Reading an upstream's replies (upstream-backend.ts): a body within `maxResponseBytes`, the JSON-RPC result or its
 * error (as the caller gets it: upstream-errors.ts, `errorDetails`; the original logged at warn), and a reply that is
 * not JSON-RPC told apart by its HTTP status (down, refusing, or invalid).
 */
import type { Dispatcher } from 'undici'
import type { BackendContext } from '../../protocol/backend.js'
import type { CheckedRequest } from '../../protocol/check-request.js'
import type { JsonRpcError } from '../../protocol/errors.js'
import { A2AReplyError } from '../local/local-backend.js'
import {
  upstreamInvalidResponse, upstreamReplyError, upstreamUnavailable, UpstreamError, type UpstreamErrorDetails
} from './upstream-errors.js'

export interface UpstreamReplies {
  replyError: (original: JsonRpcError, request: CheckedRequest, context: BackendContext) => A2AReplyError
  resultOf: (text: string, status: number, request: CheckedRequest, context: BackendContext) => unknown
  readText: (stream: Dispatcher.ResponseData['body']) => Promise<string>
}

export function upstreamReplies (agentId: string, errorDetails: UpstreamErrorDetails, maxResponseBytes: number): UpstreamReplies {
  /** The upstream's JSON-RPC error as the caller gets it; the original in the log (warn). */
  function replyError (original: JsonRpcError, request: CheckedRequest, context: BackendContext): A2AReplyError {
    context.log?.warn({ agentId, method: request.method, upstreamError: original }, 'upstream agent answered an error')
    return new A2AReplyError(upstreamReplyError(original, errorDetails))
  }

  /** The JSON-RPC response's result; its error thrown as an A2AReplyError; anything else an UpstreamError. */
  function resultOf (text: string, status: number, request: CheckedRequest, context: BackendContext): unknown {
    let response: unknown
    try {
      response = JSON.parse(text)
    } catch {
      throw notJsonRpc(status, 'not JSON', 'NOT_JSON')
    }
    const rpc = response as { jsonrpc?: unknown, result?: unknown, error?: unknown } | null
    if (rpc !== null && typeof rpc === 'object' && rpc.jsonrpc === '2.0') {
      if (isJsonRpcError(rpc.error)) throw replyError(rpc.error, request, context)
      if (rpc.result !== undefined && rpc.error === undefined) return rpc.result
    }
    throw notJsonRpc(status, 'not a JSON-RPC response', 'NOT_JSON_RPC')
  }

  /**
   * A reply without a JSON-RPC body: the upstream down (5xx) or refusing the gateway's credentials or the caller's
   * assertion (401, 403) is unavailable to this caller; anything else is an invalid response.
   */
  function notJsonRpc (status: number, what: string, cause: string): UpstreamError {
    if ([401, 403].includes(status)) return new UpstreamError(upstreamUnavailable(agentId, `refused the request (HTTP ${status})`), `HTTP_${status}`)
    return status >= 500
      ? new UpstreamError(upstreamUnavailable(agentId, `HTTP ${status}`), `HTTP_${status}`)
      : new UpstreamError(upstreamInvalidResponse(agentId, what), cause)
  }

  async function readText (stream: Dispatcher.ResponseData['body']): Promise<string> {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of stream) {
      size += (chunk as Buffer).length
      if (size > maxResponseBytes) {
        stream.destroy()
        throw new UpstreamError(upstreamInvalidResponse(agentId, `larger than ${maxResponseBytes} bytes`), 'TOO_LARGE')
      }
      chunks.push(chunk as Buffer)
    }
    return Buffer.concat(chunks).toString('utf8')
  }

  return { replyError, resultOf, readText }
}

export function isJsonRpcError (value: unknown): value is JsonRpcError {
  const error = value as { code?: unknown, message?: unknown } | null | undefined
  return error !== null && typeof error === 'object' && Number.isInteger(error.code) && typeof error.message === 'string'
}
