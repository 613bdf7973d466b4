/** packages/a2a-converse/src/protocol/well-formed.ts: unpaired surrogates become U+FFFD in values and member names; a clean value is kept. */
import t from 'tap'
import { wellFormed } from '../../../packages/a2a-converse/src/protocol/well-formed.js'

t.test('a value with nothing to replace is returned as is (no copy)', async (t) => {
  const value = { message: { parts: [{ text: 'emoji \ud83d\ude00 paired' }, { data: { n: 1, none: null, list: [true, 'x'] } }] } }
  t.equal(wellFormed(value), value)
})

t.test('each unpaired surrogate, high or low, in values and member names, becomes U+FFFD', async (t) => {
  const value = { a: ['x\ud800', { 'k\udc00': 'v\udfff\ud83d\ude00', n: 2, none: null }], b: 'fine' }
  t.strictSame(wellFormed(value), { a: ['x\uFFFD', { 'k\uFFFD': 'v\uFFFD\ud83d\ude00', n: 2, none: null }], b: 'fine' })
  t.equal(value.a[0], 'x\ud800', 'the original is left alone')
})

t.test('a `__proto__` member stays a member of the copy (JSON.parse made it one)', async (t) => {
  const value = JSON.parse('{"__proto__": {"polluted": "\\ud800"}, "text": "\\udc00"}')
  const copy = wellFormed(value) as Record<string, unknown>
  t.ok(Object.hasOwn(copy, '__proto__'))
  t.strictSame(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: '\uFFFD' })
  t.equal(Object.getPrototypeOf(copy), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})
