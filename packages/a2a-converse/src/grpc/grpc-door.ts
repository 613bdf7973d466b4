/**
 * The gRPC door of the A2A service: a @grpc/grpc-js server with @a2a-js/sdk's `lf.a2a.v1.A2AService` definition,
 * each rpc answered by the gRPC binding (packages/a2a-converse/src/bindings/grpc/binding.ts) over the same service the HTTP doors use.
 *
 * It only does I/O: decodes a request (bytes that are not the message become INVALID_ARGUMENT, not grpc-js's
 * INTERNAL), asks the door's admission (the gateway's rate limit) first, hands the call to the binding, and writes
 * the initial metadata and the message, or each stream message with backpressure, or the status. A client that
 * cancels aborts the call's signal (the service stops the backend's stream); `close()` aborts every open call
 * (streams end with UNAVAILABLE), then shuts the server down once the calls have finished.
 */
import type {
  sendUnaryData, ServerUnaryCall, ServerWritableStream, ServiceDefinition, StatusObject, UntypedServiceImplementation
} from '@grpc/grpc-js'
import { A2A_SERVICE_DEFINITION, Server, ServerCredentials, status as GrpcStatus } from '../peers/grpc.js'
import type { A2AService } from '../a2a/service.js'
import type { ServiceLogger } from '../protocol/backend.js'
import {
  answerGrpc, GRPC_METHODS, grpcAgentOf, MALFORMED_MESSAGE, serviceParameters, type GrpcReply, type GrpcRpc
} from '../bindings/grpc/binding.js'
import { grpcError } from '../bindings/grpc/errors.js'
import { rateLimited } from '../protocol/errors.js'

/** What the door knows of a call before the binding sees it. */
export interface GrpcAdmissionRequest {
  /** The agent the request addresses (its tenant, else the default agent); undefined when none. */
  agentId?: string
  /** The metadata as service parameters (`authorization`, …). */
  headers: Readonly<Record<string, string>>
  clientAddress: string
}

export interface GrpcDoorOptions {
  /** The A2A service answering every agent (the one the HTTP doors use). */
  service: A2AService
  /** The port to listen on; 0: any free port (see `GrpcDoor.port`). */
  port: number
  /** The address to listen on. Default 0.0.0.0. */
  host?: string
  /** The agent a request with an empty `tenant` addresses. Default: none (the tenant is required). */
  defaultAgentId?: string
  /** Largest request message accepted, in bytes (larger: RESOURCE_EXHAUSTED, by grpc-js). Default 1 MiB. */
  maxMessageBytes?: number
  /**
   * Asked before each call: undefined lets it through; a refusal with `retryAfterSec` is answered
   * RESOURCE_EXHAUSTED (reason RATE_LIMITED) with a `retry-after` trailer. The gateway's rate limit.
   */
  admit?: (request: GrpcAdmissionRequest) => Promise<{ retryAfterSec: number } | undefined>
  log?: ServiceLogger
}

export interface GrpcDoor {
  /** The port the server listens on. */
  readonly port: number
  /** Aborts open calls, then stops the server when they have finished. */
  close (): Promise<void>
}

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
const MAX_CALLS_PER_CONNECTION = 100

/** Starts the gRPC door; resolves once it listens. */
export async function serveGrpc (options: GrpcDoorOptions): Promise<GrpcDoor> {
  const { service, defaultAgentId, admit, log } = options
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    // Calls in flight per connection at most (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS): one client's connection cannot
    // hold an unbounded number of calls open; the rate limit and the per-caller stream cap bound the rest.
    'grpc.max_concurrent_streams': MAX_CALLS_PER_CONNECTION
  })
  /** Every open call's controller, so that close() can end them. */
  const open = new Set<AbortController>()
  let closing = false

  /** The call's reply: admission first (it counts before anything looks at the request), then the binding. */
  async function replyTo (rpc: GrpcRpc, call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>, signal: AbortSignal): Promise<GrpcReply> {
    const clientAddress = peerAddress(call.getPeer())
    const refusal = await admit?.({ agentId: grpcAgentOf(call.request, defaultAgentId), headers: serviceParameters(call.metadata), clientAddress })
    if (refusal !== undefined) {
      const retryAfter = String(refusal.retryAfterSec)
      return { kind: 'error', error: grpcError(rateLimited(refusal.retryAfterSec), 429, { 'retry-after': retryAfter }) }
    }
    return await answerGrpc(service, { rpc, message: call.request, metadata: call.metadata, defaultAgentId, signal, log, clientAddress })
  }

  /** A controller for one call, aborted when the client cancels or the door closes; forgotten when the call ends. */
  function track (call: { on: (event: 'cancelled', listener: () => void) => unknown }): { controller: AbortController, done: () => void } {
    const controller = new AbortController()
    open.add(controller)
    call.on('cancelled', () => controller.abort())
    return { controller, done: () => open.delete(controller) }
  }

  function unary (rpc: GrpcRpc) {
    return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
      const { controller, done } = track(call)
      replyTo(rpc, call, controller.signal).then((reply) => {
        if (reply.kind === 'error') return callback(reply.error)
        // A unary rpc's result is a value (the service streams only the streaming methods).
        const value = reply as Extract<GrpcReply, { kind: 'value' }>
        call.sendMetadata(value.metadata)
        callback(null, value.message)
      }).catch((error: unknown) => failed(log, error, callback)).finally(done)
    }
  }

  function streaming (rpc: GrpcRpc) {
    return (call: ServerWritableStream<unknown, unknown>): void => {
      const { controller, done } = track(call)
      replyTo(rpc, call, controller.signal)
        .then(async (reply) => await writeStream(call, reply, controller.signal, () => closing))
        .catch((error: unknown) => failed(log, error, (status) => call.emit('error', status)))
        .finally(done)
    }
  }

  const handlers: UntypedServiceImplementation = {}
  for (const [rpc, { streaming: streams }] of Object.entries(GRPC_METHODS)) {
    handlers[rpc] = streams ? streaming(rpc as GrpcRpc) : unary(rpc as GrpcRpc)
  }
  server.addService(tolerantDefinition(A2A_SERVICE_DEFINITION as unknown as ServiceDefinition), handlers)

  const port = await listen(server, hostPort(options.host ?? '0.0.0.0', options.port))

  return {
    port,
    async close () {
      closing = true
      for (const controller of open) controller.abort()
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()))
    }
  }
}

