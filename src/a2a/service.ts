/**
 * The A2A service: one function from a transport-neutral request to a JSON reply or a stream of SSE frames.
 * Every door (Fastify, Express, MCP) parses bytes and writes what this answers; everything A2A happens here,
 * once, for JSON and SSE alike, in this order:
 *
 *   agent (404) → A2A-Extensions negotiation (the echo header goes on every reply of a known agent)
 *   → the caller, for an agent that requires one (401 + WWW-Authenticate, -32000; 503 when the identity
 *   provider cannot be asked) → body (-32700 / 413 / 415) → JSON-RPC and A2A checks (check-request.ts: -32600 -32009 -32601 -32602
 *   -32008 -32004 -32003; a walk-in's contextId must be a UUID and its ListTasks must name one: jsonrpc/walk-in.ts)
 *   → the agent's backend → each outgoing result decorated or stripped.
 *
 * Streams: `frames` yields `data: <JSON-RPC response>\n\n` per result and one `event: error` frame for a
 * failure; it ends when the backend's stream ends or when the request's signal aborts (client gone, server
 * closing) — the door aborts the signal, never needs to interrupt the iteration itself. With
 * `maxStreamsPerCaller`, a caller key (`caller:<id>`, else `address:<client address>`) holds at most that many
 * open streams: one more is answered HTTP 429 with Retry-After before it opens, and a stream's slot is free again
 * as soon as it ends, however it ends.
 */
import type { Authenticator } from '../auth/authenticator.js'
import { AuthenticationUnavailableError } from '../auth/errors.js'
import type { ConverseExtension, Negotiated } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { EXTENSIONS_HEADER } from '../core/uri.js'
import { checkEnvelope, checkRequest, type CheckedRequest } from '../jsonrpc/check-request.js'
import {
  contentTypeNotSupported, errorResponse, internalError, invalidRequest, parseError, successResponse, tooManyStreams, unauthenticated,
  type JsonRpcError, type JsonRpcId, type JsonRpcResponse
} from '../jsonrpc/errors.js'
import { STREAMING_METHODS } from '../jsonrpc/methods.js'
import { A2A_VERSION_HEADER, requestedVersion } from '../jsonrpc/version.js'
import type { A2ABackend, BackendContext, Caller, ServiceLogger } from './backend.js'
import { callerKey } from '../stores/caller-key.js'
import { errorFrame, frame, SSE_HEADERS } from './sse.js'

/** The request body as the door read it. */
export type RequestBody =
  /** Parsed JSON (any JSON value: the checks decide). */
  | { kind: 'json', value: unknown }
  /** No body and no Content-Type. */
  | { kind: 'absent' }
  /** Not JSON. */
  | { kind: 'invalid_json' }
  /** Larger than the body limit. */
  | { kind: 'too_large', limit: number }
  /** A Content-Type other than application/json or application/a2a+json. */
  | { kind: 'unsupported_media_type', contentType: string | undefined }

export interface A2AServiceRequest {
  agentId: string
  /** Lower-case header names, as Node gives them. */
  headers: Readonly<Record<string, string | string[] | undefined>>
  /** The query string's parameters (only `A2A-Version` is read). */
  query?: Readonly<Record<string, unknown>>
  body: RequestBody
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

export interface JsonReply {
  kind: 'json'
  status: number
  headers: Record<string, string>
  body: JsonRpcResponse | NotFoundBody
}

export interface StreamReply {
  kind: 'stream'
  status: 200
  headers: Record<string, string>
  /** SSE text, one complete frame per item. */
  frames: AsyncIterable<string>
}

export type A2AReply = JsonReply | StreamReply

/** The body of a 404 for an unknown agent (Fastify's not-found shape). */
export interface NotFoundBody {
  statusCode: 404
  error: 'Not Found'
  message: string
}

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
}

/** The challenge of a 401 (RFC 6750 §3). */
export const AUTHENTICATE_CHALLENGE = 'Bearer realm="a2a"'

/** Retry-After of a stream refused at the per-caller limit: streams end at no known time, so a short wait. */
export const STREAM_LIMIT_RETRY_AFTER_SEC = 5

/** Who may go on: the agent's authenticated caller (none for a walk-in agent), or the reply refusing the request. */
export type AccessDecision = { kind: 'allowed', caller?: Caller } | JsonReply

export interface A2AService {
  /** Whether an agent is served (doors may answer 404 before reading a body). */
  serves (agentId: string): boolean
  /**
   * The caller of a request to a served agent, decided as `handle` decides it (401 / 503 replies included), for a
   * door that must know before it makes any A2A call (the MCP door authenticates each HTTP request once and hands
   * the caller to every call it makes).
   */
  authenticate (agentId: string, headers: A2AServiceRequest['headers'], log?: ServiceLogger): Promise<AccessDecision>
  /** Never rejects. */
  handle (request: A2AServiceRequest): Promise<A2AReply>
}

