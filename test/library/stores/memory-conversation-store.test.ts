import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'
import {
  ConversationStoreClosedError, DEFAULT_CONVERSATION_LIMITS, applyConversationLimits, conversationTaskIds,
  newConversationState, type ConversationState, type ConversationStore
} from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { DEFAULT_MAX_CONVERSATIONS, DEFAULT_MAX_CONVERSATIONS_PER_CALLER, MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'

function deferred (): { promise: Promise<void>, resolve: () => void } {
  let release!: () => void
  const promise = new Promise<void>((resolve) => { release = resolve })
  return { promise, resolve: release }
}

const turn = (id: string, text = id, taskId?: string): ConversationState['turns'][number] => {
  const entry: ConversationState['turns'][number] = { id, at: '2026-01-01T00:00:00.000Z', role: 'user', text }
  if (taskId !== undefined) entry.taskId = taskId
  return entry
}

const addTurn = (id: string, taskId?: string) => (state: ConversationState | undefined): ConversationState => {
  const next = state ?? newConversationState('demo', 'ignored')
  next.turns.push(turn(id, id, taskId))
  return next
}

t.test('newConversationState and the limits helpers', async (t) => {
  const state = newConversationState('demo', 'ctx', new Date('2026-01-01T00:00:00Z'))
  t.same(state, {
    agentId: 'demo',
    contextId: 'ctx',
    ownership: 'ai_owned',
    turns: [],
    inbox: [],
    version: 0,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z'
  })
  t.ok(Date.parse(newConversationState('a', 'b').createdAt) > 0, 'default clock')
  t.same(DEFAULT_CONVERSATION_LIMITS, { maxTurns: 50, maxInbox: 50, maxTextLength: 8000 })
  t.ok(Object.isFrozen(DEFAULT_CONVERSATION_LIMITS))

  const big = {
    ...state,
    turns: Array.from({ length: 60 }, (_, i) => turn(`t${i}`)),
    inbox: [{ id: 'h', at: 'x', text: 'y'.repeat(9000) }]
  }
  const bounded = applyConversationLimits(big)
  t.equal(bounded.turns.length, 50)
  t.equal(bounded.turns[0].id, 't10', 'the most recent are kept')
  t.equal(bounded.inbox[0].text.length, 8000, 'long text is cut')
  t.equal(big.turns.length, 60, 'input untouched')
  const tight = applyConversationLimits(big, { maxTurns: 2, maxInbox: 1, maxTextLength: 1 })
  t.same(tight.turns.map((entry) => entry.text), ['t', 't'])
  const bare = applyConversationLimits({ ...state, turns: undefined, inbox: undefined } as unknown as ConversationState)
  t.same([bare.turns, bare.inbox], [[], []], 'missing lists become empty')

  t.same(conversationTaskIds({
    ...state,
    routine: { routine: 'r', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x', taskId: 'T1' },
    turns: [turn('a', 'a', 'T1'), turn('b', 'b', 'T2'), turn('c')],
    inbox: [{ id: 'h', at: 'x', text: 'x', taskId: 'T3' }]
  }), ['T1', 'T2', 'T3'])
  t.same(conversationTaskIds(state), [])
})

t.test('options are checked', async (t) => {
  t.throws(() => new MemoryConversationStore({ maxTurns: 0 }), InvalidOptionError)
  t.throws(() => new MemoryConversationStore({ maxConversations: 1.5 }), { message: 'option "maxConversations" must be a positive integer' })
  t.throws(() => new MemoryConversationStore({ maxTextLength: -1 }), { message: /maxTextLength/ })
  const store = new MemoryConversationStore()
  t.same(store.limits, DEFAULT_CONVERSATION_LIMITS)
  t.equal(store.maxConversations, DEFAULT_MAX_CONVERSATIONS)
})

t.test('get / update / exists / list / delete', async (t) => {
  let tick = 0
  const store: ConversationStore = new MemoryConversationStore({ now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) })
  t.equal(await store.get('demo', 'c1'), undefined)
  t.equal(await store.exists('demo', 'c1'), false)

  let seen: ConversationState | undefined | null = null
  const created = await store.update('demo', 'c1', (state) => {
    seen = state
    return { ...newConversationState('wrong', 'wrong'), version: 99 }
  })
  t.equal(seen, undefined, 'a new conversation starts from undefined')
  t.equal(created.agentId, 'demo', 'the store sets the key')
  t.equal(created.contextId, 'c1')
  t.equal(created.version, 1, 'the store sets the version')
  t.equal(created.createdAt, '2026-01-01T00:00:00.000Z')
  t.equal(created.updatedAt, created.createdAt)
  t.equal(await store.exists('demo', 'c1'), true)
  t.equal(await store.exists('other-agent', 'c1'), false, 'keyed by agent too')

  const updated = await store.update('demo', 'c1', async (state) => {
    await sleep(1)
    return { ...(state as ConversationState), ownership: 'human_owned', ownershipChangedAt: 'now' }
  })
  t.equal(updated.version, 2)
  t.equal(updated.createdAt, created.createdAt, 'createdAt kept')
  t.not(updated.updatedAt, created.updatedAt)
  t.equal(updated.ownership, 'human_owned')

  const copy = await store.get('demo', 'c1') as ConversationState
  copy.turns.push(turn('x'))
  updated.turns.push(turn('y'))
  t.same((await store.get('demo', 'c1'))?.turns, [], 'results are copies')

  const kept: ConversationState[] = []
  await store.update('demo', 'c1', (state) => { kept.push(state as ConversationState); return state as ConversationState })
  kept[0].turns.push(turn('late'))
  t.same((await store.get('demo', 'c1'))?.turns, [], 'the stored state is detached from the returned object')

  await store.update('demo', 'c2', addTurn('a'))
  await store.update('demo', 'c3', addTurn('a'))
  await store.update('other', 'c9', addTurn('a'))
  await store.update('demo', 'c2', addTurn('b'))
  t.same((await store.list('demo')).map((entry) => entry.contextId), ['c2', 'c3', 'c1'], 'most recently updated first')
  const [first, ...rest] = await store.list('demo', { limit: 1 })
  t.same(rest, [], 'limit 1')
  t.same(first, {
    agentId: 'demo',
    contextId: 'c2',
    ownership: 'ai_owned',
    version: 2,
    updatedAt: (await store.get('demo', 'c2'))?.updatedAt,
    position: first.position,
    needsPerson: [],
    lastTurn: { role: 'user', at: '2026-01-01T00:00:00.000Z', text: 'b' }
  })
  t.ok(Number.isSafeInteger(first.position) && first.position > 0, 'a position')
  t.same(await store.list('nobody'), [])

  t.equal(await store.delete('demo', 'c3'), true)
  t.equal(await store.delete('demo', 'c3'), false)
  t.equal(await store.get('demo', 'c3'), undefined)
})

t.test('limits are applied on write', async (t) => {
  const store = new MemoryConversationStore({ maxTurns: 3, maxInbox: 2, maxTextLength: 5 })
  for (let i = 0; i < 5; i++) await store.update('demo', 'c', addTurn(`turn-${i}`))
  const state = await store.update('demo', 'c', (s) => {
    const next = s as ConversationState
    next.inbox.push({ id: 'h1', at: 'x', text: 'a' }, { id: 'h2', at: 'x', text: 'b' }, { id: 'h3', at: 'x', text: 'c' })
    return next
  })
  t.same(state.turns.map((entry) => entry.text), ['turn-', 'turn-', 'turn-'])
  t.same(state.turns.map((entry) => entry.id), ['turn-2', 'turn-3', 'turn-4'])
  t.same(state.inbox.map((entry) => entry.id), ['h2', 'h3'])
})

t.test('task id → context id', async (t) => {
  const store = new MemoryConversationStore()
  await store.update('demo', 'c1', addTurn('a', 'task-1'))
  await store.update('demo', 'c1', (state) => ({
    ...(state as ConversationState),
    routine: { routine: 'book_table', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x', taskId: 'task-2' }
  }))
  t.equal(await store.findContextByTaskId('demo', 'task-1'), 'c1')
  t.equal(await store.findContextByTaskId('demo', 'task-2'), 'c1')
  t.equal(await store.findContextByTaskId('other', 'task-1'), undefined, 'per agent')
  await store.update('demo', 'c2', addTurn('b', 'task-1'))
  t.equal(await store.findContextByTaskId('demo', 'task-1'), 'c2', 'the last writer wins')
  await store.update('demo', 'c1', (state) => ({ ...(state as ConversationState), turns: [], routine: undefined }))
  t.equal(await store.findContextByTaskId('demo', 'task-2'), undefined, 'forgotten with the state that named it')
  t.equal(await store.findContextByTaskId('demo', 'task-1'), 'c2', 'another conversation\'s claim is kept')
  await store.delete('demo', 'c2')
  t.equal(await store.findContextByTaskId('demo', 'task-1'), undefined)
})

t.test('concurrency: 100 parallel updates of one conversation all land', async (t) => {
  const store = new MemoryConversationStore({ maxTurns: 200 })
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.update('demo', 'busy', async (state) => {
    const next = state ?? newConversationState('demo', 'busy')
    await sleep(Math.floor(Math.random() * 3)) // yield between read and write: interleaving would lose updates
    next.turns.push(turn(`t${i}`))
    return next
  })))
  const final = await store.get('demo', 'busy') as ConversationState
  t.equal(final.turns.length, 100, 'no lost update')
  t.equal(final.version, 100)
  t.same(final.turns.map((entry) => entry.id), Array.from({ length: 100 }, (_, i) => `t${i}`), 'in call order (FIFO)')
  t.same(results.map((state) => state.version), Array.from({ length: 100 }, (_, i) => i + 1))
})

