/**
 * The gRPC binding (A2A 1.0 §10, `lf.a2a.v1.A2AService`): one decoded request message → one service call → a
 * response message, the messages of a server stream, or a gRPC status. Protocol only: the listener, cancellation
 * and the writes are the gRPC door's (packages/a2a-converse/src/grpc/).
 *
 * The wire is the SDK's: @a2a-js/sdk's service definition (its generated encoders) decodes each request into the
 * SDK's types, the SDK's ts-proto converters turn it into ProtoJSON (`toJSON`) — the params every binding hands the
 * service — and the service's ProtoJSON result back into the response type (`fromJSON`). So negotiation, the echo,
 * authentication, every A2A check, the backend and decoration are the service's, identical to JSON-RPC and HTTP+JSON.
 *
 * - Which agent: the request's `tenant` (A2A 1.0's field for it; the card's GRPC interface names each agent's
 *   tenant and the SDK's client sends it), else the listener's default agent when it has one. The tenant is
 *   addressing, like the HTTP+JSON path: it is taken out of the params.
 * - Service parameters: the request metadata (`a2a-version`, `a2a-extensions`, `authorization`, …; binary `-bin`
 *   entries are not parameters). The service's reply headers (the `a2a-extensions` echo) go in the response's
 *   initial metadata, or with an error in its trailers.
 * - Errors: errors.ts (§5.4 status codes, `google.rpc.Status` details).
 */
import type { StatusObject } from '@grpc/grpc-js'
import { Metadata } from '../../peers/grpc.js'
import {
  AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageRequest,
  SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig
} from '@a2a-js/sdk'
import type { A2AService, StreamItem } from '../../a2a/service.js'
import { unknownAgent } from '../../a2a/service.js'
import type { Caller, ServiceLogger } from '../../protocol/backend.js'
import { internalError, invalidRequest, type JsonRpcError } from '../../protocol/errors.js'
import { grpcError } from './errors.js'

/** A converter pair of the SDK's generated types (ts-proto). */
export interface ProtoJson {
  toJSON (message: any): unknown
  fromJSON (object: any): unknown
}

/** What each rpc of `lf.a2a.v1.A2AService` is: its A2A method, request and response types, whether it streams. */
export interface GrpcMethod {
  method: string
  request: ProtoJson
  /** undefined: google.protobuf.Empty. */
  response?: ProtoJson
  streaming: boolean
}

/** The rpcs, by the name the SDK's service definition gives their handlers. */
export type GrpcRpc =
  | 'sendMessage' | 'sendStreamingMessage' | 'getTask' | 'listTasks' | 'cancelTask' | 'subscribeToTask'
  | 'createTaskPushNotificationConfig' | 'getTaskPushNotificationConfig' | 'listTaskPushNotificationConfigs'
  | 'getExtendedAgentCard' | 'deleteTaskPushNotificationConfig'

export const GRPC_METHODS: Readonly<Record<GrpcRpc, GrpcMethod>> = Object.freeze({
  sendMessage: { method: 'SendMessage', request: SendMessageRequest, response: SendMessageResponse, streaming: false },
  sendStreamingMessage: { method: 'SendStreamingMessage', request: SendMessageRequest, response: StreamResponse, streaming: true },
  getTask: { method: 'GetTask', request: GetTaskRequest, response: Task, streaming: false },
  listTasks: { method: 'ListTasks', request: ListTasksRequest, response: ListTasksResponse, streaming: false },
  cancelTask: { method: 'CancelTask', request: CancelTaskRequest, response: Task, streaming: false },
  subscribeToTask: { method: 'SubscribeToTask', request: SubscribeToTaskRequest, response: StreamResponse, streaming: true },
  createTaskPushNotificationConfig: {
    method: 'CreateTaskPushNotificationConfig', request: TaskPushNotificationConfig, response: TaskPushNotificationConfig, streaming: false
  },
  getTaskPushNotificationConfig: {
    method: 'GetTaskPushNotificationConfig', request: GetTaskPushNotificationConfigRequest, response: TaskPushNotificationConfig, streaming: false
  },
  listTaskPushNotificationConfigs: {
    method: 'ListTaskPushNotificationConfigs', request: ListTaskPushNotificationConfigsRequest, response: ListTaskPushNotificationConfigsResponse, streaming: false
  },
  getExtendedAgentCard: { method: 'GetExtendedAgentCard', request: GetExtendedAgentCardRequest, response: AgentCard, streaming: false },
  deleteTaskPushNotificationConfig: { method: 'DeleteTaskPushNotificationConfig', request: DeleteTaskPushNotificationConfigRequest, streaming: false }
})

/** What the door's deserializer hands over for bytes that do not decode as the request message (not a throw). */
export const MALFORMED_MESSAGE: unique symbol = Symbol('malformed gRPC request message')

