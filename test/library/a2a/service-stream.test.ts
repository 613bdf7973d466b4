/**
 * The service's stream replies written by the Node stream writer, over a fake response and a backend whose
 * results the test hands out: headers, frames, errors, backpressure, early ends.
 */
import t from 'tap'
import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { writeStream } from '../../../packages/a2a-converse/src/http/node-stream-writer.js'
import { createBoundA2AService as createA2AService } from '../../../packages/a2a-converse/src/bindings/index.js'
import { type StreamReply } from '../../../packages/a2a-converse/src/bindings/jsonrpc/binding.js'
import { errorFrame, frame, SSE_HEADERS } from '../../../packages/a2a-converse/src/bindings/jsonrpc/sse.js'
import { createConverseExtension } from '../../../packages/a2a-converse/src/core/converse-extension.js'
import { functionEnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI } from '../../../packages/a2a-converse/src/core/uri.js'
import { internalError } from '../../../packages/a2a-converse/src/protocol/errors.js'

class FakeResponse extends EventEmitter {
  headers: Record<string, unknown> = {}
  status?: number
  flushed = false
  chunks: string[] = []
  writableEnded = false
  accept = true
  setHeader (name: string, value: unknown) { this.headers[name] = value }
  writeHead (status: number) { this.status = status }
  flushHeaders () { this.flushed = true }
  write (chunk: string) { this.chunks.push(chunk); return this.accept }
  end () { this.writableEnded = true }
}

/** A source whose next() results the test resolves by hand. */
function manualSource () {
  const pending: Array<{ resolve: (value: IteratorResult<unknown, void>) => void, reject: (error: unknown) => void }> = []
  let returned = 0
  const source: AsyncIterator<unknown, void, undefined> = {
    next: () => new Promise((resolve, reject) => { pending.push({ resolve, reject }) }),
    return: async () => { returned++; return { done: true, value: undefined } }
  }
  return {
    source,
    pending,
    get returned () { return returned },
    async waitForNext (count = 1) {
      while (pending.length < count) await new Promise((resolve) => setImmediate(resolve))
    }
  }
}

const STATUS = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }
const body = { jsonrpc: '2.0', id: 7, method: 'SendStreamingMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }

interface OpenOptions {
  active?: boolean
  envelope?: () => unknown
  toError?: (error: unknown) => ReturnType<typeof internalError>
}

async function open (raw: FakeResponse, source: AsyncIterator<unknown, void, undefined>, options: OpenOptions = {}) {
  let aborted = 0
  const backend: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async () => ({}),
    stream: (_request, context) => {
      context.signal.addEventListener('abort', () => { aborted++ })
      return source
    },
    toError: options.toError ?? (() => internalError())
  }
  const extension = createConverseExtension({
    agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }],
    provider: functionEnvelopeProvider(async () => await (options.envelope ?? (() => ({ author: 'agent' })))() as never)
  })
  const service = createA2AService({ extension, backends: new Map([['demo', backend]]) })
  const controller = new AbortController()
  // The service answers once the first event is there (an error before it is a plain reply): the door writes then,
  // and until then, like the doors, aborts the request when the client leaves.
  const abort = (): void => controller.abort()
  raw.once('close', abort)
  const done = service.handle({
    agentId: 'demo',
    headers: { 'a2a-version': '1.0', ...(options.active === false ? {} : { 'a2a-extensions': CONVERSE_EXTENSION_URI }) },
    body: { kind: 'json', value: body },
    signal: controller.signal
  }).then(async (reply) => {
    raw.off('close', abort)
    raw.setHeader('x-request-id', 'r1')
    await writeStream(raw as unknown as ServerResponse, reply as StreamReply, controller)
  })
  return { done, controller, aborted: () => aborted }
}

t.test('frames', async (t) => {
  t.equal(frame(1, { a: 1 }), 'data: {"jsonrpc":"2.0","id":1,"result":{"a":1}}\n\n')
  t.equal(errorFrame(null, internalError()), 'event: error\ndata: {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}\n\n')
  t.equal(frame('x', 'line1\nline2'), 'data: {"jsonrpc":"2.0","id":"x","result":"line1\\nline2"}\n\n', 'JSON keeps every frame on one line')
})

t.test('headers, frames in order (stripped without activation), then the end', async (t) => {
  const raw = new FakeResponse()
  async function * source () { yield { n: 1 }; yield STATUS }
  const { done, aborted } = await open(raw, source(), { active: false })
  await done
  t.equal(raw.status, 200)
  t.ok(raw.flushed, 'headers go out at once')
  t.strictSame(raw.headers, { 'x-request-id': 'r1', ...SSE_HEADERS }, 'no echo without activation')
  t.strictSame(raw.chunks, [frame(7, { n: 1 }), frame(7, STATUS)])
  t.ok(raw.writableEnded)
  t.equal(aborted(), 0, 'a finished source is not aborted')
  t.equal(raw.listenerCount('close'), 0)
})

