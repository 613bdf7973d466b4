/**
 * The checks of a request, in this order, before any lookup:
 *   JSON-RPC envelope (-32600, the JSON-RPC binding's own: checkEnvelope, and members outside params nesting too deep)
 *   → then, whatever the binding (checkCall): A2A-Version (-32009) → method (-32601) → push-config gate (-32003, before
 *   the params: the SDK does so and the conformance kit expects it) → nesting depth of the params (-32602) → ProtoJSON
 *   names (proto names taken as JSON names; a field under both is -32602, core/proto-names.ts) → params (-32602) → a typed converse call, when the request activated the extension (-32602) → a walk-in's contextId and
 *   ListTasks filter (-32602, walk-in.ts) → required extensions (-32008) → capability gates (-32004 streaming /
 *   extended card); then every unpaired surrogate left in the params' text becomes U+FFFD (well-formed.ts).
 * Batches are not served: an array body (empty or not) is answered with one -32600 error.
 */
import {
  errorResponse, extensionSupportRequired, invalidParams, invalidRequest, methodNotFound, pushNotificationNotSupported,
  unsupportedOperation, type FieldViolation, type JsonRpcError, type JsonRpcErrorResponse, type JsonRpcId
} from './errors.js'
import { withJsonNames } from '../core/proto-names.js'
import { readTypedCall } from '../core/typed-call.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { isA2AMethod, PUSH_CONFIG_METHODS, STREAMING_METHODS, type A2AMethod } from './methods.js'
import { MAX_NESTING_DEPTH, fieldPath, tooDeepPath } from './nesting-depth.js'
import { MAX_VIOLATIONS, validateParams } from './params.js'
import { checkVersion } from './version.js'
import { walkInViolations } from './walk-in.js'
import { wellFormed } from './well-formed.js'

/** What an agent offers, fixed at registration. "false or absent means unsupported" (§3.3.4). */
export interface AgentFacts {
  capabilities: { streaming: boolean, pushNotifications: boolean, extendedAgentCard: boolean }
  /** URIs of the card's extensions with `required: true`. */
  requiredExtensions: readonly string[]
}

/** What one request brings besides its body. */
export interface RequestFacts {
  /** The requested A2A version (see `requestedVersion`). */
  version: string
  /** The versions the binding answers; default SUPPORTED_A2A_VERSIONS (1.0). */
  versions?: readonly string[]
  /** Extension URIs activated for this request (requested ∩ declared). */
  activated: readonly string[]
  /** No caller, on an agent that takes walk-ins: its contextIds must be UUIDs, its ListTasks names one (walk-in.ts). */
  walkIn?: boolean
}

export interface CheckedRequest {
  id: JsonRpcId
  method: A2AMethod
  /** Validated against the method's schema; `{}` for a GetExtendedAgentCard without params. */
  params: Record<string, unknown>
}

export type CheckResult =
  | { ok: true, request: CheckedRequest }
  | { ok: false, response: JsonRpcErrorResponse }

export type EnvelopeResult =
  | { ok: true, id: JsonRpcId, method: string, params: unknown }
  | { ok: false, response: JsonRpcErrorResponse }

function isValidId (id: unknown): id is JsonRpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))
}

/**
 * The JSON-RPC 2.0 request object. A request without `id` (a notification) is still answered, with id null:
 * over HTTP every POST gets a response.
 */
export function checkEnvelope (body: unknown): EnvelopeResult {
  if (Array.isArray(body)) {
    const description = body.length === 0 ? 'an empty batch is not a request' : 'batch requests are not supported'
    return fail(null, invalidRequest([{ field: 'request', description }], 'Batch requests are not supported'))
  }
  if (body === null || typeof body !== 'object') {
    return fail(null, invalidRequest([{ field: 'request', description: 'must be a JSON-RPC 2.0 request object' }]))
  }
  const request = body as Record<string, unknown>
  const violations: FieldViolation[] = []
  const hasId = Object.hasOwn(request, 'id')
  const idOk = !hasId || isValidId(request.id)
  if (!idOk) violations.push({ field: 'id', description: 'must be a string, an integer or null' })
  if (request.jsonrpc !== '2.0') violations.push({ field: 'jsonrpc', description: 'must be "2.0"' })
  const method = request.method
  if (method === undefined) violations.push({ field: 'method', description: 'is required' })
  else if (typeof method !== 'string') violations.push({ field: 'method', description: 'must be a string' })
  else if (method === '') violations.push({ field: 'method', description: 'must not be empty' })
  const id = hasId && idOk ? request.id as JsonRpcId : null
  if (violations.length > 0) return fail(id, invalidRequest(violations))
  return { ok: true, id, method: method as string, params: request.params }
}

