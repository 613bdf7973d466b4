/**
 * One call decided, in the service's order (service.ts): negotiation (the echo header), the caller, an error the
 * binding found on its wire, the A2A checks, then the agent's backend and each result decorated. What it reads —
 * the agents served, their authenticators, the stream slots — comes in as the service's registry.
 */
import type { Authenticator } from '../auth/authenticator.js'
import type { ConverseExtension, Negotiated } from '../core/converse-extension.js'
import { EXTENSIONS_HEADER } from '../core/uri.js'
import { checkCall, type CheckedRequest } from '../protocol/check-request.js'
import { STREAMING_METHODS } from '../protocol/methods.js'
import { A2A_VERSION_HEADER, requestedVersion } from '../protocol/version.js'
import type { A2ABackend, BackendContext } from '../protocol/backend.js'
import { ATTR } from '../telemetry/attributes.js'
import { inSpan, SpanKind } from '../telemetry/tracing.js'
import { isStoreUnavailable, logError, underSpan, type CallState } from './call-state.js'
import { callerOf, unknownAgent } from './access.js'
import type { A2ACall, A2AResult } from './service.js'
import { openStream, type StreamSlots } from './streams.js'

/** What the service serves now (putAgent and removeAgent change it) and what its streams share. */
export interface ServiceRegistry {
  extension: ConverseExtension
  backends: ReadonlyMap<string, A2ABackend>
  authenticated: ReadonlyMap<string, Authenticator>
  slots: StreamSlots
}

export async function dispatch (registry: ServiceRegistry, request: A2ACall, state: CallState): Promise<A2AResult> {
  const { method, log } = request
  const backend = registry.backends.get(request.agentId)
  if (backend === undefined) return { kind: 'error', method, headers: {}, error: unknownAgent(request.agentId), status: 404 }
  // Every backend's agent is declared to the extension (checked at construction and by putAgent).
  const negotiated = registry.extension.negotiate(request.agentId, request.headers['a2a-extensions']) as Negotiated
  const headers: Record<string, string> = negotiated.echo === undefined ? {} : { [EXTENSIONS_HEADER]: negotiated.echo }
  let caller = request.caller
  const authenticator = registry.authenticated.get(request.agentId)
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
  const decorate = async (result: unknown): Promise<unknown> => await registry.extension.transform(rpc.method, result, {
    agentId: request.agentId, negotiated, body: { id: rpc.id, method: rpc.method, params: rpc.params }, log, traceContext: state.traceContext
  })
  if (STREAMING_METHODS.has(rpc.method)) return await openStream(backend, rpc, context, headers, decorate, state, registry.slots)
  return await backendValue(backend, rpc, context, { method, headers }, decorate, state)
}

/** A unary call's value from the backend, in its INTERNAL span, decorated; or the backend's error as the result. */
async function backendValue (
  backend: A2ABackend, rpc: CheckedRequest, context: BackendContext, reply: { method: string, headers: Record<string, string> },
  decorate: (result: unknown) => Promise<unknown>, state: CallState
): Promise<A2AResult> {
  const { method, headers } = reply
  const { log } = context
  try {
    const value = await inSpan(`converse.backend ${rpc.method}`, SpanKind.INTERNAL, { [ATTR.agentId]: context.agentId },
      async (_span, backendSpan) => await underSpan(context, backendSpan, async () => await backend.call(rpc, context)), { parent: state.traceContext })
    return { kind: 'value', method, headers, value: await decorate(value) }
  } catch (error) {
    state.storeUnavailable = isStoreUnavailable(error)
    const rpcError = backend.toError(error, rpc, log)
    logError(log, method, rpcError)
    return { kind: 'error', method, headers, error: rpcError }
  }
}
