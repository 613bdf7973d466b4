/**
 * The gRPC status numbers the service and the gRPC binding use (packages/a2a-converse/src/protocol/grpc-status.ts, kept free of
 * @grpc/grpc-js) are @grpc/grpc-js's own, and §5.4's table maps through them.
 */
import t from 'tap'
import { status } from '@grpc/grpc-js'
import { GRPC_STATUS, grpcStatusOf } from '../../../packages/a2a-converse/src/protocol/grpc-status.js'
import { JsonRpcErrorCode } from '../../../packages/a2a-converse/src/protocol/errors.js'

t.test('every named status is the number @grpc/grpc-js gives it', async (t) => {
  for (const [name, value] of Object.entries(GRPC_STATUS)) t.equal(value, status[name as keyof typeof status], name)
})

t.test('§5.4: the error type, else the HTTP status the service chose; an unlisted code is INTERNAL', async (t) => {
  t.equal(grpcStatusOf({ code: JsonRpcErrorCode.TaskNotFound, message: 'x' }), status.NOT_FOUND)
  t.equal(grpcStatusOf({ code: JsonRpcErrorCode.VersionNotSupported, message: 'x' }), status.UNIMPLEMENTED)
  t.equal(grpcStatusOf({ code: JsonRpcErrorCode.ServerError, message: 'x' }, 429), status.RESOURCE_EXHAUSTED)
  t.equal(grpcStatusOf({ code: JsonRpcErrorCode.ServerError, message: 'x' }), status.RESOURCE_EXHAUSTED)
  t.equal(grpcStatusOf({ code: -31999, message: 'x' }), status.INTERNAL)
  t.equal(grpcStatusOf({ code: JsonRpcErrorCode.InvalidParams, message: 'x' }, 418), status.INVALID_ARGUMENT, 'a status with no gRPC meaning: the type\'s')
})
