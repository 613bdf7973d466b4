/**
 * The gRPC door's own I/O, over a service of canned results (the binding and the door only map and write; the
 * gateway tests in test/library/bindings/grpc.test.ts drive the real service): a failure after the first stream event,
 * a stream that waits for a slow reader (and one whose reader leaves while it waits), an empty stream, results the
 * response type cannot take, an Empty response, a door without admission, the peer address, the IPv6 listen form.
 */
import { settlesWithin } from '../../fixtures/deadline.js'
import http2 from 'node:http2'
import t, { type Test } from 'tap'
import * as grpc from '@grpc/grpc-js'
import { DeleteTaskPushNotificationConfigRequest, GetTaskRequest, SubscribeToTaskRequest } from '@a2a-js/sdk'
import type { A2ACall, A2AResult, A2AService, StreamItem } from '../../../packages/a2a-converse/src/a2a/service.js'
import { serveGrpc } from 'a2a-converse/grpc'
import { peerAddress } from '../../../packages/a2a-converse/src/grpc/grpc-door.js'
import { A2AService as A2AGrpcService } from '@a2a-js/sdk/server/grpc'
import { rawGrpcClient } from '../../fixtures/grpc.js'

const V1 = { 'a2a-version': '1.0' }

/** A service serving agent "a" whose every call is answered by `answer`. */
function cannedService (answer: (call: A2ACall) => Promise<A2AResult>): A2AService {
  return {
    serves: (agentId) => agentId === 'a',
    authenticate: async () => ({ kind: 'allowed' }),
    call: answer
  }
}

async function serve (t: Test, answer: (call: A2ACall) => Promise<A2AResult>, host = '127.0.0.1') {
  const logs: unknown[] = []
  const log = { error: (object: unknown) => { logs.push(object) }, warn: () => {}, info: () => {} }
  const door = await serveGrpc({ service: cannedService(answer), port: 0, host, log })
  t.teardown(() => door.close())
  return { door, logs, raw: rawGrpcClient(t, `127.0.0.1:${door.port}`) }
}

const task = (id: string, text = '') => ({ id, contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, metadata: { text } })

async function * items (...list: StreamItem[]): AsyncGenerator<StreamItem> { yield * list }

t.test('a failure after the first event ends the stream with its status', async (t) => {
  const { raw } = await serve(t, async (call) => ({
    kind: 'stream',
    method: call.method,
    headers: {},
    events: items({ kind: 'event', value: { task: task('t1') } }, { kind: 'error', error: { code: -32603, message: 'Internal error' } })
  }))
  const read = await raw.stream('subscribeToTask', SubscribeToTaskRequest.fromJSON({ tenant: 'a', id: 't1' }), V1)
  t.equal(read.messages.length, 1)
  t.equal(read.error?.code, grpc.status.INTERNAL)
  t.equal(read.error?.details, 'Internal error')
})

t.test('an empty stream ends at once; a stream event the response type cannot take is INTERNAL, logged', async (t) => {
  let events = items()
  const { raw, logs } = await serve(t, async (call) => ({ kind: 'stream', method: call.method, headers: {}, events }))
  const empty = await raw.stream('subscribeToTask', SubscribeToTaskRequest.fromJSON({ tenant: 'a', id: 't1' }), V1)
  t.same(empty, { messages: [], metadata: empty.metadata })
  events = items({ kind: 'event', value: null }, { kind: 'event', value: { task: task('never') } })
  const broken = await raw.stream('subscribeToTask', SubscribeToTaskRequest.fromJSON({ tenant: 'a', id: 't1' }), V1)
  t.equal(broken.error?.code, grpc.status.INTERNAL)
  t.same(broken.messages, [])
  t.equal(logs.length, 1)
})

t.test('unary results: an Empty response, and a value the response type cannot take', async (t) => {
  let value: unknown = {}
  const { raw, logs } = await serve(t, async (call) => ({ kind: 'value', method: call.method, headers: { 'a2a-extensions': 'urn:x' }, value }))
  const deleted = await raw.unary('deleteTaskPushNotificationConfig', DeleteTaskPushNotificationConfigRequest.fromJSON({ tenant: 'a', taskId: 't', id: 'c' }), V1)
  t.same(deleted.response, {})
  t.same(deleted.metadata?.get('a2a-extensions'), ['urn:x'])
  value = null
  const broken = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'a', id: 't' }), V1)
  t.equal(broken.error?.code, grpc.status.INTERNAL)
  t.equal(broken.error?.details, 'Internal error')
  t.same(broken.error?.metadata.get('a2a-extensions'), ['urn:x'], 'the echo survives the failure')
  t.equal(logs.length, 1)
})

