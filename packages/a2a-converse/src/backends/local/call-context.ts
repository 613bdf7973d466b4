/**
 * What the dispatcher (dispatch.ts) derives before anything runs: the facts a card declares (what the service checks
 * requests against) and the SDK call context of one request (tenant, caller, requested extensions, headers, and the
 * state the stores and push read: the caller key, the trace context).
 */
import { ServerCallContext, STATE_HEADERS_KEY } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../auth/sdk-user.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { CALLER_KEY_STATE } from '../../stores/caller-key.js'
import { TRACE_CONTEXT_STATE, type Context } from '../../telemetry/tracing.js'

export interface ContextInit {
  /** Extension URIs the request asked for. */
  requestedExtensions: readonly string[]
  version: string
  headers?: Record<string, string | string[] | undefined>
  /** The authenticated caller's id; absent for a walk-in. */
  callerId?: string
  /** The caller key per-caller bounds count by (packages/a2a-converse/src/stores/caller-key.ts); the stores read it from the context. */
  callerKey?: string
  /** The call's trace context as it is when asked (TRACE_CONTEXT_STATE); the traced store and push read it. */
  traceContext?: () => Context | undefined
}

interface Capabilities { streaming?: boolean, pushNotifications?: boolean, extendedAgentCard?: boolean }
interface ExtensionEntry { uri?: unknown, required?: unknown }

/** The facts an agent card (ProtoJSON) declares: its capabilities, and the URIs of its required extensions. */
export function factsOfAgentCard (card: Record<string, unknown>): AgentFacts {
  const capabilities = (card.capabilities ?? {}) as Capabilities & { extensions?: ExtensionEntry[] }
  return {
    capabilities: {
      streaming: capabilities.streaming === true,
      pushNotifications: capabilities.pushNotifications === true,
      extendedAgentCard: capabilities.extendedAgentCard === true
    },
    requiredExtensions: (capabilities.extensions ?? [])
      .filter((entry) => entry.required === true && typeof entry.uri === 'string')
      .map((entry) => entry.uri as string)
  }
}

/** The SDK call context of one request: tenant from params, the caller, the requested extensions, the headers. */
export function callContextOf (request: CheckedRequest, init: ContextInit): ServerCallContext {
  const tenant = request.params.tenant
  const state = new Map<string, unknown>([[STATE_HEADERS_KEY, init.headers ?? {}]])
  if (init.callerKey !== undefined) state.set(CALLER_KEY_STATE, init.callerKey)
  if (init.traceContext !== undefined) state.set(TRACE_CONTEXT_STATE, init.traceContext)
  return new ServerCallContext({
    requestedExtensions: [...init.requestedExtensions],
    requestedVersion: init.version,
    tenant: typeof tenant === 'string' && tenant !== '' ? tenant : undefined,
    user: init.callerId === undefined ? undefined : new AuthenticatedCaller(init.callerId),
    state
  })
}
