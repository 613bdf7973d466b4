/**
 * RememberedConversations (remembered-conversations.ts), the PostgreSQL conversation store's memory, on its own: least
 * recently used first, and past a bound (keys, kept states, their characters) the least recently used tenth goes at
 * once. With the store: postgres-conversation-store.test.ts.
 */
import t from 'tap'
import { RECENT_STATES_CHARS, RememberedConversations, keyOf } from '../../../packages/a2a-converse/src/stores/postgres/remembered-conversations.js'

const keys = (count: number): string[] => Array.from({ length: count }, (_, index) => keyOf('agent', `c${index}`))

t.test('keys: past the bound, the least recently used tenth is forgotten at once', async (t) => {
  const remembered = new RememberedConversations(20, 0)
  const all = keys(22)
  for (const key of all.slice(0, 20)) remembered.remember(key)
  remembered.remember(all[0]) // the most recently used now
  t.same(all.slice(0, 20).filter((key) => !remembered.known(key)), [], 'at the bound: all kept')
  remembered.remember(all[20])
  t.same(all.filter((key) => !remembered.known(key)), [all[1], all[2], all[3], all[21]], 'one past it: 18 left, the oldest three gone')
  remembered.remember(all[21])
  t.same(all.filter((key) => !remembered.known(key)), [all[1], all[2], all[3]], 'room again: nothing else goes')
  t.equal(remembered.recent(all[0]), undefined, 'with recentStates 0 no state is kept')
})

t.test('below ten, one at a time', async (t) => {
  const remembered = new RememberedConversations(2, 2)
  const [a, b, c] = keys(3)
  for (const key of [a, b, c]) remembered.remember(key, key)
  t.same([remembered.known(a), remembered.known(b), remembered.known(c)], [false, true, true])
  t.same([remembered.recent(a), remembered.recent(b), remembered.recent(c)], [undefined, b, c])
})

t.test('kept states: past their count, the least recently written tenth goes; the keys stay known', async (t) => {
  const remembered = new RememberedConversations(100, 10)
  const all = keys(11)
  for (const key of all) remembered.remember(key, `{"${key}":1}`)
  t.same(all.filter((key) => remembered.recent(key) === undefined), [all[0], all[1]], '9 kept: the oldest two gone')
  t.same(all.filter((key) => !remembered.known(key)), [], 'still known')
  remembered.forgetRecent(all[10])
  t.equal(remembered.recent(all[10]), undefined, 'forgotten on demand')
})

t.test('kept states: past their characters, down to 90 % of them', async (t) => {
  const remembered = new RememberedConversations(100, 100)
  const json = 'x'.repeat(1024 * 1024)
  const all = keys(17)
  t.equal(RECENT_STATES_CHARS, 16 * json.length)
  for (const key of all.slice(0, 16)) remembered.remember(key, json)
  t.same(all.filter((key) => remembered.recent(key) === undefined), [all[16]], 'at the bound: all kept')
  remembered.forgetRecent(keyOf('agent', 'never kept')) // counts nothing off
  remembered.remember(all[16], json)
  t.same(all.filter((key) => remembered.recent(key) === undefined), [all[0], all[1], all[2]], '14 Mi left: 90 % of 16 Mi is 14.4 Mi')
  t.same(all.filter((key) => !remembered.known(key)), [], 'still known')
  remembered.forget('agent', ['c3'])
  t.same([remembered.known(all[3]), remembered.recent(all[3])], [false, undefined], 'forget: neither known nor kept')
})
