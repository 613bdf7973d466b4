/**
 * The MCP door's fast path: a plain 2026-07-28 `tools/call` or `tools/list` POST answered by one long-lived SDK
 * `Server` per agent (and server identity), pinned to the 2026-07-28 revision, instead of the new `Server`, the
 * per-request transport and the web `Request`/`Response` objects the SDK's stateless `createMcpHandler` builds for
 * every request (about three times the A2A SendMessage a tool call wraps; docs/mcp.md, docs/performance.md).
 *
 * The pinning is the SDK's own: `serveStdio` (its serving entry for a long-lived connection, which takes any
 * `Transport`) decides the era from the first message, binds ONE instance from the factory to it and passes every
 * later message straight through. The transport here is in-process: messages go in as objects, responses come back
 * by id. The `Server` still does all of MCP: the envelope, dispatch, the request and result schemas, the errors.
 *
 * What stays on `createMcpHandler` (`eligibleRequest` says no): every request that is not a single JSON-RPC request
 * of one of the two methods claiming 2026-07-28 in its envelope, or whose standard headers (SEP-2243:
 * MCP-Protocol-Version, Mcp-Method, Mcp-Name) are not exactly the body's, or whose Content-Type is not JSON — so
 * `server/discover`, notifications, batches and the HTTP-level refusals keep the SDK's own answers (the older
 * revisions: below). The SDK's own classification (`classifyInboundRequest`) is not run on the fast path: it parses the body
 * with zod schemas most of which fail (~3.5 % of a tool call's instructions). What it would refuse among eligible
 * requests, a malformed envelope, the pinned Server refuses before any handler runs (`envelopeRefused`), and the door
 * then answers it through `createMcpHandler` (no tool ran). test/library/mcp/direct-exchange.test.ts sends the same requests
 * down both paths and requires the same replies, so an SDK upgrade that changes either side fails there.
 *
 * Each exchange gets its own JSON-RPC id on the shared server (callers all start at 1) and gets its caller's id back;
 * a caller gone before its reply cancels its request with `notifications/cancelled`, which aborts the tool call.
 *
 * The older revisions (2025-11-25 … 2024-10-07: what the v1 client sends once initialized) have a fast path of the
 * same kind (`eligibleLegacyRequest`): `createMcpHandler`'s stateless legacy leg answers a plain `tools/call` or
 * `tools/list` with a new `Server` that never saw an `initialize` (no negotiated revision, no client capabilities:
 * the 2025 codec) on a new Streamable HTTP transport, the reply as one SSE event. The long-lived legacy `Server` is
 * pinned by `serveStdio` from its first message, a claim-less request (no synthetic `initialize`: the stateless
 * instance sees none either, so the pinned one holds the same state, and one instance serves every 2025 revision —
 * the header's revision only has to be one the transport accepts). The reply is written as that leg writes it
 * (`openLegacyStream`): the same status, headers, `event: message` frame and keep-alive comments.
 */
import type { ServerResponse } from 'node:http'
import type { JSONRPCMessage, JSONRPCRequest, RequestId, Transport } from '@modelcontextprotocol/server'
import {
  isJsonContentType, PROTOCOL_VERSION_META_KEY, RELATED_TASK_META_KEY, serveStdio, SUPPORTED_PROTOCOL_VERSIONS, type Server
} from '../peers/mcp.js'

/** The methods the fast path answers: the two a connected client sends for every tool call. */
const DIRECT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tools/list'])
/** The revision the fast path serves (the SDK's only modern one). */
const REVISION = '2026-07-28'
/** Where a 2026-07-28 request names its revision (the per-request envelope in `params._meta`). */
const PROTOCOL_VERSION_META = PROTOCOL_VERSION_META_KEY
/** The older revisions the SDK's stateless legacy leg accepts in MCP-Protocol-Version (its transport's list). */
const LEGACY_REVISIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version !== REVISION))
/** The members of a JSON-RPC request (the SDK's schema is strict: any other member makes the body no request). */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params'])

