/** What "the same message" means for a retry (packages/a2a-converse/src/stores/message-replays.ts): parts and typed call, nothing else. */
import t from 'tap'
import type { Message, Part } from '@a2a-js/sdk'
import { hasReplays, messageContentDigest, MessageIdReusedError } from '../../../packages/a2a-converse/src/stores/message-replays.js'
import { CONVERSE_EXTENSION_URI } from '../../../packages/a2a-converse/src/core/uri.js'

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

t.test('the digest is the SHA-256 of the canonical JSON, byte for byte as earlier versions stored it (a retry after an upgrade is recognised)', async (t) => {
  // Vectors taken from the version that built the whole JSON text before hashing it (before issue 41).
  const vectors: Array<[Pick<Message, 'parts' | 'metadata'>, string]> = [
    [{ parts: [{ content: { $case: 'text', value: 'hello "world" \\ \n\t é 😀 \u0001 \u2028' }, mediaType: '', filename: '', metadata: {} }], metadata: undefined }, '22ef41830e6ee43bcade7a61ce12c4cd9d4117862f966da5e2389f058bd38fb9'],
    [{
      parts: [
        { content: { $case: 'data', value: { b: [1, 2.5, true, null, 'x'], a: { z: 'y', c: undefined } } }, metadata: { k: 'v' } } as unknown as Part,
        { content: { $case: 'raw', value: new Uint8Array([1, 2, 255]) } } as unknown as Part
      ],
      metadata: { [CONVERSE_EXTENSION_URI]: { call: { toolName: 'book_table', arguments: { partySize: 4 } } } }
    }, '971bc69bac919aadc24c86e7daad7e139c48cff8c07e1f3339c02f5d253d19b6'],
    [{ parts: [{ content: { $case: 'text', value: 'lone \ud800 and plain' } } as unknown as Part], metadata: undefined }, 'b55795a2a875480a5f1f340019baa3f8e26a47fd459595fae3f34b0cd7867e0d'],
    [{ parts: [], metadata: undefined }, 'bb5bb1b3a77487eecdeb0af136abad36d6d9d84ba2480015de68f2e21a70372a']
  ]
  for (const [value, digest] of vectors) t.equal(messageContentDigest(value), digest)
})

t.test('hasReplays and the error', async (t) => {
  t.equal(hasReplays({ execute () {} }), false)
  t.equal(hasReplays({ replayOf () {} }), true)
  const error = new MessageIdReusedError(`m-${'x'.repeat(200)}`)
  t.equal(error.name, 'MessageIdReusedError')
  t.match(error.message, /^messageId "m-x+" was already used for a message with other content/)
  t.ok(error.message.length < 300, 'a long messageId is cut in the message')
})
