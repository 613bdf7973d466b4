/**
 * The MCP door's fast path: a plain `tools/call` or `tools/list` POST answered by one long-lived SDK `Server` per
 * agent through an in-process transport, instead of a new `Server` and Streamable HTTP transport per request.
 *
 * Why: in stateless mode the SDK's transport refuses a second request and a `Server` holds one transport, so every
 * HTTP request paid for a new `Server`, a new transport, and the transport's conversion of Node's request and reply
 * to Web `Request`/`Response` objects — about three times the A2A SendMessage the tool call wraps (docs/performance.md,
 * "The MCP door against the A2A door"). The SDK's `Transport` interface is its documented way to carry messages to a
 * `Server`; the `Server` still does all of MCP: the JSON-RPC dispatch, the request and result schemas, the errors.
 *
 * What stays on the SDK's Streamable HTTP transport (`eligibleRequest` says no): every request that is not a single
 * JSON-RPC request of `tools/call` or `tools/list` with the headers the transport would accept (Accept of JSON and
 * SSE, a JSON Content-Type, a supported or absent MCP-Protocol-Version), so initialize, notifications, batches and
 * every refusal (406, 415, 400) keep the transport's own answers. What a fast request gets is what the transport
 * gives it in JSON reply mode: 200, `Content-Type: application/json`, the JSON-RPC response with the caller's id.
 * test/mcp/direct-exchange.test.ts sends the same requests down both paths and requires the same replies, so an SDK
 * upgrade that changes either side fails there.
 *
 * Each exchange gets its own JSON-RPC id on the shared server (callers all start at 1) and gets its caller's id back;
 * a caller gone before its reply cancels its request with `notifications/cancelled`, which aborts the tool call.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js'
import {
  SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type JSONRPCRequest, type RequestId
} from '@modelcontextprotocol/sdk/types.js'

/** The methods the fast path answers: the two a connected client sends for every tool call. */
const DIRECT_METHODS: ReadonlySet<unknown> = new Set(['tools/call', 'tools/list'])

/** The request headers the fast path reads (Node's lower-case names). */
export interface ExchangeHeaders {
  accept?: string
  'content-type'?: string
  'mcp-protocol-version'?: string | string[]
}

/**
 * The request, when the fast path may answer it exactly as the SDK's stateless transport in JSON mode would; else
 * undefined. `body` is the parsed JSON body.
 */
export function eligibleRequest (method: string | undefined, headers: ExchangeHeaders, body: unknown): JSONRPCRequest | undefined {
  if (method !== 'POST') return undefined
  const accept = headers.accept
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined
  if (!isJsonContentType(headers['content-type'])) return undefined
  const version = headers['mcp-protocol-version']
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return undefined
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined
  const request = body as Record<string, unknown>
  if (request.jsonrpc !== '2.0' || !DIRECT_METHODS.has(request.method)) return undefined
  // The transport's JSON-RPC message schema: a string or integer id; params, if any, an object.
  const id = request.id
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined
  const params = request.params
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) return undefined
  return request as JSONRPCRequest
}

/** One request on its way: its reply, and how to call it off. */
export interface Exchange {
  /** The JSON-RPC response with the caller's id; undefined once cancelled (the server sends nothing then). */
  readonly reply: Promise<JSONRPCMessage | undefined>
  /** The caller is gone: the request is cancelled on the server (its handler's signal aborts). Idempotent. */
  cancel (): void
}

export interface DirectExchange<Context> {
  /** Runs one request on the shared server. `context` reaches the handlers through `contextOf(extra.requestId)`. */
  exchange (request: JSONRPCRequest, context: Context): Exchange
  /** The context of a request the shared server is running (its handlers' `extra.requestId`). */
  contextOf (requestId: RequestId): Context
  /** Requests in flight (for tests: nothing stays behind). */
  readonly pending: number
}

interface Pending<Context> {
  callerId: RequestId
  context: Context
  resolve: (response: JSONRPCMessage | undefined) => void
}

/** Connects `server` to an in-process transport of its own; the server answers every exchange. */
export async function connectDirectExchange<Context> (server: Server): Promise<DirectExchange<Context>> {
  const pending = new Map<number, Pending<Context>>()
  let nextId = 0
  const transport: Transport = {
    async start () {},
    async close () {},
    async send (message) {
      // Only responses reach here: the door's handlers send no notifications or requests to the client.
      const id = (message as { id?: unknown }).id as number
      const waiting = pending.get(id)
      /* c8 ignore next -- a response for a request already cancelled: the server sends none (it checks its signal) */
      if (waiting === undefined) return
      pending.delete(id)
      waiting.resolve({ ...message, id: waiting.callerId } as JSONRPCMessage)
    }
  }
  await server.connect(transport)

  return {
    exchange (request, context) {
      const id = ++nextId
      // (No AbortController per request: the caller's close event calls cancel, and the server has its own.)
      const reply = new Promise<JSONRPCMessage | undefined>((resolve) => {
        pending.set(id, { callerId: request.id, context, resolve })
      })
      transport.onmessage?.({ ...request, id })
      return {
        reply,
        cancel () {
          const waiting = pending.get(id)
          if (waiting === undefined) return
          pending.delete(id)
          // The SDK's way to stop a request: the handler's extra.signal aborts and no response is sent.
          transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client gone' } })
          waiting.resolve(undefined)
        }
      }
    },
    contextOf (requestId) {
      return (pending.get(requestId as number) as Pending<Context>).context
    },
    get pending () {
      return pending.size
    }
  }
}