t.test('a stream waits for a slow reader, and stops waiting when the reader leaves', async (t) => {
  const big = 'x'.repeat(100_000)
  let produced = 0
  let completed = false
  let stopped: () => void = () => {}
  const { door } = await serve(t, async (call) => ({
    kind: 'stream',
    method: call.method,
    headers: {},
    events: (async function * () {
      try {
        for (let index = 0; index < 300; index++) {
          produced++
          yield { kind: 'event', value: { task: task(`t${index}`, big) } } as StreamItem
        }
        completed = true
      } finally {
        stopped()
      }
    })()
  }))
  // Read everything, slowly: the door waits on drain and still delivers all 300. Raw HTTP/2 streams that stop
  // reading (grpc-js's client keeps reading into its own buffer while paused), so their flow-control window fills
  // and the door's writes must wait.
  const session = http2.connect(`http://127.0.0.1:${door.port}`)
  t.teardown(() => { session.destroy() })
  const request = A2AGrpcService.subscribeToTask.requestSerialize(SubscribeToTaskRequest.fromJSON({ tenant: 'a', id: 't' }))
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), request])
  frame.writeUInt32BE(request.length, 1)
  const subscribe = () => {
    const stream = session.request({ ':method': 'POST', ':path': A2AGrpcService.subscribeToTask.path, 'content-type': 'application/grpc', te: 'trailers' })
    stream.on('error', () => {})
    stream.end(frame)
    stream.pause()
    return stream
  }
  const slow = subscribe()
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.ok(produced < 300, `the door stopped pulling events while the reader was not reading (${produced})`)
  const chunks: Buffer[] = []
  slow.on('data', (chunk: Buffer) => { chunks.push(chunk) })
  slow.resume()
  await new Promise((resolve) => slow.once('end', resolve))
  const body = Buffer.concat(chunks)
  let count = 0
  for (let at = 0; at < body.length; at += 5 + body.readUInt32BE(at + 1)) count++
  t.equal(count, 300)

  // A reader that never reads and leaves: the wait ends with the call, the events are returned.
  produced = 0
  completed = false
  const ended = new Promise<void>((resolve) => { stopped = resolve })
  const leaving = subscribe()
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.ok(produced < 300, `the reader had not read everything when it left (${produced})`)
  leaving.close(http2.constants.NGHTTP2_CANCEL)
  await settlesWithin(ended, 10_000, 'the door returns the events once the reader left')
  t.notOk(completed, 'the events were returned, not read to their end')
})

t.test('binary metadata is no service parameter; bytes that are no message reach the service as its rejected error', async (t) => {
  const calls: A2ACall[] = []
  const door = await serveGrpc({
    service: cannedService(async (call) => {
      calls.push(call)
      return { kind: 'error', method: call.method, headers: {}, error: call.rejected?.error ?? { code: -32001, message: 'Task not found' }, status: call.rejected?.status }
    }),
    port: 0,
    host: '127.0.0.1',
    defaultAgentId: 'a'
  })
  t.teardown(() => door.close())
  const raw = rawGrpcClient(t, `127.0.0.1:${door.port}`)
  const metadata = new grpc.Metadata()
  metadata.set('a2a-version', '1.0')
  metadata.set('trace-bin', Buffer.from([1, 2, 3]))
  await new Promise((resolve) => raw.client.makeUnaryRequest('/lf.a2a.v1.A2AService/GetTask', (value: Buffer) => value, (value: Buffer) => value,
    Buffer.alloc(0), metadata, resolve))
  t.equal(calls[0].headers['a2a-version'], '1.0')
  t.notOk('trace-bin' in calls[0].headers, 'binary entries are left out')
  t.equal(calls[0].agentId, 'a', 'an empty tenant: the default agent')

  const garbage = await new Promise<grpc.ServiceError>((resolve) => {
    raw.client.makeUnaryRequest('/lf.a2a.v1.A2AService/GetTask', (value: Buffer) => value, (value: Buffer) => value,
      Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), new grpc.Metadata(), (error) => resolve(error as grpc.ServiceError))
  })
  t.equal(garbage.code, grpc.status.INVALID_ARGUMENT)
  t.match(calls[1], { agentId: 'a', params: undefined, rejected: { status: 400, error: { message: 'Malformed request message' } } }, 'answered by the service, after its checks')
})

t.test('a port in use: serveGrpc rejects (the default address is every interface)', async (t) => {
  const first = await serveGrpc({ service: cannedService(async () => { throw new Error('unused') }), port: 0 })
  t.teardown(() => first.close())
  await t.rejects(serveGrpc({ service: cannedService(async () => { throw new Error('unused') }), port: first.port, host: '127.0.0.1' }))
})

t.test('the peer address as grpc-js names it', async (t) => {
  t.equal(peerAddress('127.0.0.1:5000'), '127.0.0.1')
  t.equal(peerAddress('ipv4:10.0.0.1:5000'), '10.0.0.1')
  t.equal(peerAddress('[::1]:5000'), '::1')
  t.equal(peerAddress('ipv6:[fe80::1]:5000'), 'fe80::1')
  t.equal(peerAddress('unix:/tmp/socket'), 'unix:/tmp/socket')
  t.equal(peerAddress('somewhere'), 'somewhere')
})

t.test('an IPv6 listen address', async (t) => {
  const door = await serveGrpc({ service: cannedService(async (call) => ({ kind: 'value', method: call.method, headers: {}, value: task('t') })), port: 0, host: '::1' })
  t.teardown(() => door.close())
  const raw = rawGrpcClient(t, `[::1]:${door.port}`)
  const reply = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'a', id: 't' }), V1)
  t.equal(reply.response?.id, 't')
})
