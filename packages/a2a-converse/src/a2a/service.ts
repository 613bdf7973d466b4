/**
 * The A2A service: one binding-neutral call (an A2A 1.0 method and its ProtoJSON params, the service parameters,
 * the caller) to one result (a value, a stream of StreamResponse objects, or an A2A error). Every binding
 * (packages/a2a-converse/src/bindings/: JSON-RPC, HTTP+JSON) maps its wire to a call and the result back; everything A2A happens here,
 * once, whatever the binding or the door, in this order:
 *
 *   A2A-Extensions negotiation (the echo header goes on every result of a known agent)
 *   → the caller, for an agent that requires one (401 + WWW-Authenticate; 503 when the identity provider cannot be
 *   asked) → an error the binding found on its wire (body, envelope), answered only now so a stranger learns
 *   nothing else → the A2A checks (check-request.ts `checkCall`: -32009 -32601 -32003 -32602 -32008 -32004; a
 *   walk-in's contextId must be a UUID and its ListTasks must name one) → the agent's backend → each outgoing
 *   result decorated or stripped.
 *
 * Streams: an error known before the first event (an unknown task, a finished one, a turn refused) is the
 * result, not a stream, so every binding answers it as a plain reply. A stream's `events` end when the backend's
 * stream ends or when the call's signal aborts (client gone, server closing); a failure after the first event is
 * its last item. With `maxStreamsPerCaller`, a caller key (`caller:<id>`, else `address:<client address>`) holds
 * at most that many open streams: one more is answered HTTP 429 with Retry-After before it opens, and a stream's
 * slot is free again as soon as it ends, however it ends.
 */
import type { Authenticator } from '../auth/authenticator.js'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import type { JsonRpcError, JsonRpcId } from '../protocol/errors.js'
import type { A2ABackend, Caller, ServiceLogger } from '../protocol/backend.js'
import type { CallObserver } from '../telemetry/observer.js'
import { callerOf, checkAgents, unknownAgent, type AccessDecision } from './access.js'
import { spannedCall } from './call-span.js'
import { dispatch, type ServiceRegistry } from './dispatch.js'
import { streamSlots } from './streams.js'

/** Service parameters (A2A 1.0 §3.2.6): HTTP headers, lower-case names, as Node gives them. */
export type ServiceParameters = Readonly<Record<string, string | string[] | undefined>>

/** What a door hands down with every request, whatever the binding: the one type the doors fill. */
export interface DoorRequest {
  agentId: string
  /** `A2A-Version`, `A2A-Extensions`, `Authorization`, … */
  headers: ServiceParameters
  /** The query string's parameters (only `A2A-Version` is read: §3.6.1 allows it there). */
  query?: Readonly<Record<string, unknown>>
  /** Aborted by the door when the client goes away or the server closes; streams end with it. */
  signal: AbortSignal
  /**
   * The caller, when the door has authenticated the request itself. Otherwise an agent that requires
   * authentication has the service authenticate the request's Authorization header.
   */
  caller?: Caller
  log?: ServiceLogger
  /** The door's own request object (Fastify, Express), handed to user callbacks such as `extendedCard`. */
  doorRequest?: unknown
  /** The client's address as the door sees it (its trust-proxy rules): a walk-in's key for per-caller bounds. */
  clientAddress?: string
}

/** One A2A call, as a binding maps it from its wire. */
export interface A2ACall extends DoorRequest {
  /** The A2A 1.0 method name (`SendMessage`, …); anything else is -32601. */
  method: string
  /** The method's request message as ProtoJSON (checked here against the method's schema). */
  params: unknown
  /**
   * An error the binding found on its wire (the body, the JSON-RPC envelope), with the HTTP status it wants:
   * answered after negotiation and authentication, before any A2A check.
   */
  rejected?: { status: number, error: JsonRpcError }
  /** The binding's request id, passed on to backends (an upstream JSON-RPC request reuses it). Default 1. */
  id?: JsonRpcId
  /**
   * The protocol versions the binding answers (default: 1.0): a request for another gets -32009 naming them. The
   * JSON-RPC binding with 0.3 translation names both.
   */
  versions?: readonly string[]
  /**
   * The binding (or door) that made the call, for its server span and metrics: `jsonrpc`, `http+json`, `grpc`,
   * `jsonrpc-0.3`, `http+json-0.3`, `mcp`. Default `direct`.
   */
  binding?: string
}

/** One item of a stream: a StreamResponse (decorated or stripped), or the failure that ends the stream. */
export type StreamItem = { kind: 'event', value: unknown } | { kind: 'error', error: JsonRpcError }