const STOPPED = Symbol('stopped')

export function unknownAgentBody (agentId: string): NotFoundBody {
  return { statusCode: 404, error: 'Not Found', message: `unknown agent "${agentId.slice(0, 128)}"` }
}

export function createA2AService (options: A2AServiceOptions): A2AService {
  const { extension, backends } = options
  const authenticated = options.authenticated ?? new Map<string, Authenticator>()
  const maxStreams = options.maxStreamsPerCaller ?? 0
  if (!Number.isSafeInteger(maxStreams) || maxStreams < 0) throw new InvalidOptionError('maxStreamsPerCaller', 'must be an integer ≥ 0 (0: no limit)')
  /** Open streams per caller key; a key is dropped when its last stream ends. */
  const openStreams = new Map<string, number>()
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
   * The caller of a request to an agent that requires one, or the reply that refuses the request. The
   * credential's failure is never told apart, to the client or in the log.
   */
  async function callerOf (
    request: Pick<A2AServiceRequest, 'headers' | 'log'>, authenticator: Authenticator, headers: Record<string, string>, id: JsonRpcId
  ): Promise<Caller | JsonReply> {
    let caller: Caller | undefined
    try {
      caller = await authenticator.authenticate(request.headers)
    } catch (error) {
      if (error instanceof AuthenticationUnavailableError) {
        request.log?.warn({ code: error.code }, 'A2A request not authenticated: the identity provider cannot be reached')
        return json(503, { ...headers, 'retry-after': '5' }, errorResponse(id, internalError('authentication is unavailable; try again later')))
      }
    }
    if (caller !== undefined) return caller
    const error = unauthenticated()
    logError(request.log, undefined, error)
    return json(401, { ...headers, 'www-authenticate': AUTHENTICATE_CHALLENGE }, errorResponse(id, error))
  }

  async function authenticate (agentId: string, headers: A2AServiceRequest['headers'], log?: ServiceLogger): Promise<AccessDecision> {
    if (!backends.has(agentId)) return json(404, {}, unknownAgentBody(agentId))
    const authenticator = authenticated.get(agentId)
    if (authenticator === undefined) return { kind: 'allowed' }
    const outcome = await callerOf({ headers, log }, authenticator, {}, null)
    return 'kind' in outcome ? outcome : { kind: 'allowed', caller: outcome }
  }

  function json (status: number, headers: Record<string, string>, body: JsonRpcResponse | NotFoundBody): JsonReply {
    return { kind: 'json', status, headers, body }
  }

  function bodyError (body: Exclude<RequestBody, { kind: 'json' }>): { status: number, error: JsonRpcError } {
    switch (body.kind) {
      case 'too_large':
        return {
          status: 413,
          error: invalidRequest([{ field: 'request', description: `must not exceed ${body.limit} bytes` }], 'Request payload too large')
        }
      case 'unsupported_media_type':
        return { status: 415, error: contentTypeNotSupported(body.contentType) }
      default:
        return { status: 400, error: parseError() }
    }
  }

  async function handle (request: A2AServiceRequest): Promise<A2AReply> {
    const backend = backends.get(request.agentId)
    if (backend === undefined) return json(404, {}, unknownAgentBody(request.agentId))
    // Every backend's agent is declared to the extension (checked above).
    const negotiated = extension.negotiate(request.agentId, request.headers['a2a-extensions']) as Negotiated
    const headers: Record<string, string> = negotiated.echo === undefined ? {} : { [EXTENSIONS_HEADER]: negotiated.echo }
    let caller = request.caller
    const authenticator = authenticated.get(request.agentId)
    if (authenticator !== undefined && caller === undefined) {
      const outcome = await callerOf(request, authenticator, headers, idOf(request.body))
      if ('kind' in outcome) return outcome
      caller = outcome
    }
    const body = request.body
    if (body.kind !== 'json') {
      const { status, error } = bodyError(body)
      logError(request.log, undefined, error)
      return json(status, headers, errorResponse(null, error))
    }
    const version = requestedVersion(request.headers['a2a-version'], request.query?.[A2A_VERSION_HEADER])
    // No caller by now: an agent that takes walk-ins, and a request without one (a door may name a caller itself).
    const checked = checkRequest(body.value, backend.facts, { version, activated: negotiated.activated, walkIn: caller === undefined })
    if (!checked.ok) {
      logError(request.log, (body.value as { method?: unknown } | null)?.method, checked.response.error)
      return json(200, headers, checked.response)
    }
    const rpc = checked.request
    // What decoration reads of the request (its id, its message): as checked, in JSON names (core/proto-names.ts).
    const checkedBody = { id: rpc.id, params: rpc.params }
    const context: BackendContext = {
      agentId: request.agentId,
      requestedExtensions: negotiated.requested,
      activated: negotiated.activated,
      version,
      headers: request.headers,
      signal: request.signal,
      caller,
      log: request.log,
      doorRequest: request.doorRequest,
      clientAddress: request.clientAddress
    }
    if (STREAMING_METHODS.has(rpc.method)) {
      const release = holdStream(callerKey(caller?.id, request.clientAddress), request.signal)
      if (release === undefined) {
        const error = tooManyStreams(maxStreams, STREAM_LIMIT_RETRY_AFTER_SEC)
        logError(request.log, rpc.method, error)
        return json(429, { ...headers, 'retry-after': String(STREAM_LIMIT_RETRY_AFTER_SEC) }, errorResponse(rpc.id, error))
      }
      return { kind: 'stream', status: 200, headers: { ...headers, ...SSE_HEADERS }, frames: frames(backend, rpc, context, negotiated, checkedBody, release) }
    }
    let response: JsonRpcResponse
    try {
      const result = await backend.call(rpc, context)
      response = successResponse(rpc.id, await extension.transform(rpc.method, result, {
        agentId: request.agentId, negotiated, body: checkedBody, log: request.log
      }))
    } catch (error) {
      response = errorResponse(rpc.id, backend.toError(error, rpc, request.log))
      logError(request.log, rpc.method, response.error)
    }
    return json(200, headers, response)
  }

  /**
   * A stream slot of `key`, or undefined when the key holds the most it may. Given back once, by whichever comes
   * first: the stream's end or the request's signal (a door that aborts without reading the frames).
   */
  function holdStream (key: string, signal: AbortSignal): (() => void) | undefined {
    if (maxStreams === 0) return noop
    const open = openStreams.get(key) ?? 0
    if (open >= maxStreams) return undefined
    openStreams.set(key, open + 1)
    let held = true
    const release = (): void => {
      if (!held) return
      held = false
      signal.removeEventListener('abort', release)
      const left = (openStreams.get(key) as number) - 1
      if (left === 0) openStreams.delete(key)
      else openStreams.set(key, left)
    }
    signal.addEventListener('abort', release, { once: true })
    return release
  }

  async function * frames (
    backend: A2ABackend, rpc: CheckedRequest, context: BackendContext, negotiated: Negotiated, body: unknown, release: () => void
  ): AsyncGenerator<string, void, undefined> {
    const { signal, log } = context
    const source = backend.stream(rpc, context)
    let finished = false
    try {
      while (!signal.aborted) {
        const next = await nextOrStop(source, signal)
        if (next === STOPPED) break
        if (next.done === true) {
          finished = true
          break
        }
        const result = await extension.transform(rpc.method, next.value, { agentId: context.agentId, negotiated, body, log })
        if (signal.aborted) break
        yield frame(rpc.id, result)
      }
    } catch (error) {
      if (!signal.aborted) {
        const rpcError = backend.toError(error, rpc, log)
        logError(log, rpc.method, rpcError)
        yield errorFrame(rpc.id, rpcError)
      }
    } finally {
      release()
      // A source still waiting is told to stop; its rejection, if any, is of no interest any more.
      if (!finished) source.return?.().then(undefined, noop)
    }
  }

  return { serves: (agentId) => backends.has(agentId), authenticate, handle }
}

