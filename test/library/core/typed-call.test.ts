import t from 'tap'
import { CALL_FIELD, MAX_TOOL_NAME_LENGTH, readTypedCall } from '../../../packages/a2a-converse/src/core/typed-call.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'

t.test('a message is a typed call only when activated, listing the URI and holding metadata[URI].call', async (t) => {
  const call = { toolName: 'book_table', arguments: { partySize: 2 } }
  t.strictSame(readTypedCall({ extensions: [URI], metadata: { [URI]: { call } } }, true), { kind: 'call', call })
  t.strictSame(readTypedCall({ extensions: [URI], metadata: { [URI]: { call: { toolName: 'x' } } } }, true),
    { kind: 'call', call: { toolName: 'x', arguments: {} } }, 'no arguments: {}')
  t.strictSame(readTypedCall({ extensions: [URI], metadata: { [URI]: { call } } }, false), { kind: 'none' }, 'not activated')
  for (const message of [
    { metadata: { [URI]: { call } } },
    { extensions: 'nope', metadata: { [URI]: { call } } },
    { extensions: [URI] },
    { extensions: [URI], metadata: 'x' },
    { extensions: [URI], metadata: { [URI]: 'x' } },
    { extensions: [URI], metadata: { [URI]: { other: 1 } } }
  ]) {
    t.strictSame(readTypedCall(message, true), { kind: 'none' }, JSON.stringify(message))
  }
})

t.test('a malformed call names the field; a long toolName is cut to the envelope limit', async (t) => {
  t.equal(CALL_FIELD, `metadata[${URI}].call`)
  const read = (call: unknown) => readTypedCall({ extensions: [URI], metadata: { [URI]: { call } } }, true)
  t.strictSame(read(''), { kind: 'invalid', field: CALL_FIELD, description: 'must be an object with toolName and arguments' })
  t.strictSame(read({ toolName: '' }), { kind: 'invalid', field: `${CALL_FIELD}.toolName`, description: 'must be a non-empty string' })
  t.strictSame(read({ toolName: ['a'] }), { kind: 'invalid', field: `${CALL_FIELD}.toolName`, description: 'must be a non-empty string' })
  const long = read({ toolName: 'x'.repeat(300) })
  t.equal(long.kind === 'call' ? long.call.toolName : undefined, 'x'.repeat(MAX_TOOL_NAME_LENGTH))
})
