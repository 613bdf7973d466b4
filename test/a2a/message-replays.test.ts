/** What "the same message" means for a retry (src/stores/message-replays.ts): parts and typed call, nothing else. */
import t from 'tap'
import type { Message, Part } from '@a2a-js/sdk'
import { hasReplays, messageContentDigest, MessageIdReusedError } from '../../src/stores/message-replays.js'
import { CONVERSE_EXTENSION_URI } from '../../src/core/uri.js'

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' })
const data = (value: Record<string, unknown>): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' })
const raw = (value: Buffer): Part => ({ content: { $case: 'raw', value }, metadata: undefined, filename: 'f.bin', mediaType: 'application/octet-stream' })

function message (parts: Part[], metadata?: Record<string, unknown>): Pick<Message, 'parts' | 'metadata'> {
  return { parts, metadata }
}

t.test('the digest covers parts and the typed call; key order, other metadata and unset members do not count', async (t) => {
  const digest = messageContentDigest(message([text('hello')]))
  t.match(digest, /^[0-9a-f]{64}$/)
  t.equal(messageContentDigest(message([text('hello')], { trace: 'attempt-2' })), digest, 'other metadata is not content')
  t.not(messageContentDigest(message([text('hello!')])), digest)
  t.equal(messageContentDigest(message([data({ a: 1, b: [true, null] })])), messageContentDigest(message([data({ b: [true, null], a: 1 })])), 'keys sorted')
  t.equal(messageContentDigest(message([data({ a: 1, skip: undefined })])), messageContentDigest(message([data({ a: 1 })])), 'undefined members left out')
  t.not(messageContentDigest(message([raw(Buffer.from([1, 2]))])), messageContentDigest(message([raw(Buffer.from([1, 3]))])), 'bytes count')
  const call = (partySize: number): Record<string, unknown> => ({ [CONVERSE_EXTENSION_URI]: { call: { toolName: 'book_table', arguments: { partySize } } } })
  t.not(messageContentDigest(message([text('x')], call(2))), messageContentDigest(message([text('x')], call(3))), 'the typed call counts')
  t.not(messageContentDigest(message([text('x')], call(2))), messageContentDigest(message([text('x')])))
})

t.test('hasReplays and the error', async (t) => {
  t.equal(hasReplays({ execute () {} }), false)
  t.equal(hasReplays({ replayOf () {} }), true)
  const error = new MessageIdReusedError(`m-${'x'.repeat(200)}`)
  t.equal(error.name, 'MessageIdReusedError')
  t.match(error.message, /^messageId "m-x+" was already used for a message with other content/)
  t.ok(error.message.length < 300, 'a long messageId is cut in the message')
})
