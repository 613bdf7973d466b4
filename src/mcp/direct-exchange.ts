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
 * `server/discover`, the older revisions, notifications, batches and the HTTP-level refusals keep the SDK's own
 * answers. The SDK's own classification (`classifyInboundRequest`) is not run on the fast path: it parses the body
 * with zod schemas most of which fail (~3.5 % of a tool call's instructions). What it would refuse among eligible
 * requests, a malformed envelope, the pinned Server refuses before any handler runs (`envelopeRefused`), and the door
 * then answers it through `createMcpHandler` (no tool ran). test/mcp/direct-exchange.test.ts sends the same requests
 * down both paths and requires the same replies, so an SDK upgrade that changes either side fails there.
 *
 * Each exchange gets its own JSON-RPC id on the shared server (callers all start at 1) and gets its caller's id back;
 * a caller gone before its reply cancels its request with `notifications/cancelled`, which aborts the tool call.
 */
import { isJsonContentType, type JSONRPCMessage, type JSONRPCRequest, type RequestId, type Server, type Transport } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'

/** The methods the fast path answers: the two a connected client sends for every tool call. */
const DIRECT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tools/list'])
/** The revision the fast path serves (the SDK's only modern one). */
const REVISION = '2026-07-28'
/** Where a 2026-07-28 request names its revision (the per-request envelope in `params._meta`). */
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion'

/** The request headers the fast path reads (Node's lower-case names). */
export interface ExchangeHeaders {
  'content-type'?: string
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

/** Serves `server` (built once, on the first exchange) pinned to 2026-07-28 over an in-process transport. */
export function connectDirectExchange<Context> (server: () => Server): DirectExchange<Context> {
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
  // The first exchange, a 2026-07-28 request, pins the one instance to that revision; the SDK starts the transport
  // synchronously, so its onmessage is set before any exchange.
  serveStdio(server, { transport, legacy: 'reject' })

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
