/**
 * JSON-RPC 2.0 error objects as A2A 1.0 wants them (§5.4, §9.5): `data` is an array of ProtoJSON `Any`
 * objects. A2A errors (-32001…-32009) carry one `google.rpc.ErrorInfo` (reason, domain a2a-protocol.org,
 * metadata string→string); invalid requests and invalid params carry `google.rpc.BadRequest` field
 * violations. Every builder returns a fresh plain object, ready for JSON.stringify.
 */

export const JSONRPC_VERSION = '2.0'
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org'
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo'
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest'

export const JsonRpcErrorCode = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  InvalidAgentResponse: -32006,
  ExtendedAgentCardNotConfigured: -32007,
  ExtensionSupportRequired: -32008,
  VersionNotSupported: -32009,
  /**
   * The server-error code JSON-RPC 2.0 leaves to implementations and A2A (which takes -32001…-32099) leaves
   * free: A2A assigns no JSON-RPC code to authentication failures or rate limits (§3.3.2, "custom error").
   * The HTTP status (401, 429) and the ErrorInfo reason (UNAUTHENTICATED, RATE_LIMITED) tell them apart.
   */
  ServerError: -32000
})

/** The ErrorInfo domain of errors this package defines (not A2A's). */
export const CONVERSE_ERROR_DOMAIN = 'a2a-converse'

/** A JSON-RPC id: string, integer or null (null when the request's id could not be read). */
export type JsonRpcId = string | number | null

export interface ErrorInfoDetail {
  '@type': typeof ERROR_INFO_TYPE
  reason: string
  domain: typeof A2A_ERROR_DOMAIN | typeof CONVERSE_ERROR_DOMAIN
  metadata: Record<string, string>
}

export interface FieldViolation {
  /** Path inside `params` (`message.parts[0]`), or the envelope member (`jsonrpc`, `id`, `method`). */
  field: string
  description: string
}

export interface BadRequestDetail {
  '@type': typeof BAD_REQUEST_TYPE
  fieldViolations: FieldViolation[]
}

export type ErrorDetail = ErrorInfoDetail | BadRequestDetail

export interface JsonRpcError {
  code: number
  message: string
  data?: ErrorDetail[]
}

export interface JsonRpcErrorResponse {
  jsonrpc: typeof JSONRPC_VERSION
  id: JsonRpcId
  error: JsonRpcError
}

export interface JsonRpcSuccessResponse {
  jsonrpc: typeof JSONRPC_VERSION
  id: JsonRpcId
  result: unknown
}

export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse

const MAX_ECHO = 128

/** Client-supplied text quoted in a message is cut, so an error never grows with the request. */
function quote (value: string): string {
  return JSON.stringify(value.length > MAX_ECHO ? `${value.slice(0, MAX_ECHO)}…` : value)
}

/** Any A2A error (-32001…-32099): code, message and one ErrorInfo with the given reason and metadata. */
export function a2aError (code: number, reason: string, message: string, metadata: Record<string, string> = {}): JsonRpcError {
  return { code, message, data: [{ '@type': ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN, metadata }] }
}

function badRequest (code: number, message: string, violations: readonly FieldViolation[]): JsonRpcError {
  return { code, message, data: [{ '@type': BAD_REQUEST_TYPE, fieldViolations: violations.map((v) => ({ ...v })) }] }
}

/** -32700: the body is not JSON. */
export function parseError (): JsonRpcError {
  return { code: JsonRpcErrorCode.ParseError, message: 'Invalid JSON payload' }
}

/** -32600: JSON, but not a JSON-RPC 2.0 request object we answer. */
export function invalidRequest (violations: readonly FieldViolation[], message = 'Invalid JSON-RPC request'): JsonRpcError {
  return badRequest(JsonRpcErrorCode.InvalidRequest, message, violations)
}

/** -32601: not an A2A 1.0 method (0.3 names such as `message/send` included). */
export function methodNotFound (method: string): JsonRpcError {
  return { code: JsonRpcErrorCode.MethodNotFound, message: `Method not found: ${quote(method)}` }
}

/** -32602: params fail the method's schema (or the request handler's own checks). */
export function invalidParams (violations: readonly FieldViolation[]): JsonRpcError {
  return badRequest(JsonRpcErrorCode.InvalidParams, 'Invalid parameters', violations)
}

/** -32603: never carries the cause; log it instead. */
export function internalError (message = 'Internal error'): JsonRpcError {
  return { code: JsonRpcErrorCode.InternalError, message }
}

export function taskNotFound (taskId?: string, message = 'Task not found'): JsonRpcError {
  return a2aError(JsonRpcErrorCode.TaskNotFound, 'TASK_NOT_FOUND', message, taskId === undefined ? {} : { taskId })
}

export function taskNotCancelable (taskId?: string, message = 'Task cannot be canceled'): JsonRpcError {
  return a2aError(JsonRpcErrorCode.TaskNotCancelable, 'TASK_NOT_CANCELABLE', message, taskId === undefined ? {} : { taskId })
}

