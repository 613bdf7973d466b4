/**
 * cloneData (packages/a2a-converse/src/core/clone-data.ts) must give structuredClone's result for every value: the same data,
 * prototypes, shared references and cycles, and the same DataCloneError; and requestContextOf must build
 * what `new RequestContext` builds.
 */
import t, { type Test } from 'tap'
import { Message, SendMessageRequest } from '@a2a-js/sdk'
import { RequestContext, ServerCallContext } from '@a2a-js/sdk/server'
import { cloneData } from '../../../packages/a2a-converse/src/core/clone-data.js'
import { requestContextOf } from '../../../packages/a2a-converse/src/backends/local/sdk-internals.js'

/** Same value as structuredClone gives: strict deep equality, prototypes included, and own key order. */
function sameAsStructuredClone (t: Test, value: unknown, name: string): unknown {
  const expected = structuredClone(value)
  const actual = cloneData(value)
  t.strictSame(actual, expected, name)
  if (typeof expected === 'object' && expected !== null) {
    t.equal(Object.getPrototypeOf(actual), Object.getPrototypeOf(expected), `${name}: prototype`)
    t.strictSame(Reflect.ownKeys(actual as object), Reflect.ownKeys(expected), `${name}: own keys in order`)
    t.not(actual, value, `${name}: a copy`)
  }
  return actual
}

t.test('plain data: the same copy as structuredClone, detached from the original', async (t) => {
  for (const value of [0, -0, Number.NaN, 1.5, 'text', '', true, false, null, undefined, 10n]) {
    t.ok(Object.is(cloneData(value), structuredClone(value)), `primitive ${String(value)}`)
  }
  const nested = { a: 1, b: [1, 'two', { three: [3, null, undefined] }], c: { d: { e: { f: 'deep' } } }, 2: 'index key', 1: 'first' }
  const copy = sameAsStructuredClone(t, nested, 'nested objects and arrays') as typeof nested
  copy.c.d.e.f = 'changed'
  ;(copy.b[2] as { three: unknown[] }).three.push(4)
  t.equal(nested.c.d.e.f, 'deep', 'the original is untouched')
  t.equal((nested.b[2] as { three: unknown[] }).three.length, 3)

  sameAsStructuredClone(t, [], 'empty array')
  sameAsStructuredClone(t, {}, 'empty object')
  const bare = Object.assign(Object.create(null) as object, { x: 1 })
  sameAsStructuredClone(t, { bare }, 'null-prototype object → plain object')
  sameAsStructuredClone(t, { undefinedMember: undefined }, 'undefined members kept')
})

t.test('__proto__ and constructor keys stay inert own data', async (t) => {
  const parsed = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, "a": [{"__proto__": 1}]}')
  // (tcompare reads `__proto__` as the prototype, so compare as JSON, which lists own keys only.)
  const copy = cloneData(parsed) as Record<string, unknown>
  t.equal(JSON.stringify(copy), JSON.stringify(structuredClone(parsed)))
  t.equal(JSON.stringify(copy), JSON.stringify(parsed))
  const own = (object: object) => Object.getOwnPropertyDescriptor(object, '__proto__')?.value
  t.not(own(copy), own(parsed), 'a copy')
  t.strictSame(own(copy), { polluted: true })
  t.ok(Object.hasOwn(copy, '__proto__'), 'own __proto__ property')
  t.equal(Object.getPrototypeOf(copy), Object.prototype, 'prototype not changed')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing polluted')
})

t.test('shared references and cycles are kept as structuredClone keeps them', async (t) => {
  const shared = { value: 1 }
  const value = { a: shared, b: shared, list: [shared] }
  const copy = sameAsStructuredClone(t, value, 'shared') as typeof value
  t.equal(copy.a, copy.b)
  t.equal(copy.list[0], copy.a)
  t.not(copy.a, shared)

  const cyclic: Record<string, unknown> = { name: 'loop' }
  cyclic.self = cyclic
  cyclic.list = [cyclic]
  const loop = cloneData(cyclic)
  t.equal(loop.self, loop, 'object cycle')
  t.equal((loop.list as unknown[])[0], loop, 'array cycle')
})

