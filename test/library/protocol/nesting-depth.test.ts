import t from 'tap'
import { fieldPath, tooDeepPath } from '../../../packages/a2a-converse/src/protocol/nesting-depth.js'

t.test('tooDeepPath: the first value past the limit, without recursion', async (t) => {
  t.equal(tooDeepPath('text'), undefined, 'a primitive has no depth')
  t.equal(tooDeepPath(null), undefined)
  t.equal(tooDeepPath({ a: { b: [1] } }, 3), undefined, 'exactly at the limit')
  t.strictSame(tooDeepPath({ a: { b: [[1]] } }, 3), ['a', 'b', 0])
  let deep: unknown = 'leaf'
  for (let level = 0; level < 100_000; level++) deep = [deep]
  t.equal(tooDeepPath(deep, 200)?.length, 200, '100,000 levels: found at the limit, no stack overflow')
})

t.test('fieldPath writes members with dots and indexes in brackets', async (t) => {
  t.equal(fieldPath(['message', 'parts', 0, 'data']), 'message.parts[0].data')
  t.equal(fieldPath([2, 'a']), '[2].a')
  t.equal(fieldPath([]), '')
})
