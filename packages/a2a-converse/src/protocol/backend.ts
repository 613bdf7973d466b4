/**
 * Where an agent's replies come from, as the A2A service sees it. The service has already checked the request
 * (JSON-RPC, version, method, params, required extensions, capabilities) and decorates or strips whatever a
 * backend returns; a backend only answers.
 *
 * Implementations: local @a2a-js/sdk executors (local-backend.ts); an upstream A2A agent (proxy mode) and
 * the MCP door's calls are others.
 */
import type { Context } from '../telemetry/tracing.js'
import type { JsonRpcError } from './errors.js'
import type { AgentFacts, CheckedRequest } from './check-request.js'

/** pino-compatible. */
export interface ServiceLogger {
  error (object: object, message: string): void
  warn (object: object, message: string): void
  info (object: object, message: string): void
}

/** Who is calling, when the door knows (authentication). Absent: a walk-in caller. */
export interface Caller {
  id: string
}

/** Everything about one request a backend may use besides the checked JSON-RPC request. */
export interface BackendContext {
  agentId: string
  /** Extension URIs the request asked for (A2A-Extensions, parsed). */
  requestedExtensions: readonly string[]
  /** Requested ∩ declared by the agent. */
  activated: readonly string[]
  /** The A2A version the request asked for (1.0 or 1.0.x by now). */
  version: string
  /** The request's headers, lower-case names. */
  headers: Readonly<Record<string, string | string[] | undefined>>
  /** Aborts when the client went away or the server is closing. */
  signal: AbortSignal
  caller?: Caller
  log?: ServiceLogger
  /** The door's own request object (Fastify, Express), for callbacks the door's user wrote (extendedCard). */
  doorRequest?: unknown
  /** The client's address as the door sees it (its trust-proxy rules), when the door knows it. */
  clientAddress?: string
  /**
   * The trace context of the backend's work (its `converse.backend` span while it answers; the call's SERVER span
   * later in a stream): what a request the backend makes carries out, and what its spans are children of. Explicit
   * because a span that is not recorded is never made the active context (packages/a2a-converse/src/telemetry/tracing.ts, `runActive`), and
   * the gateway app registers no context manager at all (src/gateway/tracing-sdk.ts).
   */
  traceContext?: Context
}

export interface A2ABackend {
  /** What the agent serves, fixed when the backend is built. */
  readonly facts: AgentFacts
  /** Answers a non-streaming method with its JSON-RPC `result`; a rejection goes through `toError`. */
  call (request: CheckedRequest, context: BackendContext): Promise<unknown>
  /**
   * Opens a streaming method (SendStreamingMessage, SubscribeToTask): its `result`s in order. When
   * `context.signal` aborts, the backend stops waiting and ends the iteration; anything thrown goes through
   * `toError`.
   */
  stream (request: CheckedRequest, context: BackendContext): AsyncIterator<unknown, void, undefined>
  /** The JSON-RPC error for anything `call` or `stream` threw; unknown errors are logged and answered -32603. */
  toError (error: unknown, request: CheckedRequest, log?: ServiceLogger): JsonRpcError
}
