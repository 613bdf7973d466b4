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
import { AuthenticationUnavailableError } from '../auth/errors.js'
import type { ConverseExtension, Negotiated } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { CONVERSE_EXTENSION_URI, EXTENSIONS_HEADER } from '../core/uri.js'
import { checkCall, type CheckedRequest } from '../protocol/check-request.js'
import {
  CONVERSE_ERROR_DOMAIN, ERROR_INFO_TYPE, internalError, JsonRpcErrorCode, unauthenticated,
  type JsonRpcError, type JsonRpcId
} from '../protocol/errors.js'
import { isA2AMethod, STREAMING_METHODS } from '../protocol/methods.js'
import { A2A_VERSION_HEADER, requestedVersion } from '../protocol/version.js'
import type { A2ABackend, BackendContext, Caller, ServiceLogger } from '../protocol/backend.js'
import { A2A_RPC_SERVICE, answerAttributes, ATTR, summarizeResult, type AnswerSummary, type Attributes } from '../telemetry/attributes.js'
import type { CallObserver } from '../telemetry/observer.js'
import { GRPC_STATUS, grpcStatusOf } from '../protocol/grpc-status.js'
import { isStoreUnavailable, logError, underSpan, type CallState } from './call-state.js'
import { observedStream, openStream, streamSlots } from './streams.js'
import { extractTraceContext, inSpan, runActive, SpanKind, SpanStatusCode, startSpan } from '../telemetry/tracing.js'

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

/** The challenge of a 401 (RFC 6750 §3). */
export const AUTHENTICATE_CHALLENGE = 'Bearer realm="a2a"'

export { STREAM_LIMIT_RETRY_AFTER_SEC } from './streams.js'

/** Who may go on: the agent's authenticated caller (none for a walk-in agent), or the error refusing the request. */
export type AccessDecision = { kind: 'allowed', caller?: Caller } | { kind: 'refused', status: number, headers: Record<string, string>, error: JsonRpcError }

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

/** Methods whose result holds a turn's answer (counted as answers) or a task (its ids and state on the span). */
const TURN_METHODS: ReadonlySet<string> = new Set(['SendMessage', 'SendStreamingMessage'])
const TASK_RESULT_METHODS: ReadonlySet<string> = new Set(['GetTask', 'CancelTask'])

/** rpc.system of a binding's server span (OpenTelemetry RPC conventions; HTTP+JSON has no registered value). */
function rpcSystemOf (binding: string): string {
  if (binding === 'grpc') return 'grpc'
  if (binding.startsWith('http+json')) return 'a2a_http_json'
  return 'jsonrpc'
}

/** The error of a call to an agent the service does not serve (bindings answer 404 before calling). */
export function unknownAgent (agentId: string): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message: `unknown agent "${agentId.slice(0, 128)}"`,
    data: [{ '@type': ERROR_INFO_TYPE, reason: 'AGENT_NOT_FOUND', domain: CONVERSE_ERROR_DOMAIN, metadata: {} }]
  }
}