/** The request headers the fast path reads (Node's lower-case names). */
export interface ExchangeHeaders {
  'content-type'?: string
  accept?: string
  'mcp-session-id'?: string
  'mcp-protocol-version'?: string | string[]
  'mcp-method'?: string | string[]
  'mcp-name'?: string | string[]
}

/**
 * The request, when the fast path may answer it exactly as the SDK's stateless handler would; else undefined.
 * `body` is the parsed JSON body.
 */
export function eligibleRequest (method: string | undefined, headers: ExchangeHeaders, body: unknown): JSONRPCRequest | undefined {
  if (method !== 'POST' || !isJsonContentType(headers['content-type'])) return undefined
  const version = headers['mcp-protocol-version']
  const mcpMethod = headers['mcp-method']
  if (version !== REVISION || typeof mcpMethod !== 'string' || !DIRECT_METHODS.has(mcpMethod)) return undefined
  const request = body as { method?: unknown, params?: { name?: unknown } } | null
  if (request === null || typeof request !== 'object' || request.method !== mcpMethod) return undefined
  const name = headers['mcp-name']
  // tools/call names its tool in Mcp-Name, plainly (a Base64 sentinel value is for the SDK to decode).
  if (mcpMethod === 'tools/call' && (typeof name !== 'string' || name !== request.params?.name)) return undefined
  if (mcpMethod === 'tools/list' && name !== undefined) return undefined
  // A single JSON-RPC request claiming 2026-07-28 in its envelope. The envelope's members are checked by the pinned
  // Server itself before any handler runs; its refusal is not the stateless handler's (that one is HTTP 400), so the
  // door hands such a request to the SDK's handler after all (`envelopeRefused`).
  const { jsonrpc, id } = request as { jsonrpc?: unknown, id?: unknown }
  if (jsonrpc !== '2.0' || (typeof id !== 'string' && typeof id !== 'number')) return undefined
  const meta = (request.params as { _meta?: Record<string, unknown> } | undefined)?._meta
  if (meta?.[PROTOCOL_VERSION_META] !== REVISION) return undefined
  return request as JSONRPCRequest
}

/**
 * The request, when the legacy fast path may answer it exactly as the SDK's stateless legacy leg would; else
 * undefined. Strict: a POST of JSON, MCP-Protocol-Version one older revision the SDK accepts, an Accept of both media
 * types the legacy transport requires, no session id, and a body the SDK's schema reads as ONE JSON-RPC request of
 * `tools/call` or `tools/list` with no envelope claim (so the SDK classifies it legacy) and nothing in `_meta` the
 * SDK's schema checks (a progress token, a related task): such requests, and everything else, go to the SDK.
 */