t.test('backpressure: waits for drain before asking for more', async (t) => {
  const raw = new FakeResponse()
  raw.accept = false
  const manual = manualSource()
  const { done } = await open(raw, manual.source, { active: false })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  while (raw.chunks.length < 1) await new Promise((resolve) => setImmediate(resolve))
  t.equal(raw.headers['A2A-Extensions'], undefined)
  t.equal(manual.pending.length, 1, 'no next() while the response is full')
  t.equal(raw.listenerCount('drain'), 1)
  raw.accept = true
  raw.emit('drain')
  await manual.waitForNext(2)
  t.equal(raw.listenerCount('drain'), 0)
  manual.pending[1].resolve({ done: true, value: undefined })
  await done
  t.ok(raw.writableEnded)
})

t.test('the client leaves while the response is full', async (t) => {
  const raw = new FakeResponse()
  raw.accept = false
  const manual = manualSource()
  const { done, aborted } = await open(raw, manual.source, { active: false })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  while (raw.chunks.length < 1) await new Promise((resolve) => setImmediate(resolve))
  raw.emit('close')
  await done
  t.equal(manual.pending.length, 1, 'nothing more is asked of the source')
  t.equal(aborted(), 1)
  t.equal(manual.returned, 1)
  t.equal(raw.listenerCount('close'), 0)
  t.equal(raw.listenerCount('drain'), 0)
})

t.test('abort while the source is quiet: ends at once, aborts and returns the source', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { done, controller, aborted } = await open(raw, manual.source)
  await manual.waitForNext()
  controller.abort()
  await done
  t.strictSame(raw.chunks, [], 'nothing written')
  t.equal(raw.headers['A2A-Extensions'], CONVERSE_EXTENSION_URI, 'the echo header on the stream')
  t.ok(raw.writableEnded)
  t.equal(aborted(), 1)
  t.equal(manual.returned, 1)
  manual.pending[0].reject(new Error('late failure after the end'))
  await new Promise((resolve) => setImmediate(resolve))
  t.pass('a late rejection of the abandoned next() is handled')
})

t.test('the client leaves during an async decoration: that result is not written', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const decorating: { finish?: (value: unknown) => void } = {}
  const { done, aborted } = await open(raw, manual.source, { envelope: () => new Promise((resolve) => { decorating.finish = resolve }) })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: { message: { messageId: 'a', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } } })
  while (decorating.finish === undefined) await new Promise((resolve) => setImmediate(resolve))
  raw.emit('close')
  decorating.finish({ author: 'agent' })
  await done
  t.strictSame(raw.chunks, [])
  t.equal(aborted(), 1)
})

t.test('a source error becomes an error frame', async (t) => {
  const raw = new FakeResponse()
  async function * source () { yield 1; throw new Error('boom') }
  let seen: unknown
  const { done } = await open(raw, source(), { active: false, toError: (error) => { seen = error; return internalError('mapped') } })
  await done
  t.strictSame(raw.chunks, [frame(7, 1), errorFrame(7, internalError('mapped'))])
  t.match(seen, { message: 'boom' })
})

t.test('an unserializable result becomes an error frame and returns the source', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { done } = await open(raw, manual.source, { active: false })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: { big: 1n } })
  await done
  t.strictSame(raw.chunks, [errorFrame(7, internalError())])
  t.equal(manual.returned, 1)
})

t.test('an error after the client left writes nothing', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { done, controller } = await open(raw, manual.source, { active: false })
  await manual.waitForNext()
  controller.abort()
  manual.pending[0].reject(new Error('after close'))
  await done
  t.strictSame(raw.chunks, [])
})

t.test('a source whose return() rejects, or that has none', async (t) => {
  for (const source of [
    { next: () => new Promise<never>(() => {}), return: () => Promise.reject(new Error('cannot return')) },
    { next: () => new Promise<never>(() => {}) }
  ]) {
    const raw = new FakeResponse()
    const { done, controller } = await open(raw, source as AsyncIterator<unknown, void, undefined>)
    await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    await done
    await new Promise((resolve) => setImmediate(resolve))
    t.ok(raw.writableEnded, 'ended; a rejection is swallowed')
  }
})

t.test('a response already ended by the client', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { done } = await open(raw, manual.source, { active: false })
  await manual.waitForNext()
  raw.writableEnded = true
  raw.emit('close')
  await done
  t.equal(manual.pending.length, 1)
})

t.test('the client leaves while a later event is decorated: only the events before it are written', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  let calls = 0
  const decorating: { finish?: (value: unknown) => void } = {}
  const envelope = async () => {
    // The first event's envelope at once, the second one's when the test says so.
    if (++calls === 1) return { author: 'agent' }
    return await new Promise((resolve) => { decorating.finish = resolve })
  }
  const { done, aborted } = await open(raw, manual.source, { envelope })
  const message = (id: string) => ({ message: { messageId: id, role: 'ROLE_AGENT', parts: [{ text: 'x' }] } })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: message('a') })
  await manual.waitForNext(2)
  manual.pending[1].resolve({ done: false, value: message('b') })
  while (decorating.finish === undefined) await new Promise((resolve) => setImmediate(resolve))
  raw.emit('close')
  decorating.finish({ author: 'agent' })
  await done
  t.equal(raw.chunks.length, 1, 'the first event only')
  t.equal(aborted(), 1)
})