export function pushNotificationNotSupported (message = 'Push notifications are not supported by this agent'): JsonRpcError {
  return a2aError(JsonRpcErrorCode.PushNotificationNotSupported, 'PUSH_NOTIFICATION_NOT_SUPPORTED', message)
}

export function unsupportedOperation (message = 'This operation is not supported', metadata: Record<string, string> = {}): JsonRpcError {
  return a2aError(JsonRpcErrorCode.UnsupportedOperation, 'UNSUPPORTED_OPERATION', message, metadata)
}

/** -32005, used for a request Content-Type other than application/json too (as @a2a-js/sdk does). */
export function contentTypeNotSupported (contentType?: string, message?: string): JsonRpcError {
  const metadata: Record<string, string> = { supportedContentTypes: 'application/json' }
  if (contentType !== undefined) metadata.contentType = contentType.slice(0, MAX_ECHO)
  return a2aError(JsonRpcErrorCode.ContentTypeNotSupported, 'CONTENT_TYPE_NOT_SUPPORTED',
    message ?? (contentType === undefined
      ? 'Content-Type is required; expected application/json'
      : `Unsupported Content-Type ${quote(contentType)}; expected application/json`), metadata)
}

export function invalidAgentResponse (message = 'Invalid agent response'): JsonRpcError {
  return a2aError(JsonRpcErrorCode.InvalidAgentResponse, 'INVALID_AGENT_RESPONSE', message)
}

export function extendedAgentCardNotConfigured (message = 'Extended agent card is not configured'): JsonRpcError {
  return a2aError(JsonRpcErrorCode.ExtendedAgentCardNotConfigured, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', message)
}

/** -32008 with metadata.missingExtensions = the required URIs the request did not activate, comma-separated. */
export function extensionSupportRequired (missing: readonly string[]): JsonRpcError {
  return a2aError(JsonRpcErrorCode.ExtensionSupportRequired, 'EXTENSION_SUPPORT_REQUIRED',
    'Required extension not activated', { missingExtensions: missing.join(',') })
}

/** -32009 (§3.6.2): metadata.requestedVersion / supportedVersions, as a2a-js and the spec example show. */
export function versionNotSupported (requested: string, supported: readonly string[]): JsonRpcError {
  const shown = requested.slice(0, 32)
  return a2aError(JsonRpcErrorCode.VersionNotSupported, 'VERSION_NOT_SUPPORTED',
    `A2A version ${shown} is not supported`, { requestedVersion: shown, supportedVersions: supported.join(',') })
}

/** -32000 (HTTP 401): the request carries no valid credential. Never says which part of it failed. */
export function unauthenticated (): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message: 'Authentication required: send a valid credential as Authorization: Bearer <credential>',
    data: [{ '@type': ERROR_INFO_TYPE, reason: 'UNAUTHENTICATED', domain: CONVERSE_ERROR_DOMAIN, metadata: {} }]
  }
}

/** -32000 (HTTP 429): too many requests from this caller (or client address); retry after `retryAfterSec`. */
export function rateLimited (retryAfterSec: number): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message: `Rate limit exceeded; retry in ${retryAfterSec} s`,
    data: [{ '@type': ERROR_INFO_TYPE, reason: 'RATE_LIMITED', domain: CONVERSE_ERROR_DOMAIN, metadata: { retryAfterSeconds: String(retryAfterSec) } }]
  }
}

/**
 * -32000 (HTTP 429): this caller (or client address) holds as many open streams as it may; one ends, then retry.
 */
export function tooManyStreams (limit: number, retryAfterSec: number): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message: `Too many open streams: at most ${limit} per caller; close one, or retry in ${retryAfterSec} s`,
    data: [{
      '@type': ERROR_INFO_TYPE,
      reason: 'TOO_MANY_STREAMS',
      domain: CONVERSE_ERROR_DOMAIN,
      metadata: { maxStreams: String(limit), retryAfterSeconds: String(retryAfterSec) }
    }]
  }
}

/**
 * -32000: a bound on kept work refused a new task or conversation (a per-caller cap, or a store full of open work);
 * nothing ran. A2A has no quota error: like the rate limit, the server-error code with an ErrorInfo, reason
 * RESOURCE_EXHAUSTED (gRPC's status for a quota), `cap` naming the bound and `limit` its value. Not -32603: the
 * client's own open work caused it, and it can act on it (finish or cancel a task, try later).
 */
export function capReached (cap: string, limit: number, message: string): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message,
    data: [{ '@type': ERROR_INFO_TYPE, reason: 'RESOURCE_EXHAUSTED', domain: CONVERSE_ERROR_DOMAIN, metadata: { cap, limit: String(limit) } }]
  }
}

export function errorResponse (id: JsonRpcId, error: JsonRpcError): JsonRpcErrorResponse {
  return { jsonrpc: JSONRPC_VERSION, id, error }
}

export function successResponse (id: JsonRpcId, result: unknown): JsonRpcSuccessResponse {
  return { jsonrpc: JSONRPC_VERSION, id, result }
}
