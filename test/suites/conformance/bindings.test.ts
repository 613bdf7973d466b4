/**
 * Conformance, both doors: the converse extension is the same on every binding. One table of steps — a knowledge
 * answer, a routine to completion, a typed call, a human takeover whose person's reply reaches an open
 * SubscribeToTask stream, a cancel — runs over JSON-RPC, over HTTP+JSON and over gRPC (a gRPC door on the door's own
 * A2A service) against the demo agent, and the envelopes (and states) each binding carries are compared once ids and
 * timestamps are masked.
 */
import t, { type Test } from 'tap'
import * as grpc from '@grpc/grpc-js'
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk'
import { serveGrpc } from '../../../packages/a2a-converse/src/grpc/grpc-door.js'
import { rawGrpcClient, toMetadata } from '../../fixtures/grpc.js'
import { defaultAgentsFile, loadAgentDefinitions } from '../../../src/gateway/agent-definitions.js'
import { buildAgentRuntime } from '../../../src/gateway/runtime.js'
import { memoryState } from '../../../src/gateway/state.js'
import { validateEnvelope } from 'a2a-converse'
import { call, DOORS, open, serveDoor, URI, type Door, type DoorName } from '../../fixtures/doors.js'
import { message, textOf } from '../../fixtures/conversation-gateway.js'
import { contextIdOf } from '../../fixtures/context-ids.js'
import { readSse, type SseReader } from '../../fixtures/sse-reader.js'

type Json = Record<string, any>

/** What a step needs of a binding: the same A2A methods, each binding's wire. */
interface Binding {
  name: string
  send (params: Json): Promise<Json>
  getTask (id: string): Promise<Json>
  cancel (id: string): Promise<Json>
  /** SubscribeToTask: the StreamResponse objects as they arrive; `echo` is the response's A2A-Extensions header. */
  subscribe (id: string): Promise<{ waitFor: (test: (event: Json) => boolean) => Promise<Json>, echo: string | null, close: () => void }>
}

function jsonRpc (door: Door): Binding {
  const result = async (method: string, params: Json): Promise<Json> => {
    const reply = await call(door, method, params, { active: true })
    if (reply.headers.get('a2a-extensions') !== URI) throw new Error(`${method}: no echo`)
    return reply.json.result
  }
  return {
    name: 'JSONRPC',
    send: async (params) => await result('SendMessage', params),
    getTask: async (id) => await result('GetTask', { id }),
    cancel: async (id) => await result('CancelTask', { id }),
    async subscribe (id) {
      const opened = await open(door, 'SubscribeToTask', { id }, { active: true })
      return {
        waitFor: async (test) => (await opened.sse.waitFor((frame) => frame.result !== undefined && test(frame.result))).result,
        echo: opened.response.headers.get('a2a-extensions'),
        close: opened.abort
      }
    }
  }
}