export function eligibleLegacyRequest (method: string | undefined, headers: ExchangeHeaders, body: unknown): JSONRPCRequest | undefined {
  if (method !== 'POST' || !isJsonContentType(headers['content-type'])) return undefined
  const version = headers['mcp-protocol-version']
  if (typeof version !== 'string' || !LEGACY_REVISIONS.has(version) || headers['mcp-session-id'] !== undefined) return undefined
  const accept = headers.accept
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined
  if (!isPlainObject(body)) return undefined
  const { jsonrpc, id, method: rpcMethod, params } = body
  if (jsonrpc !== '2.0' || typeof rpcMethod !== 'string' || !DIRECT_METHODS.has(rpcMethod)) return undefined
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined
  for (const member in body) if (!REQUEST_MEMBERS.has(member)) return undefined
  if (params !== undefined) {
    if (!isPlainObject(params)) return undefined
    const meta = params._meta
    if (meta !== undefined && (!isPlainObject(meta) || PROTOCOL_VERSION_META in meta || 'progressToken' in meta || RELATED_TASK_META_KEY in meta)) return undefined
  }
  return body as unknown as JSONRPCRequest
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The SSE headers of the stateless legacy leg's reply, in the order the door writes a web Response's (sorted). */
const LEGACY_STREAM_HEADERS = Object.freeze({
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no'
})
/** The legacy transport's keep-alive interval (the SDK's default: the door sets none). */
export const LEGACY_KEEP_ALIVE_MS = 15_000

/** A legacy reply under way: its stream's headers are set and its keep-alive runs until `end`. */
export interface LegacyStream {
  /** Writes the reply as one `event: message` frame and ends the stream; without a reply (cancelled) only ends it. */
  end (reply: JSONRPCMessage | undefined): void
}

/**
 * Opens the reply of a legacy request as the SDK's stateless legacy leg does: status 200 and its SSE headers, then a
 * `: keepalive` comment every `keepAliveMs` until the reply's one `event: message` frame, and the end.
 */
export function openLegacyStream (response: ServerResponse, keepAliveMs = LEGACY_KEEP_ALIVE_MS): LegacyStream {
  response.writeHead(200, LEGACY_STREAM_HEADERS)
  const timer = setInterval(() => { response.write(': keepalive\n\n') }, keepAliveMs)
  timer.unref()
  return {
    end (reply) {
      clearInterval(timer)
      if (reply !== undefined) response.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`)
      response.end()
    }
  }
}

/** The prefix of the SDK's refusal of a malformed 2026-07-28 envelope (its per-request check, before any handler). */
const ENVELOPE_REFUSAL = 'Invalid _meta envelope for protocol revision '

/** Whether the pinned Server refused the request's envelope (no handler ran): the stateless handler answers it instead. */
export function envelopeRefused (reply: JSONRPCMessage): boolean {
  const error = (reply as { error?: { code?: unknown, message?: unknown } }).error
  return error?.code === -32602 && typeof error.message === 'string' && error.message.startsWith(ENVELOPE_REFUSAL)
}

/** One request on its way: its reply, and how to call it off. */
export interface Exchange {
  /** The JSON-RPC response with the caller's id; undefined once cancelled (the server sends nothing then). */
  readonly reply: Promise<JSONRPCMessage | undefined>
  /** The caller is gone: the request is cancelled on the server (its handler's signal aborts). Idempotent. */
  cancel (): void
}

export interface DirectExchange<Context> {
  /** Runs one request on the shared server. `context` reaches the handlers through `contextOf(ctx.mcpReq.id)`. */
  exchange (request: JSONRPCRequest, context: Context): Exchange
  /** The context of a request the shared server is running (its handlers' `ctx.mcpReq.id`). */
  contextOf (requestId: RequestId): Context
  /** Requests in flight (for tests: nothing stays behind). */
  readonly pending: number
}

interface Pending<Context> {
  callerId: RequestId
  context: Context
  resolve: (response: JSONRPCMessage | undefined) => void
}

/**
 * Serves `server` (built once, on the first exchange) over an in-process transport, pinned to 2026-07-28 or, `legacy`,
 * to the 2025 era (its first exchange, a claim-less request, pins it so).
 */
export function connectDirectExchange<Context> (server: () => Server, era: 'modern' | 'legacy' = 'modern'): DirectExchange<Context> {
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
  // The first exchange, a 2026-07-28 request (or, legacy, a claim-less one), pins the one instance to that era; the
  // SDK starts the transport synchronously, so its onmessage is set before any exchange.
  serveStdio(server, { transport, legacy: era === 'legacy' ? 'serve' : 'reject' })

  return {
    exchange (request, context) {
      const id = ++nextId
      const reply = new Promise<JSONRPCMessage | undefined>((resolve) => {
        pending.set(id, { callerId: request.id, context, resolve })
      })
      deliver({ ...request, id })
      return {
        reply,
        cancel () {
          const waiting = pending.get(id)
          if (waiting === undefined) return
          pending.delete(id)
          // The SDK's way to stop a request: the handler's signal aborts and no response is sent.
          deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client gone' } })
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

  function deliver (message: JSONRPCMessage): void {
    (transport.onmessage as (message: JSONRPCMessage) => void)(message)
  }
}
