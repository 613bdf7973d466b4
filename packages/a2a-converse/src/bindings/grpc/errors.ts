/**
 * A2A errors on the gRPC binding (A2A 1.0 §10.6, §5.4): the gRPC status code of the error's A2A type, and the
 * `grpc-status-details-bin` trailer holding a `google.rpc.Status` whose details are the error's own, binary-encoded
 * (`ErrorInfo` for A2A errors, `BadRequest` field violations for invalid params) — what the official clients read
 * (the SDK's `fromGrpcError` turns the ErrorInfo reason back into its typed error). Errors A2A leaves to
 * implementations (authentication, rate and stream limits, bounds) take the code of the HTTP status the service
 * chose: 401 UNAUTHENTICATED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE; an unknown agent is NOT_FOUND.
 */
import type { StatusObject } from '@grpc/grpc-js'
import { BinaryWriter, Metadata, status as GrpcStatus } from '../../peers/grpc.js'
import { ERROR_INFO_TYPE, type ErrorDetail, type JsonRpcError } from '../../protocol/errors.js'
import { grpcStatusOf as statusOf } from '../../protocol/grpc-status.js'

/** The trailer of a `google.rpc.Status` (the gRPC richer error model). */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin'

/** The gRPC status of an error (packages/a2a-converse/src/protocol/grpc-status.ts: §5.4's table; the service's spans name it too). */
export function grpcStatusOf (error: JsonRpcError, httpStatus?: number): GrpcStatus {
  return statusOf(error, httpStatus) as GrpcStatus
}

/**
 * The error as a gRPC status: code, message (the A2A error's, never a stack), and trailers carrying `headers`
 * (the extension echo, `www-authenticate`, `retry-after`) and the `google.rpc.Status` details.
 */
export function grpcError (error: JsonRpcError, httpStatus: number | undefined, headers: Readonly<Record<string, string>>): Partial<StatusObject> {
  const code = grpcStatusOf(error, httpStatus)
  const metadata = new Metadata()
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value)
  metadata.set(STATUS_DETAILS_KEY, encodeStatus(code, error.message, error.data ?? []))
  return { code, details: error.message, metadata }
}

/** `google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }` */
export function encodeStatus (code: number, message: string, details: readonly ErrorDetail[]): Buffer {
  const writer = new BinaryWriter()
  if (code !== 0) writer.uint32(8).int32(code)
  if (message !== '') writer.uint32(18).string(message)
  for (const detail of details) {
    // google.protobuf.Any { string type_url = 1; bytes value = 2; }
    writer.uint32(26).fork().uint32(10).string(detail['@type']).uint32(18).bytes(encodeDetail(detail)).join()
  }
  return Buffer.from(writer.finish())
}

function encodeDetail (detail: ErrorDetail): Uint8Array {
  const writer = new BinaryWriter()
  if (detail['@type'] === ERROR_INFO_TYPE) {
    // google.rpc.ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
    writer.uint32(10).string(detail.reason).uint32(18).string(detail.domain)
    for (const [key, value] of Object.entries(detail.metadata)) writer.uint32(26).fork().uint32(10).string(key).uint32(18).string(value).join()
  } else {
    // google.rpc.BadRequest { repeated FieldViolation field_violations = 1; } FieldViolation { field = 1; description = 2; }
    for (const violation of detail.fieldViolations) {
      writer.uint32(10).fork().uint32(10).string(violation.field).uint32(18).string(violation.description).join()
    }
  }
  return writer.finish()
}