function httpJson (door: Door): Binding {
  const headers = { 'a2a-version': '1.0', 'a2a-extensions': URI, 'content-type': 'application/json' }
  const url = (path: string): string => `${door.base}/a2a/demo/rest${path}`
  const result = async (method: string, path: string, body?: Json): Promise<Json> => {
    const response = await fetch(url(path), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    if (response.headers.get('a2a-extensions') !== URI) throw new Error(`${method} ${path}: no echo`)
    return await response.json() as Json
  }
  return {
    name: 'HTTP+JSON',
    send: async (params) => await result('POST', '/message:send', params),
    getTask: async (id) => await result('GET', `/tasks/${id}`),
    cancel: async (id) => await result('POST', `/tasks/${id}:cancel`),
    async subscribe (id) {
      const controller = new AbortController()
      const response = await fetch(url(`/tasks/${id}:subscribe`), { headers, signal: controller.signal })
      const sse: SseReader = readSse(response)
      sse.ended.catch(() => {})
      return { waitFor: async (test) => await sse.waitFor(test), echo: response.headers.get('a2a-extensions'), close: () => controller.abort() }
    }
  }
}

/** gRPC: a gRPC door on the door's service, the raw client of the SDK's service definition, ProtoJSON via the SDK's converters. */
async function grpcBinding (t: Test, door: Door): Promise<Binding> {
  const grpcDoor = await serveGrpc({ service: door.service, host: '127.0.0.1', port: 0 })
  t.teardown(() => grpcDoor.close())
  const raw = rawGrpcClient(t, `127.0.0.1:${grpcDoor.port}`)
  const metadata = { 'a2a-version': '1.0', 'a2a-extensions': URI }
  const result = async (rpc: string, request: unknown): Promise<unknown> => {
    const reply = await raw.unary(rpc, request, metadata)
    if (reply.error !== undefined) throw reply.error
    if (reply.metadata?.get('a2a-extensions')[0] !== URI) throw new Error(`${rpc}: no echo`)
    return reply.response
  }
  return {
    name: 'GRPC',
    send: async (params) => SendMessageResponse.toJSON(await result('sendMessage', SendMessageRequest.fromJSON({ ...params, tenant: 'demo' }) as never) as never) as Json,
    getTask: async (id) => Task.toJSON(await result('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id })) as never) as Json,
    cancel: async (id) => Task.toJSON(await result('cancelTask', CancelTaskRequest.fromJSON({ tenant: 'demo', id })) as never) as Json,
    async subscribe (id) {
      const call = raw.client.subscribeToTask(SubscribeToTaskRequest.fromJSON({ tenant: 'demo', id }), toMetadata(metadata)) as grpc.ClientReadableStream<unknown>
      call.on('error', () => {})
      const echo = await new Promise<grpc.Metadata>((resolve) => call.once('metadata', resolve))
      const seen: Json[] = []
      const waiters: Array<() => void> = []
      call.on('data', (message) => {
        seen.push(StreamResponse.toJSON(message as never) as Json)
        for (const wake of waiters.splice(0)) wake()
      })
      async function waitFor (test: (event: Json) => boolean): Promise<Json> {
        for (;;) {
          const found = seen.find(test)
          if (found !== undefined) return found
          await new Promise<void>((resolve) => waiters.push(resolve))
        }
      }
      return { waitFor, echo: echo.get('a2a-extensions')[0] as string, close: () => call.cancel() }
    }
  }
}

async function serveDemo (t: Test, name: DoorName) {
  const state = memoryState()
  t.teardown(() => state.close())
  const runtime = await buildAgentRuntime({
    definitions: await loadAgentDefinitions(defaultAgentsFile()),
    conversations: state.conversations,
    events: state.events,
    taskStoreFor: state.taskStoreFor
  })
  const door = await serveDoor(t, name, { agents: runtime.agents, events: state.events })
  return { door, inbox: runtime.inbox }
}

/** A valid envelope, ids and timestamps masked (they differ per run, not per binding). */
function envelopeOf (t: Test, object: Json | undefined): unknown {
  const found = object?.metadata?.[URI]
  t.ok(validateEnvelope(found), 'the envelope passes the schema')
  return JSON.parse(JSON.stringify(found)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>'))
}

/** The conversation, step by step: what each step saw (states, texts, envelopes), to compare across bindings. */
async function converse (t: Test, binding: Binding, inbox: Awaited<ReturnType<typeof serveDemo>>['inbox'], label: string): Promise<unknown[]> {
  const seen: unknown[] = []
  const knowledge = await binding.send({ message: message('How long do I have to return an order?', { contextId: contextIdOf(`${label}-k`) }) })
  const answer = knowledge.message ?? knowledge.task.status.message
  seen.push(['knowledge', textOf(answer), envelopeOf(t, answer)])

  const contextId = contextIdOf(`${label}-routine`)
  const started = (await binding.send({ message: message('I would like to book a table', { contextId }) })).task
  seen.push(['routine', started.status.state, envelopeOf(t, started.status.message)])
  const half = (await binding.send({ message: message('date=2026-12-24, partySize=four', { contextId }) })).task
  seen.push(['routine', half.status.state, textOf(half.status.message), envelopeOf(t, half.status.message)])
  const done = (await binding.send({ message: message('4', { contextId }) })).task
  seen.push(['routine', done.status.state, envelopeOf(t, done.artifacts[0])])

  const typed = await binding.send({
    message: message('', { parts: [{ data: { toolName: 'book_table' } }], call: { toolName: 'book_table', arguments: { date: '2026-12-31', partySize: 2 } } })
  })
  const object = typed.task ?? typed.message
  seen.push(['typed call', envelopeOf(t, object.status?.message ?? object)])

  const human = contextIdOf(`${label}-takeover`)
  await binding.send({ message: message('Where is my parcel?', { contextId: human }) })
  await inbox.takeover('demo', human)
  const held = (await binding.send({ message: message('Can a person help me?', { contextId: human }) })).task
  seen.push(['takeover', held.status.state, envelopeOf(t, held.status.message)])
  const subscriber = await binding.subscribe(held.id)
  t.equal(subscriber.echo, URI, `${binding.name}: the stream echoes the extension`)
  await subscriber.waitFor((event) => event.task !== undefined)
  await inbox.reply('demo', human, 'Hi, Sam here.')
  const pushed = await subscriber.waitFor((event) => textOf(event.statusUpdate?.status?.message) === 'Hi, Sam here.')
  seen.push(['human reply', envelopeOf(t, pushed.statusUpdate.status.message)])
  subscriber.close()
  seen.push(['stored', envelopeOf(t, (await binding.getTask(held.id)).status.message)])

  const canceled = await binding.cancel(held.id)
  seen.push(['cancel', canceled.status.state])
  await inbox.release('demo', human)
  return seen
}

for (const name of DOORS) {
  t.test(`${name}: the same conversation over JSON-RPC, HTTP+JSON and gRPC carries the same envelopes`, async (t) => {
    const { door, inbox } = await serveDemo(t, name)
    const rpc = await converse(t, jsonRpc(door), inbox, `${name}-rpc`)
    const rest = await converse(t, httpJson(door), inbox, `${name}-rest`)
    const overGrpc = await converse(t, await grpcBinding(t, door), inbox, `${name}-grpc`)
    t.strictSame(rest, rpc)
    t.strictSame(overGrpc, rpc)
    t.match(rpc.at(-1), ['cancel', 'TASK_STATE_CANCELED'])
  })
}
