/** The SSE writer on its own, over a fake response: headers, frames, errors, backpressure, early ends. */
import t from 'tap'
import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { errorFrame, frame, openSseStream, SSE_HEADERS, type SseStreamOptions } from '../../src/fastify/a2a-endpoint-sse.js'
import { internalError } from '../../src/jsonrpc/errors.js'

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

function open (raw: FakeResponse, source: AsyncIterator<unknown, void, undefined>, extra: Partial<SseStreamOptions> = {}) {
  let released = 0
  const stream = openSseStream({
    raw: raw as unknown as ServerResponse,
    headers: { 'a2a-extensions': 'https://x/v1', 'x-skip': undefined, 'content-type': 'application/json' },
    id: 7,
    source,
    transform: (result) => result,
    toError: () => internalError(),
    release: () => { released++ },
    ...extra
  })
  return { stream, released: () => released }
}

t.test('frames', async (t) => {
  t.equal(frame(1, { a: 1 }), 'data: {"jsonrpc":"2.0","id":1,"result":{"a":1}}\n\n')
  t.equal(errorFrame(null, internalError()), 'event: error\ndata: {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}\n\n')
  t.equal(frame('x', 'line1\nline2'), 'data: {"jsonrpc":"2.0","id":"x","result":"line1\\nline2"}\n\n', 'JSON keeps every frame on one line')
})

t.test('headers, frames in order, then the end', async (t) => {
  const raw = new FakeResponse()
  async function * source () { yield { n: 1 }; yield { n: 2 } }
  const { stream, released } = open(raw, source(), { transform: async (result) => ({ wrapped: result }) })
  await stream.done
  t.equal(raw.status, 200)
  t.ok(raw.flushed, 'headers go out at once')
  t.strictSame(raw.headers, { 'a2a-extensions': 'https://x/v1', ...SSE_HEADERS }, 'reply headers copied, SSE content type wins')
  t.strictSame(raw.chunks, [frame(7, { wrapped: { n: 1 } }), frame(7, { wrapped: { n: 2 } })])
  t.ok(raw.writableEnded)
  t.equal(released(), 0, 'a finished source is not released')
  t.equal(raw.listenerCount('close'), 0)
})

t.test('backpressure: waits for drain before asking for more', async (t) => {
  const raw = new FakeResponse()
  raw.accept = false
  const manual = manualSource()
  const { stream } = open(raw, manual.source)
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(raw.chunks.length, 1)
  t.equal(manual.pending.length, 1, 'no next() while the response is full')
  t.equal(raw.listenerCount('drain'), 1)
  raw.accept = true
  raw.emit('drain')
  await manual.waitForNext(2)
  t.equal(raw.listenerCount('drain'), 0)
  manual.pending[1].resolve({ done: true, value: undefined })
  await stream.done
  t.ok(raw.writableEnded)
})

t.test('the client leaves while the response is full', async (t) => {
  const raw = new FakeResponse()
  raw.accept = false
  const manual = manualSource()
  const { stream, released } = open(raw, manual.source)
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  await new Promise((resolve) => setImmediate(resolve))
  raw.emit('close')
  await stream.done
  t.equal(manual.pending.length, 1, 'nothing more is asked of the source')
  t.equal(released(), 1)
  t.equal(manual.returned, 1)
  t.equal(raw.listenerCount('close'), 0)
  t.equal(raw.listenerCount('drain'), 0)
})

t.test('close() while the source is quiet: ends at once, releases and returns the source', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { stream, released } = open(raw, manual.source)
  await manual.waitForNext()
  stream.close()
  stream.close()
  await stream.done
  t.strictSame(raw.chunks, [], 'nothing written')
  t.ok(raw.writableEnded)
  t.equal(released(), 1)
  t.equal(manual.returned, 1)
  manual.pending[0].reject(new Error('late failure after the end'))
  await new Promise((resolve) => setImmediate(resolve))
  t.pass('a late rejection of the abandoned next() is handled')
})

t.test('the client leaves during an async transform: that result is not written', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  let finishTransform!: (value: unknown) => void
  const { stream, released } = open(raw, manual.source, { transform: () => new Promise((resolve) => { finishTransform = resolve }) })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  await new Promise((resolve) => setImmediate(resolve))
  raw.emit('close')
  finishTransform({ late: true })
  await stream.done
  t.strictSame(raw.chunks, [])
  t.equal(released(), 1)
})

t.test('a source error becomes an error frame', async (t) => {
  const raw = new FakeResponse()
  async function * source () { yield 1; throw new Error('boom') }
  let seen: unknown
  const { stream } = open(raw, source(), { toError: (error) => { seen = error; return internalError('mapped') } })
  await stream.done
  t.strictSame(raw.chunks, [frame(7, 1), errorFrame(7, internalError('mapped'))])
  t.match(seen, { message: 'boom' })
})

t.test('a transform error or an unserializable result becomes an error frame and releases the source', async (t) => {
  for (const transform of [() => { throw new Error('transform failed') }, () => ({ big: 1n })]) {
    const raw = new FakeResponse()
    const manual = manualSource()
    const { stream, released } = open(raw, manual.source, { transform })
    await manual.waitForNext()
    manual.pending[0].resolve({ done: false, value: 1 })
    await stream.done
    t.strictSame(raw.chunks, [errorFrame(7, internalError())])
    t.equal(released(), 1)
    t.equal(manual.returned, 1)
  }
})

t.test('an error after the client left writes nothing', async (t) => {
  const raw = new FakeResponse()
  const manual = manualSource()
  const { stream } = open(raw, manual.source, { transform: () => { raw.emit('close'); throw new Error('after close') } })
  await manual.waitForNext()
  manual.pending[0].resolve({ done: false, value: 1 })
  await stream.done
  t.strictSame(raw.chunks, [])
})

t.test('a source whose return() rejects', async (t) => {
  const raw = new FakeResponse()
  const source: AsyncIterator<unknown, void, undefined> = {
    next: () => new Promise(() => {}),
    return: () => Promise.reject(new Error('cannot return'))
  }
  const { stream } = open(raw, source)
  await new Promise((resolve) => setImmediate(resolve))
  stream.close()
  await stream.done
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(raw.writableEnded, 'the rejection is swallowed')
})

t.test('a source without return(), a response already ended', async (t) => {
  const raw = new FakeResponse()
  let asked = 0
  const source: AsyncIterator<unknown, void, undefined> = {
    next: () => { asked++; return new Promise(() => {}) }
  }
  const { stream, released } = open(raw, source)
  await new Promise((resolve) => setImmediate(resolve))
  raw.writableEnded = true
  raw.emit('close')
  await stream.done
  t.equal(asked, 1)
  t.equal(released(), 1)
})