/**
 * The initial metadata, then each message (waiting for the client to drain), then the end or the failure;
 * `closing` says whether the door is closing (an ended stream is then UNAVAILABLE).
 */
async function writeStream (call: ServerWritableStream<unknown, unknown>, reply: GrpcReply, signal: AbortSignal, closing: () => boolean): Promise<void> {
  if (reply.kind === 'error') {
    call.emit('error', reply.error)
    return
  }
  const streamed = reply as Extract<GrpcReply, { kind: 'stream' }>
  call.sendMetadata(streamed.metadata)
  for await (const item of streamed.messages) {
    if (item.kind === 'error') {
      call.emit('error', item.error)
      return
    }
    if (!call.write(item.message)) await drained(call, signal)
    // The client left (or the door closes) while the stream waited: stop pulling events.
    if (signal.aborted) break
  }
  // The events end (or the loop left) when the call's signal aborts: the client left (nothing to send), or the door
  // is closing.
  if (closing()) {
    call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: 'the server is shutting down' })
    return
  }
  call.end()
}

/* c8 ignore start -- answerGrpc and admit never reject, and the writes do not throw; this only keeps a bug from
   becoming an unhandled rejection (a crash) instead of one INTERNAL status */
function failed (log: ServiceLogger | undefined, error: unknown, send: (status: Partial<StatusObject>) => void): void {
  log?.error({ err: error }, 'A2A gRPC call failed')
  send({ code: GrpcStatus.INTERNAL, details: 'Internal error' })
}
/* c8 ignore stop */

/** Binds the server to its address (plaintext, as the door always served); resolves with the port bound (0: any free one). */
async function listen (server: Server, address: string): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) => {
      if (error !== null) reject(error)
      else resolve(bound)
    })
  })
}

/** The service definition with request decoders that hand over MALFORMED_MESSAGE instead of throwing. */
function tolerantDefinition (definition: ServiceDefinition): ServiceDefinition {
  return Object.fromEntries(Object.entries(definition).map(([name, method]) => [name, {
    ...method,
    requestDeserialize: (bytes: Buffer) => {
      try {
        return method.requestDeserialize(bytes)
      } catch {
        return MALFORMED_MESSAGE
      }
    }
  }]))
}

/** Resolves when the stream can take more, or at once when the call is over (cancelled, closing). */
async function drained (call: ServerWritableStream<unknown, unknown>, signal: AbortSignal): Promise<void> {
  // A write refused after the client cancelled, before the abort was seen: an aborted signal fires no more
  // listeners, so waiting would never end.
  /* c8 ignore next -- that race cannot be staged from a client */
  if (signal.aborted) return
  await new Promise<void>((resolve) => {
    const settle = (): void => {
      call.off('drain', settle)
      signal.removeEventListener('abort', settle)
      resolve()
    }
    call.on('drain', settle)
    signal.addEventListener('abort', settle, { once: true })
  })
}

/** `host:port`, an IPv6 address in brackets. */
function hostPort (host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`
}

/** The address of a peer as grpc-js names it (`127.0.0.1:5000`, `[::1]:5000`, `ipv4:…`, `unix:…`). */
export function peerAddress (peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '')
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare)
  if (bracketed !== null) return bracketed[1]
  const portAt = bare.lastIndexOf(':')
  return portAt > 0 && bare.indexOf(':') === portAt && /^\d+$/.test(bare.slice(portAt + 1)) ? bare.slice(0, portAt) : bare
}