/**
 * The next result, or STOPPED as soon as the signal aborts. A fresh listener per call (removed when it
 * settles), so a long stream keeps no reaction per event alive.
 */
function nextOrStop (source: AsyncIterator<unknown, void, undefined>, signal: AbortSignal): Promise<IteratorResult<unknown, void> | typeof STOPPED> {
  return new Promise((resolve, reject) => {
    const stop = (): void => resolve(STOPPED)
    signal.addEventListener('abort', stop, { once: true })
    source.next().then((result) => {
      signal.removeEventListener('abort', stop)
      resolve(result)
    }, (error: unknown) => {
      signal.removeEventListener('abort', stop)
      reject(error)
    })
  })
}

/** The request's JSON-RPC id for a reply given before the checks, when the body has a readable one. */
function idOf (body: RequestBody): JsonRpcId {
  if (body.kind !== 'json') return null
  const envelope = checkEnvelope(body.value)
  return envelope.ok ? envelope.id : null
}

/** A JSON-RPC error reply is logged with its method and code (never the message text). */
function logError (log: ServiceLogger | undefined, method: unknown, error: JsonRpcError): void {
  log?.info({ method: typeof method === 'string' ? method.slice(0, 64) : undefined, code: error.code }, 'A2A error reply')
}

function noop (): void {}
