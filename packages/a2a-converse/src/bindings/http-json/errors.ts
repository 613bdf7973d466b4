/**
 * A2A errors on the HTTP+JSON binding (A2A 1.0 §11.6, §5.4): the HTTP status of the error's A2A type, and the
 * AIP-193 body `{"error": {"code": <HTTP status>, "status": <google.rpc.Code name>, "message", "details": [...]}}`,
 * whose `details` are the error's own (`ErrorInfo` for A2A errors, `BadRequest` field violations for invalid
 * params). The `status` name is the gRPC status §5.4 gives the error type; errors A2A leaves to implementations
 * (authentication, rate and stream limits, bounds) keep the HTTP status the service chose and its usual name.
 */
import { JsonRpcErrorCode, type JsonRpcError, type ErrorDetail } from '../../protocol/errors.js'

export interface RestErrorBody {
  error: { code: number, status: string, message: string, details: ErrorDetail[] }
}

/** JSON-RPC code → [HTTP status, google.rpc.Code name] (§5.4; the JSON-RPC-only codes as the SDK maps them). */
const BY_CODE: ReadonlyMap<number, readonly [number, string]> = new Map([
  [JsonRpcErrorCode.ParseError, [400, 'INVALID_ARGUMENT']],
  [JsonRpcErrorCode.InvalidRequest, [400, 'INVALID_ARGUMENT']],
  [JsonRpcErrorCode.MethodNotFound, [404, 'NOT_FOUND']],
  [JsonRpcErrorCode.InvalidParams, [400, 'INVALID_ARGUMENT']],
  [JsonRpcErrorCode.InternalError, [500, 'INTERNAL']],
  [JsonRpcErrorCode.TaskNotFound, [404, 'NOT_FOUND']],
  [JsonRpcErrorCode.TaskNotCancelable, [409, 'FAILED_PRECONDITION']],
  [JsonRpcErrorCode.PushNotificationNotSupported, [400, 'UNIMPLEMENTED']],
  [JsonRpcErrorCode.UnsupportedOperation, [400, 'UNIMPLEMENTED']],
  [JsonRpcErrorCode.ContentTypeNotSupported, [415, 'INVALID_ARGUMENT']],
  [JsonRpcErrorCode.InvalidAgentResponse, [502, 'INTERNAL']],
  [JsonRpcErrorCode.ExtendedAgentCardNotConfigured, [400, 'FAILED_PRECONDITION']],
  [JsonRpcErrorCode.ExtensionSupportRequired, [400, 'FAILED_PRECONDITION']],
  [JsonRpcErrorCode.VersionNotSupported, [400, 'UNIMPLEMENTED']]
])

/** The names of the statuses the service sets itself. */
const BY_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'INVALID_ARGUMENT'],
  [401, 'UNAUTHENTICATED'],
  [404, 'NOT_FOUND'],
  [405, 'UNIMPLEMENTED'],
  [413, 'INVALID_ARGUMENT'],
  [415, 'INVALID_ARGUMENT'],
  [429, 'RESOURCE_EXHAUSTED'],
  [500, 'INTERNAL'],
  [503, 'UNAVAILABLE']
])

/**
 * The HTTP status of an error: the one the service (or the binding) chose, else the code's. A -32000 error
 * without one is a bound on kept work (RESOURCE_EXHAUSTED: 429, the client can act on it).
 */
export function restStatusOf (error: JsonRpcError, status?: number): number {
  if (status !== undefined) return status
  const known = BY_CODE.get(error.code)
  if (known !== undefined) return known[0]
  return error.code === JsonRpcErrorCode.ServerError ? 429 : 500
}

export function restErrorBody (error: JsonRpcError, httpStatus: number): RestErrorBody {
  const byCode = BY_CODE.get(error.code)
  const name = byCode !== undefined && byCode[0] === httpStatus ? byCode[1] : BY_STATUS.get(httpStatus) ?? 'UNKNOWN'
  return { error: { code: httpStatus, status: name, message: error.message, details: error.data ?? [] } }
}
