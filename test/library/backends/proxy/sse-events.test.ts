/** The bounded, pulled SSE reader of proxy mode. */
import t from 'tap'
import { sseEvents, SseEventTooLargeError } from '../../../../packages/a2a-converse/src/backends/proxy/sse-events.js'

async function * chunks (...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part)
}

async function all (source: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const data of source) out.push(data)
  return out
}

t.test('events split anywhere, with \\n, \\r\\n or \\r line ends; comments and other fields skipped', async (t) => {
  t.same(await all(sseEvents(chunks('data: a\n\nda', 'ta: b\r', '\n\r\n', 'event: x\nid: 1\n: hi\ndata\ndata:c\r\r\n'), 1024)),
    ['a', 'b', '\nc'])
  t.same(await all(sseEvents(chunks('data: one\n\ndata: cut'), 1024)), ['one'], 'an event without its blank line is dropped')
  t.same(await all(sseEvents(chunks('dataset: no\n\n'), 1024)), [], 'a field that only starts with "data" is another field')
})

t.test('an event larger than the bound is an error, in data lines or in a line still unfinished', async (t) => {
  await t.rejects(all(sseEvents(chunks('data: 12345\n', 'data: 67890\n\n'), 10)), SseEventTooLargeError)
  await t.rejects(all(sseEvents(chunks('data: 1234567890123'), 10)), { message: 'an event exceeds 10 bytes' })
})

t.test('pulled: the next chunk is read only when the next event is asked for', async (t) => {
  let read = 0
  async function * counted (): AsyncGenerator<Uint8Array> {
    for (const part of ['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n']) {
      read++
      yield new TextEncoder().encode(part)
    }
  }
  const events = sseEvents(counted(), 1024)
  t.same(await events.next(), { value: '1', done: false })
  t.equal(read, 1)
  await events.return()
  t.equal(read, 1, 'nothing more was read')
})