/** A call the binding mapped, checked: the method is an A2A method, the params passed its schema. */
export interface CheckedCall {
  method: A2AMethod
  /** Validated against the method's schema; `{}` for a GetExtendedAgentCard without params. */
  params: Record<string, unknown>
}

export type CallCheckResult = { ok: true, call: CheckedCall } | { ok: false, error: JsonRpcError }

/** Params nest one level less than a JSON-RPC body (the body object is level 1, `params` level 2). */
const MAX_PARAMS_DEPTH = MAX_NESTING_DEPTH - 1

/** The binding-neutral checks of one call (method as A2A 1.0 names it, params as ProtoJSON), in the order above. */
export function checkCall (method: string, raw: unknown, agent: AgentFacts, facts: RequestFacts): CallCheckResult {
  const versionError = checkVersion(facts.version, facts.versions)
  if (versionError !== undefined) return { ok: false, error: versionError }
  if (!isA2AMethod(method)) return { ok: false, error: methodNotFound(method) }
  if (PUSH_CONFIG_METHODS.has(method) && !agent.capabilities.pushNotifications) return { ok: false, error: pushNotificationNotSupported() }
  const tooDeep = tooDeepPath(raw, MAX_PARAMS_DEPTH)
  if (tooDeep !== undefined) {
    return { ok: false, error: invalidParams([{ field: fieldPath(tooDeep), description: `nests deeper than ${MAX_NESTING_DEPTH} levels` }]) }
  }
  const names = withJsonNames(method, raw)
  if (names.conflicts.length > 0) {
    return {
      ok: false,
      error: invalidParams(names.conflicts.slice(0, MAX_VIOLATIONS).map(({ field, protoName }) =>
        ({ field, description: `is also sent as ${protoName}: send one of the two names` })))
    }
  }
  const params = names.value
  const violations = validateParams(method, params) ?? typedCallViolations(method, params, facts.activated) ??
    (facts.walkIn === true ? walkInViolations(method, params) : undefined)
  if (violations !== undefined) return { ok: false, error: invalidParams(violations) }
  const missing = agent.requiredExtensions.filter((uri) => !facts.activated.includes(uri))
  if (missing.length > 0) return { ok: false, error: extensionSupportRequired(missing) }
  const gate = capabilityGate(method, agent.capabilities)
  if (gate !== undefined) return { ok: false, error: gate }
  return { ok: true, call: { method, params: wellFormed((params ?? {}) as Record<string, unknown>) } }
}

/** A JSON-RPC envelope member other than params nesting too deep: -32600 naming it, or undefined. */
export function envelopeTooDeep (body: Record<string, unknown>): JsonRpcError | undefined {
  for (const [key, value] of Object.entries(body)) {
    if (key === 'params') continue
    const path = tooDeepPath(value, MAX_PARAMS_DEPTH)
    if (path !== undefined) return invalidRequest([{ field: fieldPath([key, ...path]), description: `nests deeper than ${MAX_NESTING_DEPTH} levels` }])
  }
  return undefined
}

/** The whole JSON-RPC check of a body: the envelope, then checkCall. */
export function checkRequest (body: unknown, agent: AgentFacts, facts: RequestFacts): CheckResult {
  const envelope = checkEnvelope(body)
  if (!envelope.ok) return envelope
  const { id, method, params } = envelope
  const tooDeep = envelopeTooDeep(body as Record<string, unknown>)
  if (tooDeep !== undefined) return fail(id, tooDeep)
  const checked = checkCall(method, params, agent, facts)
  if (!checked.ok) return fail(id, checked.error)
  return { ok: true, request: { id, ...checked.call } }
}

/** A message that carries a converse typed call must carry a well-formed one (see core/typed-call.ts). */
function typedCallViolations (method: A2AMethod, params: unknown, activated: readonly string[]): FieldViolation[] | undefined {
  if (method !== 'SendMessage' && method !== 'SendStreamingMessage') return undefined
  const message = (params as { message: Record<string, unknown> }).message
  const reading = readTypedCall(message, activated.includes(CONVERSE_EXTENSION_URI))
  return reading.kind === 'invalid' ? [{ field: `message.${reading.field}`, description: reading.description }] : undefined
}

function capabilityGate (method: A2AMethod, capabilities: AgentFacts['capabilities']) {
  if (STREAMING_METHODS.has(method) && !capabilities.streaming) {
    return unsupportedOperation('Streaming is not supported by this agent', { method })
  }
  if (method === 'GetExtendedAgentCard' && !capabilities.extendedAgentCard) {
    return unsupportedOperation('This agent does not declare an extended agent card', { method })
  }
  return undefined
}

function fail (id: JsonRpcId, error: Parameters<typeof errorResponse>[1]): { ok: false, response: JsonRpcErrorResponse } {
  return { ok: false, response: errorResponse(id, error) }
}
