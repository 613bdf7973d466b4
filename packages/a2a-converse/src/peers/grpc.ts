/**
 * `@grpc/grpc-js` and `@bufbuild/protobuf` for a2a-converse/grpc (and the SDK's gRPC definitions, which need both):
 * optional peer dependencies (peers/import-peer.ts).
 */
/* eslint-disable @typescript-eslint/no-redeclare -- a class is exported as a value and a type of one name, as its package does */
import { importPeer } from './import-peer.js'

const ENTRY = 'a2a-converse/grpc'
const PACKAGES = ['@grpc/grpc-js', '@bufbuild/protobuf']
const grpc = await importPeer<typeof import('@grpc/grpc-js')>('@grpc/grpc-js', ENTRY, PACKAGES)
const wire = await importPeer<typeof import('@bufbuild/protobuf/wire')>('@bufbuild/protobuf/wire', ENTRY, PACKAGES)
const definitions = await importPeer<typeof import('@a2a-js/sdk/server/grpc')>('@a2a-js/sdk/server/grpc', ENTRY, PACKAGES)

export const { Metadata, Server, ServerCredentials, status } = grpc
export type status = import('@grpc/grpc-js').status
export type Metadata = import('@grpc/grpc-js').Metadata
export type Server = import('@grpc/grpc-js').Server
export const { BinaryWriter } = wire
export const A2A_SERVICE_DEFINITION: typeof import('@a2a-js/sdk/server/grpc').A2AService = definitions.A2AService
