/**
 * The trim the stores' memories share (least-recently-used.ts): a tenth at once past a bound, the oldest first, in
 * one walk; with the memories: remembered-conversations.test.ts, remembered-tasks.test.ts.
 */
import t from 'tap'
import { afterTrim, forgetOldest } from '../../../packages/a2a-converse/src/stores/postgres/least-recently-used.js'

t.test('a bound keeps nine tenths once passed; below ten, the bound itself', async (t) => {
  t.equal(afterTrim(1000), 900)
  t.equal(afterTrim(10_000), 9000)
  t.equal(afterTrim(19), 18)
  t.equal(afterTrim(9), 9)
  t.equal(afterTrim(1), 1)
})

t.test('the oldest keys go first, until enough; all of them when it never is', async (t) => {
  const map = new Map([['a', 1], ['b', 2], ['c', 3], ['d', 4]])
  map.delete('a')
  map.set('a', 1)
  const forgotten: string[] = []
  forgetOldest(map, () => map.size <= 2, (key) => { forgotten.push(key); map.delete(key) })
  t.same(forgotten, ['b', 'c'], 'least recently used first: a was used again')
  t.same([...map.keys()], ['d', 'a'])
  forgetOldest(map, () => map.size <= 2, () => { t.fail('enough already: nothing forgotten') })
  forgetOldest(map, () => false, (key) => { map.delete(key) })
  t.equal(map.size, 0, 'never enough: every key')
})