t.test('everything else goes through structuredClone: same copy or same error', async (t) => {
  const holes = [1, , 3] // eslint-disable-line no-sparse-arrays
  const holeCopy = sameAsStructuredClone(t, { holes }, 'array with a hole') as { holes: unknown[] }
  t.notOk(1 in holeCopy.holes, 'the hole stays a hole')
  const extra = Object.assign([1, 2], { note: 'extra' })
  t.equal((sameAsStructuredClone(t, { extra }, 'array with another own key') as { extra: { note?: string } }).extra.note, 'extra')
  const both = Object.assign([1, , 3], { note: 'extra' }) // eslint-disable-line no-sparse-arrays
  sameAsStructuredClone(t, both, 'a hole and another key: as many keys as the length')
  class List extends Array {}
  sameAsStructuredClone(t, { list: List.from([1, 2]) }, 'array subclass → array')
  class Point { x = 1; y = 2 }
  sameAsStructuredClone(t, { point: new Point() }, 'class instance → plain object')
  const pooled = Buffer.from('aGVsbG8=', 'base64')
  sameAsStructuredClone(t, { bytes: new Uint8Array([1, 2, 3]), pooled }, 'typed arrays and Buffers')
  sameAsStructuredClone(t, { when: new Date(0), map: new Map([[1, { a: 1 }]]), set: new Set([1]), pattern: /x/g }, 'Date, Map, Set, RegExp')
  sameAsStructuredClone(t, { error: new RangeError('boom') }, 'Error')
  const withGetter = { get computed () { return 42 } }
  sameAsStructuredClone(t, withGetter, 'a getter: its value')
  const hidden = Object.defineProperty({ shown: 1 }, 'hidden', { value: 2, enumerable: false })
  sameAsStructuredClone(t, Object.assign(hidden, { [Symbol('s')]: 3 }), 'non-enumerable and symbol keys dropped')

  for (const [name, value] of [
    ['a function', { callback: () => 1 }],
    ['a symbol', { tag: Symbol('x') }],
    ['a function in an array', [1, () => 1]],
    ['a proxy', { proxy: new Proxy({}, {}) }],
    ['a proxied array', new Proxy([1], {})]
  ] as Array<[string, unknown]>) {
    let expected: unknown
    try {
      structuredClone(value)
    } catch (error) {
      expected = error
    }
    t.ok(expected instanceof Error, `structuredClone refuses ${name}`)
    t.throws(() => cloneData(value), expected as Error, `the same error for ${name}`)
  }
})

t.test('SDK objects: a decoded request and an agent message', async (t) => {
  const request = SendMessageRequest.fromJSON({
    message: {
      messageId: 'm-1',
      role: 'ROLE_USER',
      parts: [{ text: 'hello', metadata: { a: 1 } }, { data: { nested: [1, { b: 2 }] } }, { url: 'https://x.example/f' }, { raw: 'aGVsbG8=' }],
      metadata: { trace: 'abc' },
      extensions: ['https://x.example/v1']
    },
    configuration: { acceptedOutputModes: ['text/plain'], historyLength: 2 },
    metadata: { z: null }
  })
  sameAsStructuredClone(t, request, 'SendMessageRequest (raw part: structuredClone)')
  const { message } = request
  const plain = { ...request, message: { ...message, parts: message?.parts.slice(0, 3) } }
  sameAsStructuredClone(t, plain, 'SendMessageRequest, plain parts')
  const reply = Message.fromJSON({
    messageId: 'r-1',
    contextId: 'c-1',
    role: 'ROLE_AGENT',
    parts: [{ text: 'answer' }],
    metadata: { 'https://x.example/v1': { citations: [{ title: 'T' }] } },
    extensions: ['https://x.example/v1']
  })
  sameAsStructuredClone(t, reply, 'agent Message')
})

t.test('requestContextOf builds what new RequestContext builds', async (t) => {
  const request = SendMessageRequest.fromJSON({
    message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }], metadata: { trace: 'abc' }, contextId: 'c-1', taskId: 't-1' }
  })
  const context = new ServerCallContext({ requestedExtensions: ['https://x.example/v1'] })
  const expected = new RequestContext(request, 't-1', 'c-1', context)
  const actual = requestContextOf(request, 't-1', 'c-1', context)
  t.ok(actual instanceof RequestContext)
  t.strictSame(Reflect.ownKeys(actual), Reflect.ownKeys(expected), 'the same own properties in the same order')
  t.strictSame(actual, expected)
  t.equal(actual.context, context, 'the call context itself')
  t.strictSame(actual.userMessage, request.message)
  t.not(actual.request, request, 'the request is a copy')
  ;(actual.userMessage.metadata as Record<string, unknown>).trace = 'changed'
  t.equal((request.message?.metadata as Record<string, unknown>).trace, 'abc', 'changing it leaves the original alone')
})

t.test('values nested deeper than MAX_COPY_DEPTH go through structuredClone: same copy, no unbounded recursion here', async (t) => {
  const { MAX_COPY_DEPTH } = await import('../../../packages/a2a-converse/src/core/clone-data.js')
  let deep: unknown = { leaf: true }
  for (let level = 0; level < MAX_COPY_DEPTH + 10; level++) deep = level % 2 === 0 ? { a: deep } : [deep]
  t.strictSame(cloneData(deep), structuredClone(deep))
  let tooDeep: unknown = 'x'
  for (let level = 0; level < 200_000; level++) tooDeep = { a: tooDeep }
  t.throws(() => cloneData(tooDeep), RangeError, "too deep for any copy: structuredClone's RangeError, not a crash")
})