t.test('concurrency: different conversations do not block each other', async (t) => {
  const store = new MemoryConversationStore()
  const gate = deferred()
  const slow = store.update('demo', 'slow', async (state) => {
    await gate.promise
    return addTurn('slow')(state)
  })
  const fast = await store.update('demo', 'fast', addTurn('fast'))
  t.equal(fast.version, 1, 'done while the other conversation is still held')
  t.equal(await store.get('demo', 'slow'), undefined, 'the held update has not written yet')
  t.same(await store.list('demo').then((list) => list.map((entry) => entry.contextId)), ['fast'])
  const sameAgentOtherKey = await store.update('other', 'slow', addTurn('x'))
  t.equal(sameAgentOtherKey.version, 1, 'same contextId under another agent is another conversation')
  gate.resolve()
  t.equal((await slow).version, 1)
})

t.test('a throwing update leaves the state unchanged and does not poison the key', async (t) => {
  const store = new MemoryConversationStore()
  await store.update('demo', 'c', addTurn('first'))
  await t.rejects(store.update('demo', 'c', (state) => {
    (state as ConversationState).turns.push(turn('half-done'))
    throw new Error('boom')
  }), { message: 'boom' })
  await t.rejects(store.update('demo', 'c', async () => { await sleep(1); throw new Error('async boom') }), { message: 'async boom' })
  await t.rejects(store.update('demo', 'c', () => null as unknown as ConversationState), TypeError)
  await t.rejects(store.update('demo', 'c', (state) => ({ ...(state as ConversationState), bad: () => 1 })), 'not cloneable: refused')
  const state = await store.get('demo', 'c') as ConversationState
  t.same(state.turns.map((entry) => entry.id), ['first'], 'nothing of the failed updates was written')
  t.equal(state.version, 1)
  const after = await store.update('demo', 'c', addTurn('second'))
  t.equal(after.version, 2, 'the key works after failures')

  // A failure in the middle of a queue: the updates behind it still run.
  const queued = await Promise.allSettled([
    store.update('demo', 'q', addTurn('1')),
    store.update('demo', 'q', async () => { await sleep(2); throw new Error('middle') }),
    store.update('demo', 'q', addTurn('3'))
  ])
  t.same(queued.map((entry) => entry.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.same((await store.get('demo', 'q'))?.turns.map((entry) => entry.id), ['1', '3'])
})

t.test('bounded: the least recently updated idle conversation is evicted', async (t) => {
  const store = new MemoryConversationStore({ maxConversations: 2 })
  await store.update('demo', 'a', addTurn('a', 'task-a'))
  await store.update('demo', 'b', addTurn('b'))
  await store.update('demo', 'a', addTurn('a2'))
  await store.update('demo', 'c', addTurn('c'))
  t.equal(store.size, 2)
  t.equal(await store.exists('demo', 'b'), false, 'b was the least recently updated')
  t.equal(await store.exists('demo', 'a'), true)

  await store.update('demo', 'c', addTurn('c2')) // order now: a, c
  const gate = deferred()
  const holding = store.update('demo', 'a', async (state) => { await gate.promise; return addTurn('a3')(state) })
  await store.update('demo', 'd', addTurn('d'))
  t.equal(await store.exists('demo', 'a'), true, 'a conversation an update holds is not evicted')
  t.equal(await store.exists('demo', 'c'), false)
  t.equal(await store.findContextByTaskId('demo', 'task-a'), 'a')

  const held2 = store.update('demo', 'd', async (state) => { await gate.promise; return addTurn('d2')(state) })
  await store.update('demo', 'e', addTurn('e'))
  t.equal(store.size, 3, 'over the bound while every older conversation is held')
  gate.resolve()
  await Promise.all([holding, held2])
  t.equal(store.size, 2, 'back within the bound on the next write')
  t.equal(await store.exists('demo', 'e'), false, 'e is now the least recently updated')
})

t.test('close waits for running updates, then every call rejects', async (t) => {
  const store = new MemoryConversationStore()
  const gate = deferred()
  const running = store.update('demo', 'c', async (state) => { await gate.promise; return addTurn('x')(state) })
  let closed = false
  const closing = store.close().then(() => { closed = true })
  await sleep(5)
  t.equal(closed, false, 'close waits for the running update')
  gate.resolve()
  await running
  await closing
  t.equal(store.size, 0)
  await t.rejects(store.get('demo', 'c'), ConversationStoreClosedError)
  await t.rejects(store.update('demo', 'c', addTurn('y')), { code: 'A2A_CONVERSE_STORE_CLOSED' })
  await t.rejects(store.exists('demo', 'c'), ConversationStoreClosedError)
  await t.rejects(store.list('demo'), ConversationStoreClosedError)
  await t.rejects(store.findContextByTaskId('demo', 't'), ConversationStoreClosedError)
  await t.rejects(store.delete('demo', 'c'), ConversationStoreClosedError)
  await store.close()
  t.pass('closing twice is fine')
})

t.test('per owner: admit refuses past maxConversationsPerCaller; an update that creates one more evicts the owner\'s own oldest idle one', async (t) => {
  t.equal(new MemoryConversationStore().maxConversationsPerCaller, DEFAULT_MAX_CONVERSATIONS_PER_CALLER)
  t.equal(DEFAULT_MAX_CONVERSATIONS_PER_CALLER, 1000)
  t.throws(() => new MemoryConversationStore({ maxConversationsPerCaller: 0 }), InvalidOptionError)
  const store = new MemoryConversationStore({ maxConversationsPerCaller: 2 })
  t.teardown(() => store.close())
  await store.admit('demo', 'caller:alice')
  await store.update('demo', 'a-1', addTurn('t1'), { owner: 'caller:alice' })
  await store.update('demo', 'b-1', addTurn('t1'), { owner: 'caller:bob' })
  await store.update('demo', 'a-2', addTurn('t1'), { owner: 'caller:alice' })
  await store.update('demo', 'a-1', addTurn('t2'), { owner: 'caller:alice' })
  await store.update('other', 'a-3', addTurn('t1'), { owner: 'caller:alice' })
  await store.update('demo', 'x-1', addTurn('t1'))
  t.strictSame([store.conversationsOf('demo', 'caller:alice'), store.conversationsOf('demo', 'caller:bob'), store.conversationsOf('other', 'caller:alice')], [2, 1, 1],
    'counted per agent and owner, once per conversation; an update without an owner counts for nobody')
  await t.rejects(store.admit('demo', 'caller:alice'), { name: 'CallerCapError', cap: 'MAX_CONVERSATIONS_PER_CALLER', limit: 2 })
  await store.admit('demo', 'caller:bob')
  // Two new conversations at once both passed admit: the owner's own least recently updated idle one goes.
  await store.update('demo', 'a-4', addTurn('t1'), { owner: 'caller:alice' })
  t.equal(store.conversationsOf('demo', 'caller:alice'), 2)
  t.equal(await store.exists('demo', 'a-2'), false, 'alice\'s least recently updated one went')
  t.ok(await store.exists('demo', 'a-1'))
  t.ok(await store.exists('demo', 'b-1'), 'never another owner\'s')
  // Every other conversation of alice's busy (an update holds it): none of them goes, the bound is passed for now.
  const gates = [deferred(), deferred()]
  const held = ['a-1', 'a-4'].map(async (key, index) => await store.update('demo', key, async (state) => {
    await gates[index].promise
    return state as ConversationState
  }))
  await sleep(10)
  await store.update('demo', 'a-5', addTurn('t1'), { owner: 'caller:alice' })
  t.equal(store.conversationsOf('demo', 'caller:alice'), 3, 'no idle one of the owner\'s to evict')
  for (const gate of gates) gate.resolve()
  await Promise.all(held)
  t.ok(await store.delete('demo', 'a-5'))
  t.ok(await store.delete('demo', 'a-1'))
  t.equal(store.conversationsOf('demo', 'caller:alice'), 1, 'a deleted conversation no longer counts')
  await store.delete('demo', 'b-1')
  t.equal(store.conversationsOf('demo', 'caller:bob'), 0)
})
