/**
 * a2a-converse/grpc: the gRPC door (A2A 1.0 §10) for an A2A service of your own — `serveGrpc({ service })` with the
 * Fastify app's `converse.a2aServices` or the Express router's `service`. Loads
 * @grpc/grpc-js and the SDK's gRPC definitions; the gateway turns it on with GRPC_PORT (docs/grpc.md).
 */
export { serveGrpc, type GrpcDoor, type GrpcDoorOptions, type GrpcAdmissionRequest } from './grpc/grpc-door.js'