export function createA2AService (options: A2AServiceOptions): LiveA2AService {
  const { extension, observer } = options
  // Copies: putAgent and removeAgent change them, never the caller's maps.
  const backends = new Map(options.backends)
  const authenticated = new Map(options.authenticated ?? [])
  const maxStreams = options.maxStreamsPerCaller ?? 0
  if (!Number.isSafeInteger(maxStreams) || maxStreams < 0) throw new InvalidOptionError('maxStreamsPerCaller', 'must be an integer ≥ 0 (0: no limit)')
  const slots = streamSlots(maxStreams)
  for (const agentId of backends.keys()) {
    if (!extension.agents.has(agentId)) throw new InvalidOptionError('backends', `"${agentId}" is not an agent declared to the extension`)
  }
  for (const [agentId, authenticator] of authenticated) {
    if (!backends.has(agentId)) throw new InvalidOptionError('authenticated', `"${agentId}" is not an agent served here`)
    if (typeof authenticator?.authenticate !== 'function') {
      throw new InvalidOptionError('authenticated', `"${agentId}" needs an authenticator (an authenticate(headers) method)`)
    }
  }

  /**
   * The caller of a request to an agent that requires one, or the refusal. The credential's failure is never told
   * apart, to the client or in the log.
   */
  async function callerOf (
    headers: ServiceParameters, log: ServiceLogger | undefined, authenticator: Authenticator, replyHeaders: Record<string, string>
  ): Promise<AccessDecision> {
    let caller: Caller | undefined
    try {
      caller = await authenticator.authenticate(headers)
    } catch (error) {
      if (error instanceof AuthenticationUnavailableError) {
        log?.warn({ code: error.code }, 'A2A request not authenticated: the identity provider cannot be reached')
        return { kind: 'refused', status: 503, headers: { ...replyHeaders, 'retry-after': '5' }, error: internalError('authentication is unavailable; try again later') }
      }
    }
    if (caller !== undefined) return { kind: 'allowed', caller }
    const error = unauthenticated()
    logError(log, undefined, error)
    return { kind: 'refused', status: 401, headers: { ...replyHeaders, 'www-authenticate': AUTHENTICATE_CHALLENGE }, error }
  }

  async function authenticate (agentId: string, headers: ServiceParameters, log?: ServiceLogger): Promise<AccessDecision> {
    if (!backends.has(agentId)) return { kind: 'refused', status: 404, headers: {}, error: unknownAgent(agentId) }
    const authenticator = authenticated.get(agentId)
    if (authenticator === undefined) return { kind: 'allowed' }
    return await callerOf(headers, log, authenticator, {})
  }

  /**
   * One call in its SERVER span (OpenTelemetry RPC conventions: `lf.a2a.v1.A2AService/<method>`), a child of the
   * trace the request's `traceparent` names; the span ends with the result, a stream's with the stream.
   */
  async function call (request: A2ACall): Promise<A2AResult> {
    const started = performance.now()
    const binding = request.binding ?? 'direct'
    const method = isA2AMethod(request.method) ? request.method : 'unknown'
    const agentId = backends.has(request.agentId) ? request.agentId : 'unknown'
    const attributes: Attributes = {
      [ATTR.rpcSystem]: rpcSystemOf(binding),
      [ATTR.rpcService]: A2A_RPC_SERVICE,
      [ATTR.rpcMethod]: method,
      [ATTR.binding]: binding,
      [ATTR.agentId]: agentId
    }
    if (attributes[ATTR.rpcSystem] === 'jsonrpc') attributes[ATTR.rpcJsonRpcVersion] = '2.0'
    const { span, context: spanContext } = startSpan(`${A2A_RPC_SERVICE}/${method}`, SpanKind.SERVER, attributes, extractTraceContext(request.headers))
    const state: CallState = { storeUnavailable: false, traceContext: spanContext }
    const result = await runActive(span, spanContext, dispatch, request, state)
    const end = (answer: AnswerSummary | undefined, error: JsonRpcError | undefined, status: number | undefined): void => {
      if (answer !== undefined) span.setAttributes(answerAttributes(answer))
      if (error !== undefined) {
        span.setAttribute(ATTR.rpcJsonRpcErrorCode, error.code)
        if (error.code === JsonRpcErrorCode.InternalError || (status ?? 0) >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      }
      if (status !== undefined) span.setAttribute(ATTR.httpStatusCode, status)
      // The gRPC binding's own status (required by the RPC conventions for gRPC): OK, or the one the error travels as.
      if (binding === 'grpc') span.setAttribute(ATTR.rpcGrpcStatusCode, error === undefined ? GRPC_STATUS.OK : grpcStatusOf(error, status))
      span.end()
      if (observer === undefined) return
      tell(request.log, () => {
        observer.callEnded({
          agentId,
          binding,
          method,
          errorCode: error?.code,
          status,
          durationMs: performance.now() - started,
          answer: TURN_METHODS.has(method) ? answer : undefined,
          storeUnavailable: state.storeUnavailable
        })
      })
    }
    switch (result.kind) {
      case 'value':
        end(summaryOf(method, result.value), undefined, undefined)
        return result
      case 'error':
        end(undefined, result.error, result.status)
        return result
      default:
        if (observer !== undefined) tell(request.log, () => { observer.streamOpened(agentId, binding) })
        return {
          ...result,
          // The streams made here are generators (openStream: `events`, `nothing`).
          events: observedStream(result.events as AsyncGenerator<StreamItem, void, undefined>, span, spanContext, request.signal, (answer, error) => {
            if (observer !== undefined) tell(request.log, () => { observer.streamClosed(agentId, binding) })
            end(answer, error, undefined)
          })
        }
    }
  }

  async function dispatch (request: A2ACall, state: CallState): Promise<A2AResult> {
    const { method, log } = request
    const backend = backends.get(request.agentId)
    if (backend === undefined) return { kind: 'error', method, headers: {}, error: unknownAgent(request.agentId), status: 404 }
    // Every backend's agent is declared to the extension (checked above).
    const negotiated = extension.negotiate(request.agentId, request.headers['a2a-extensions']) as Negotiated
    const headers: Record<string, string> = negotiated.echo === undefined ? {} : { [EXTENSIONS_HEADER]: negotiated.echo }
    let caller = request.caller
    const authenticator = authenticated.get(request.agentId)
    if (authenticator !== undefined && caller === undefined) {
      const decision = await callerOf(request.headers, log, authenticator, headers)
      if (decision.kind === 'refused') return { kind: 'error', method, headers: decision.headers, error: decision.error, status: decision.status }
      caller = decision.caller
    }
    if (request.rejected !== undefined) {
      logError(log, undefined, request.rejected.error)
      return { kind: 'error', method, headers, error: request.rejected.error, status: request.rejected.status }
    }
    const version = requestedVersion(request.headers['a2a-version'], request.query?.[A2A_VERSION_HEADER])
    // No caller by now: an agent that takes walk-ins, and a request without one (a door may name a caller itself).
    const checked = checkCall(method, request.params, backend.facts, { version, versions: request.versions, activated: negotiated.activated, walkIn: caller === undefined })
    if (!checked.ok) {
      logError(log, method, checked.error)
      return { kind: 'error', method, headers, error: checked.error }
    }
    const rpc: CheckedRequest = { id: request.id ?? 1, ...checked.call }
    const context: BackendContext = {
      agentId: request.agentId,
      requestedExtensions: negotiated.requested,
      activated: negotiated.activated,
      version,
      headers: request.headers,
      signal: request.signal,
      caller,
      log,
      doorRequest: request.doorRequest,
      clientAddress: request.clientAddress,
      traceContext: state.traceContext
    }
    const decorate = async (result: unknown): Promise<unknown> => await extension.transform(rpc.method, result, {
      agentId: request.agentId, negotiated, body: { id: rpc.id, method: rpc.method, params: rpc.params }, log, traceContext: state.traceContext
    })
    if (STREAMING_METHODS.has(rpc.method)) return await openStream(backend, rpc, context, headers, decorate, state, slots)
    try {
      const value = await inSpan(`converse.backend ${rpc.method}`, SpanKind.INTERNAL, { [ATTR.agentId]: request.agentId },
        async (_span, backendSpan) => await underSpan(context, backendSpan, async () => await backend.call(rpc, context)), { parent: state.traceContext })
      return { kind: 'value', method, headers, value: await decorate(value) }
    } catch (error) {
      state.storeUnavailable = isStoreUnavailable(error)
      const rpcError = backend.toError(error, rpc, log)
      logError(log, method, rpcError)
      return { kind: 'error', method, headers, error: rpcError }
    }
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

/** The summary of a value result: a turn's answer, or a task's ids and state. */
function summaryOf (method: string, value: unknown): AnswerSummary | undefined {
  if (TURN_METHODS.has(method)) return summarizeResult(value, CONVERSE_EXTENSION_URI)
  if (TASK_RESULT_METHODS.has(method)) return summarizeResult({ task: value }, CONVERSE_EXTENSION_URI)
  return undefined
}

/** Tells the call's observer: what it throws is logged, never the call's failure (it runs inside the call). */
function tell (log: ServiceLogger | undefined, what: () => void): void {
  try {
    what()
  } catch (error) {
    log?.error({ err: error }, 'the A2A call observer threw; the call is answered as if it had not')
  }
}