/** One gRPC call, as the door hands it over. */
export interface GrpcRequest {
  rpc: GrpcRpc
  /** The decoded request message (the SDK's type), or the marker of bytes that are not one. */
  message: unknown
  metadata: Metadata
  /** The agent an empty `tenant` addresses; none: the tenant is required. */
  defaultAgentId?: string
  signal: AbortSignal
  caller?: Caller
  log?: ServiceLogger
  /** The peer's address (a walk-in's key for per-caller bounds). */
  clientAddress?: string
}

/** What the door writes: one message, the messages of a stream, or an error status. */
export type GrpcReply =
  | { kind: 'value', metadata: Metadata, message: unknown }
  | { kind: 'stream', metadata: Metadata, messages: AsyncIterable<GrpcStreamItem> }
  | { kind: 'error', error: Partial<StatusObject> }

/** A stream's message, or the status that ends it (a failure after the first event). */
export type GrpcStreamItem = { kind: 'message', message: unknown } | { kind: 'error', error: Partial<StatusObject> }

/** The agent a request addresses: its tenant, else the default agent (undefined: neither). */
export function grpcAgentOf (message: unknown, defaultAgentId: string | undefined): string | undefined {
  const tenant = isMalformed(message) ? '' : (message as { tenant?: unknown } | null)?.tenant
  return typeof tenant === 'string' && tenant !== '' ? tenant : defaultAgentId
}

function isMalformed (message: unknown): message is typeof MALFORMED_MESSAGE {
  return message === MALFORMED_MESSAGE
}

/** The metadata as service parameters: text entries (several values joined with ", "), `-bin` ones left out. */
export function serviceParameters (metadata: Metadata): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (key.endsWith('-bin')) continue
    headers[key] = (values as string[]).join(', ')
  }
  return headers
}

/** Answers one gRPC call through the service. Never rejects. */
export async function answerGrpc (service: A2AService, request: GrpcRequest): Promise<GrpcReply> {
  const rpc: GrpcMethod = GRPC_METHODS[request.rpc]
  const malformed = isMalformed(request.message)
  const agentId = grpcAgentOf(request.message, request.defaultAgentId)
  if (agentId === undefined) return errorReply(malformed ? malformedError(rpc) : noAgent(), 400)
  if (!service.serves(agentId)) return errorReply(unknownAgent(agentId), 404)
  const headers = serviceParameters(request.metadata)
  const result = await service.call({
    binding: 'grpc',
    agentId,
    method: rpc.method,
    params: malformed ? undefined : paramsOf(rpc, request.message),
    rejected: malformed ? { status: 400, error: malformedError(rpc) } : undefined,
    headers,
    signal: request.signal,
    caller: request.caller,
    log: request.log,
    clientAddress: request.clientAddress
  })
  switch (result.kind) {
    case 'error':
      return errorReply(result.error, result.status, result.headers)
    case 'value':
      try {
        return { kind: 'value', metadata: metadataOf(result.headers), message: rpc.response?.fromJSON(result.value) ?? {} }
      } catch (error) {
        request.log?.error({ err: error }, 'A2A result cannot be converted to its gRPC message')
        return errorReply(internalError(), undefined, result.headers)
      }
    default:
      return { kind: 'stream', metadata: metadataOf(result.headers), messages: messagesOf(result.events, request.log) }
  }
}

function malformedError (rpc: GrpcMethod): JsonRpcError {
  return invalidRequest([{ field: 'request', description: `is not a valid ${rpc.method} request message` }], 'Malformed request message')
}

function noAgent (): JsonRpcError {
  return invalidRequest([{ field: 'tenant', description: 'must name the agent (the card\'s GRPC interface gives its tenant)' }], 'No agent addressed')
}

/** The request as ProtoJSON params, without the tenant (the agent is addressed already). */
function paramsOf (rpc: GrpcMethod, message: unknown): Record<string, unknown> {
  const { tenant: _tenant, ...params } = rpc.request.toJSON(message) as Record<string, unknown>
  return params
}

function metadataOf (headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata()
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value)
  return metadata
}

function errorReply (error: JsonRpcError, httpStatus?: number, headers: Readonly<Record<string, string>> = {}): GrpcReply {
  return { kind: 'error', error: grpcError(error, httpStatus, headers) }
}

/** Each event as a StreamResponse message; a failure as the status that ends the stream (the door stops there). */
async function * messagesOf (events: AsyncIterable<StreamItem>, log: ServiceLogger | undefined): AsyncGenerator<GrpcStreamItem, void, undefined> {
  for await (const item of events) {
    yield item.kind === 'error' ? { kind: 'error', error: grpcError(item.error, undefined, {}) } : streamMessage(item.value, log)
  }
}

function streamMessage (value: unknown, log: ServiceLogger | undefined): GrpcStreamItem {
  try {
    return { kind: 'message', message: StreamResponse.fromJSON(value as never) }
  } catch (error) {
    log?.error({ err: error }, 'A2A stream event cannot be converted to its gRPC message')
    return { kind: 'error', error: grpcError(internalError(), undefined, {}) }
  }
}
