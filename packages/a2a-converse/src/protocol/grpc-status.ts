/**
 * The gRPC status of an A2A error (A2A 1.0 §5.4's table, §10.6), as plain numbers: the gRPC binding answers with it
 * and the service's span names it (`rpc.grpc.status_code`), without loading @grpc/grpc-js where no gRPC door runs.
 * test/library/bindings/grpc-status.test.ts holds the numbers to @grpc/grpc-js's `status` enum.
 */
import { JsonRpcErrorCode, type JsonRpcError } from './errors.js'

/** gRPC status codes (the numbers every gRPC implementation uses). */
export const GRPC_STATUS = Object.freeze({
  OK: 0,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16
})

/**
 * JSON-RPC code (the A2A error's identity here) → gRPC status, as §5.4's table maps them. The SDK's `grpcStatusFor`
 * differs for three (-32003, -32004, -32009: FAILED_PRECONDITION where §5.4 says UNIMPLEMENTED); the spec is followed,
 * as on HTTP+JSON (whose `status` names the same code), and the SDK's clients, which read the ErrorInfo reason, still
 * get their typed errors (docs/grpc.md).
 */
const BY_CODE: ReadonlyMap<number, number> = new Map([
  [JsonRpcErrorCode.ParseError, GRPC_STATUS.INVALID_ARGUMENT],
  [JsonRpcErrorCode.InvalidRequest, GRPC_STATUS.INVALID_ARGUMENT],
  [JsonRpcErrorCode.MethodNotFound, GRPC_STATUS.UNIMPLEMENTED],
  [JsonRpcErrorCode.InvalidParams, GRPC_STATUS.INVALID_ARGUMENT],
  [JsonRpcErrorCode.InternalError, GRPC_STATUS.INTERNAL],
  [JsonRpcErrorCode.TaskNotFound, GRPC_STATUS.NOT_FOUND],
  [JsonRpcErrorCode.TaskNotCancelable, GRPC_STATUS.FAILED_PRECONDITION],
  [JsonRpcErrorCode.PushNotificationNotSupported, GRPC_STATUS.UNIMPLEMENTED],
  [JsonRpcErrorCode.UnsupportedOperation, GRPC_STATUS.UNIMPLEMENTED],
  [JsonRpcErrorCode.ContentTypeNotSupported, GRPC_STATUS.INVALID_ARGUMENT],
  [JsonRpcErrorCode.InvalidAgentResponse, GRPC_STATUS.INTERNAL],
  [JsonRpcErrorCode.ExtendedAgentCardNotConfigured, GRPC_STATUS.FAILED_PRECONDITION],
  [JsonRpcErrorCode.ExtensionSupportRequired, GRPC_STATUS.FAILED_PRECONDITION],
  [JsonRpcErrorCode.VersionNotSupported, GRPC_STATUS.UNIMPLEMENTED]
])

/** The HTTP statuses the service (or a door) sets itself → gRPC status. */
const BY_HTTP_STATUS: ReadonlyMap<number, number> = new Map([
  [400, GRPC_STATUS.INVALID_ARGUMENT],
  [401, GRPC_STATUS.UNAUTHENTICATED],
  [404, GRPC_STATUS.NOT_FOUND],
  [429, GRPC_STATUS.RESOURCE_EXHAUSTED],
  [503, GRPC_STATUS.UNAVAILABLE]
])

/**
 * The gRPC status of an error: the HTTP status the service chose when it chose one (401, 429, 503, 404), else the
 * A2A error type's. A -32000 error without a status is a bound on kept work: RESOURCE_EXHAUSTED, as on HTTP+JSON.
 */
export function grpcStatusOf (error: JsonRpcError, httpStatus?: number): number {
  const chosen = httpStatus === undefined ? undefined : BY_HTTP_STATUS.get(httpStatus)
  if (chosen !== undefined) return chosen
  const known = BY_CODE.get(error.code)
  if (known !== undefined) return known
  return error.code === JsonRpcErrorCode.ServerError ? GRPC_STATUS.RESOURCE_EXHAUSTED : GRPC_STATUS.INTERNAL
}