export type A2AResult =
  /** The method's response message (ProtoJSON), decorated or stripped. */
  | { kind: 'value', method: string, headers: Record<string, string>, value: unknown }
  /** A streaming method's events, in order; a failure after the first is the last item. */
  | { kind: 'stream', method: string, headers: Record<string, string>, events: AsyncIterable<StreamItem> }
  /**
   * An A2A error (or a binding's `rejected` one). `status` is set where the HTTP status is not the error code's
   * (401, 429, 503, a binding's own); otherwise each binding maps the code.
   */
  | { kind: 'error', method: string, headers: Record<string, string>, error: JsonRpcError, status?: number }

export interface A2AServiceOptions {
  extension: ConverseExtension
  /** The backend of every agent the service serves (each must be declared to the extension). */
  backends: ReadonlyMap<string, A2ABackend>
  /**
   * The agents that require an authenticated caller, each with its authenticator. Agents not listed take
   * walk-in callers (no caller; credentials are not looked at).
   */
  authenticated?: ReadonlyMap<string, Authenticator>
  /**
   * Open streams (SendStreamingMessage, SubscribeToTask) per caller key at most, across this service's agents; one
   * more is refused with HTTP 429 before it opens. 0 or absent: no limit.
   */
  maxStreamsPerCaller?: number
  /** Told of every call's end and every stream's opening and end (the gateway's metrics). */
  observer?: CallObserver
}

export { STREAM_LIMIT_RETRY_AFTER_SEC } from './streams.js'
export { AUTHENTICATE_CHALLENGE, unknownAgent, type AccessDecision } from './access.js'

export interface A2AService {
  /** Whether an agent is served (doors may answer 404 before reading a body). */
  serves (agentId: string): boolean
  /**
   * The caller of a request to a served agent, decided as `call` decides it (401 / 503 included), for a door that
   * must know before it makes any A2A call (the MCP door authenticates each HTTP request once and hands the caller
   * to every call it makes).
   */
  authenticate (agentId: string, headers: ServiceParameters, log?: ServiceLogger): Promise<AccessDecision>
  /** Never rejects. */
  call (call: A2ACall): Promise<A2AResult>
}

/** The service createA2AService makes: its agents can change at runtime. */
export interface LiveA2AService extends A2AService {
  /**
   * Serves an agent at runtime, or replaces how one is served (its backend, and its authenticator when it requires a
   * caller; none: walk-ins): the agent must be declared to the extension (put it there first). A call already past
   * its lookup finishes on the backend it read; the next call gets this one.
   */
  putAgent (agentId: string, backend: A2ABackend, authenticator?: Authenticator): void
  /** Stops serving an agent (404 from the next call on; calls in flight finish). False when it was not served. */
  removeAgent (agentId: string): boolean
}

export function createA2AService (options: A2AServiceOptions): LiveA2AService {
  const { extension, observer } = options
  // Copies: putAgent and removeAgent change them, never the caller's maps.
  const backends = new Map(options.backends)
  const authenticated = new Map(options.authenticated ?? [])
  const maxStreams = options.maxStreamsPerCaller ?? 0
  if (!Number.isSafeInteger(maxStreams) || maxStreams < 0) throw new InvalidOptionError('maxStreamsPerCaller', 'must be an integer ≥ 0 (0: no limit)')
  checkAgents(extension, backends, authenticated)
  const registry: ServiceRegistry = { extension, backends, authenticated, slots: streamSlots(maxStreams) }

  async function authenticate (agentId: string, headers: ServiceParameters, log?: ServiceLogger): Promise<AccessDecision> {
    if (!backends.has(agentId)) return { kind: 'refused', status: 404, headers: {}, error: unknownAgent(agentId) }
    const authenticator = authenticated.get(agentId)
    if (authenticator === undefined) return { kind: 'allowed' }
    return await callerOf(headers, log, authenticator, {})
  }

  /** One call, decided (dispatch.ts) in its SERVER span (call-span.ts). */
  async function call (request: A2ACall): Promise<A2AResult> {
    return await spannedCall(request, backends.has(request.agentId), observer, async (spanned, state) => await dispatch(registry, spanned, state))
  }

  function putAgent (agentId: string, backend: A2ABackend, authenticator?: Authenticator): void {
    if (!extension.agents.has(agentId)) throw new InvalidOptionError('agentId', `"${agentId}" is not an agent declared to the extension`)
    if (authenticator !== undefined && typeof authenticator?.authenticate !== 'function') {
      throw new InvalidOptionError('authenticator', 'must be an Authenticator (an authenticate(headers) method)')
    }
    backends.set(agentId, backend)
    if (authenticator === undefined) authenticated.delete(agentId)
    else authenticated.set(agentId, authenticator)
  }

  function removeAgent (agentId: string): boolean {
    authenticated.delete(agentId)
    return backends.delete(agentId)
  }

  return { serves: (agentId) => backends.has(agentId), authenticate, call, putAgent, removeAgent }
}
