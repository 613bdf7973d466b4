/**
 * The behaviour every ConversationStore shares (see docs/routines.md, "update and locking"), as tap subtests that
 * any implementation runs: the memory store (conversation-store-contract-memory.test.ts) and the PostgreSQL store
 * (postgres-conversation-store.test.ts). Store-specific behaviour (eviction, option checks, SQL details) stays in
 * the store's own test file. Every case uses agent ids of its own, so implementations whose stores share state
 * (one database) need no cleaning between cases.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { answerLogContract } from './answer-log-contract.js'
import {
  ConversationStoreClosedError, newConversationState, type ConversationLimits, type ConversationState, type ConversationStore
} from '../../../packages/a2a-converse/src/stores/conversation-store.js'

export interface ContractStoreOptions extends Partial<ConversationLimits> {
  now?: () => Date
  answerRetentionMs?: number
  maxAnswersPerAgent?: number
  maxConversationsPerCaller?: number
}

export interface ConversationStoreSubject {
  /** A new store (closed by the contract only where a case closes it; the subject cleans up the rest). */
  create (options?: ContractStoreOptions): ConversationStore | Promise<ConversationStore>
  /**
   * One database session (the embedded store): an update holding a conversation holds the session, so no other update
   * runs meanwhile and cases that hold two at once do not apply.
   */
  oneSession?: boolean
}

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

let agents = 0
/** An agent id no other case (nor an earlier run on the same database) uses. */
function agent (name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}-${++agents}`
}

export function conversationStoreContract (t: Test, subject: ConversationStoreSubject): void {
  t.test('get / update / exists / list / delete', async (t) => {
    const demo = agent('demo')
    const other = agent('other')
    let tick = 0
    const store = await subject.create({ now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) })
    t.equal(await store.get(demo, 'c1'), undefined)
    t.equal(await store.exists(demo, 'c1'), false)

    let seen: ConversationState | undefined | null = null
    const created = await store.update(demo, 'c1', (state) => {
      seen = state
      return { ...newConversationState('wrong', 'wrong'), version: 99 }
    })
    t.equal(seen, undefined, 'a new conversation starts from undefined')
    t.equal(created.agentId, demo, 'the store sets the key')
    t.equal(created.contextId, 'c1')
    t.equal(created.version, 1, 'the store sets the version')
    t.equal(created.createdAt, '2026-01-01T00:00:00.000Z')
    t.equal(created.updatedAt, created.createdAt)
    t.same(await store.get(demo, 'c1'), created, 'get returns what update returned')
    t.equal(await store.exists(demo, 'c1'), true)
    t.equal(await store.exists(other, 'c1'), false, 'keyed by agent too')

    const updated = await store.update(demo, 'c1', async (state) => {
      await sleep(1)
      return { ...(state as ConversationState), ownership: 'human_owned', ownershipChangedAt: 'now' }
    })
    t.equal(updated.version, 2)
    t.equal(updated.createdAt, created.createdAt, 'createdAt kept')
    t.not(updated.updatedAt, created.updatedAt)
    t.equal(updated.ownership, 'human_owned')
    t.equal(updated.ownershipChangedAt, 'now')

    const copy = await store.get(demo, 'c1') as ConversationState
    copy.turns.push(turn('x'))
    updated.turns.push(turn('y'))
    t.same((await store.get(demo, 'c1'))?.turns, [], 'results are copies')

    const kept: ConversationState[] = []
    await store.update(demo, 'c1', (state) => { kept.push(state as ConversationState); return state as ConversationState })
    kept[0].turns.push(turn('late'))
    t.same((await store.get(demo, 'c1'))?.turns, [], 'the stored state is detached from the returned object')

    await store.update(demo, 'c2', addTurn('a'))
    await store.update(demo, 'c3', addTurn('a'))
    await store.update(other, 'c9', addTurn('a'))
    await store.update(demo, 'c2', addTurn('b'))
    t.same((await store.list(demo)).map((entry) => entry.contextId), ['c2', 'c3', 'c1'], 'most recently updated first')
    const [first, ...rest] = await store.list(demo, { limit: 1 })
    t.same(rest, [], 'limit 1')
    t.same(first, {
      agentId: demo,
      contextId: 'c2',
      ownership: 'ai_owned',
      version: 2,
      updatedAt: (await store.get(demo, 'c2'))?.updatedAt,
      position: first.position,
      needsPerson: [],
      lastTurn: { role: 'user', at: '2026-01-01T00:00:00.000Z', text: 'b' }
    })
    t.ok(Number.isSafeInteger(first.position) && first.position > 0, 'a position')
    t.same((await store.list(demo, { limit: 10 })).length, 3, 'a limit above the count')
    t.same(await store.list(demo, { limit: 0 }), [], 'limit 0')
    t.same((await store.list(other)).map((entry) => entry.contextId), ['c9'], 'per agent')
    t.same(await store.list(agent('nobody')), [])

    t.equal(await store.delete(demo, 'c3'), true)
    t.equal(await store.delete(demo, 'c3'), false)
    t.equal(await store.get(demo, 'c3'), undefined)
    t.equal(await store.exists(demo, 'c3'), false)
    const again = await store.update(demo, 'c3', addTurn('new'))
    t.equal(again.version, 1, 'a deleted conversation starts over')
  })

  t.test('list: needsPerson derived on write, filters by owner and needs a person, pages by position', async (t) => {
    const demo = agent('inbox')
    const store = await subject.create()
    const write = async (contextId: string, change: (state: ConversationState) => void) =>
      await store.update(demo, contextId, (state) => {
        const next = state ?? newConversationState(demo, contextId)
        change(next)
        return next
      })
    const answered = (coverage: string, reason: string) => ({
      id: 'a',
      at: '2026-01-01T00:00:01.000Z',
      role: 'agent' as const,
      text: 'answer',
      envelope: { author: 'agent' as const, answerCoverage: { availability: 'assessed' as const, coverage, reason } as never }
    })
    await write('plain', (state) => { state.turns.push(turn('q'), answered('answered', 'sufficient_evidence')) })
    const unanswered = await write('unanswered', (state) => { state.turns.push(turn('q'), answered('unanswered', 'insufficient_evidence')) })
    t.same(unanswered.needsPerson, ['unanswered'], 'an unanswered / insufficient_evidence answer')
    await write('scope', (state) => { state.turns.push(turn('q'), answered('unanswered', 'intentional_scope_boundary')) })
    await write('approval', (state) => {
      state.routine = { routine: 'refund', status: 'waiting_for_approval', values: {} } as never
    })
    await write('held', (state) => {
      state.ownership = 'human_owned'
      state.turns.push(turn('help', 'x'.repeat(300)))
    })
    await write('replied', (state) => {
      state.ownership = 'human_owned'
      state.turns.push(turn('q'), answered('unanswered', 'insufficient_evidence'), { id: 'h', at: 'later', role: 'human', text: 'a person answers' })
    })

    const all = await store.list(demo)
    t.same(all.map((entry) => entry.contextId), ['replied', 'held', 'approval', 'scope', 'unanswered', 'plain'])
    t.same(all.map((entry) => entry.needsPerson), [[], ['waiting_for_reply'], ['waiting_for_approval'], ['scope_boundary'], ['unanswered'], []])
    t.equal(all[1].lastTurn?.text, 'x'.repeat(200), 'the last turn cut to 200 characters')
    t.same(all[2].lastTurn, undefined, 'no turn, no lastTurn')
    t.same(all[0].lastTurn, { role: 'human', at: 'later', text: 'a person answers' })
    t.ok(all.every((entry, index) => index === 0 || entry.position < all[index - 1].position), 'positions fall')

    t.same((await store.list(demo, { needsPerson: true })).map((entry) => entry.contextId), ['held', 'approval', 'scope', 'unanswered'])
    t.same((await store.list(demo, { needsPerson: false })).map((entry) => entry.contextId), ['replied', 'plain'])
    t.same((await store.list(demo, { ownership: 'human_owned' })).map((entry) => entry.contextId), ['replied', 'held'])
    t.same((await store.list(demo, { ownership: 'ai_owned', needsPerson: true, limit: 2 })).map((entry) => entry.contextId), ['approval', 'scope'])

    const pages: string[][] = []
    let before: number | undefined
    for (;;) {
      const page = await store.list(demo, { limit: 4, before })
      if (page.length === 0) break
      pages.push(page.map((entry) => entry.contextId))
      before = page[page.length - 1].position
    }
    t.same(pages, [['replied', 'held', 'approval', 'scope'], ['unanswered', 'plain']], 'paged by position')
    t.same((await store.list(demo, { before: all[4].position, needsPerson: true })).map((entry) => entry.contextId), [], 'filters and a cursor together')

    await write('plain', (state) => { state.turns.push(turn('again')) })
    const moved = await store.list(demo, { limit: 1 })
    t.equal(moved[0].contextId, 'plain', 'an update moves the conversation to the top')
    t.ok(moved[0].position > all[0].position, 'with a new position')

    for (const before of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
      await t.rejects(store.list(demo, { before }), RangeError, `before ${before} is refused`)
    }
  })

  t.test('keys are compared exactly', async (t) => {
    const store = await subject.create()
    const base = agent('keys')
    const pairs: Array<[string, string]> = [
      [`${base}:a`, 'b'], [base, 'a:b'], [base, '["a","b"]'], [base, 'É'], [base, 'E\u0301'], [base, 'e'], [base, 'E'], [`${base} `, 'e']
    ]
    for (const [agentId, contextId] of pairs) await store.update(agentId, contextId, addTurn(`${agentId}|${contextId}`))
    for (const [agentId, contextId] of pairs) {
      const state = await store.get(agentId, contextId) as ConversationState
      t.same([state.agentId, state.contextId, state.version, state.turns[0].id], [agentId, contextId, 1, `${agentId}|${contextId}`])
    }
  })

  t.test('limits are applied on write', async (t) => {
    const demo = agent('demo')
    const store = await subject.create({ maxTurns: 3, maxInbox: 2, maxTextLength: 5 })
    for (let i = 0; i < 5; i++) await store.update(demo, 'c', addTurn(`turn-${i}`))
    const state = await store.update(demo, 'c', (s) => {
      const next = s as ConversationState
      next.inbox.push({ id: 'h1', at: 'x', text: 'a' }, { id: 'h2', at: 'x', text: 'b' }, { id: 'h3', at: 'x', text: 'c' })
      return next
    })
    t.same(state.turns.map((entry) => entry.text), ['turn-', 'turn-', 'turn-'])
    t.same(state.turns.map((entry) => entry.id), ['turn-2', 'turn-3', 'turn-4'])
    t.same(state.inbox.map((entry) => entry.id), ['h2', 'h3'])
    t.same(await store.get(demo, 'c'), state, 'stored as returned')
    const bare = await store.update(demo, 'bare', () => ({ ...newConversationState(demo, 'bare'), turns: undefined, inbox: undefined }) as unknown as ConversationState)
    t.same([bare.turns, bare.inbox], [[], []], 'missing lists become empty')
  })

  t.test('task id → context id', async (t) => {
    const demo = agent('demo')
    const store = await subject.create()
    await store.update(demo, 'c1', addTurn('a', 'task-1'))
    await store.update(demo, 'c1', (state) => ({
      ...(state as ConversationState),
      routine: { routine: 'book_table', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x', taskId: 'task-2' }
    }))
    await store.update(demo, 'c1', (state) => {
      (state as ConversationState).inbox.push({ id: 'h', at: 'x', text: 'reply', taskId: 'task-3' })
      return state as ConversationState
    })
    t.equal(await store.findContextByTaskId(demo, 'task-1'), 'c1')
    t.equal(await store.findContextByTaskId(demo, 'task-2'), 'c1', 'the routine\'s task')
    t.equal(await store.findContextByTaskId(demo, 'task-3'), 'c1', 'a reply\'s task')
    t.equal(await store.findContextByTaskId(agent('other'), 'task-1'), undefined, 'per agent')
    t.equal(await store.findContextByTaskId(demo, 'task-unknown'), undefined)
    await store.update(demo, 'c2', addTurn('b', 'task-1'))
    t.equal(await store.findContextByTaskId(demo, 'task-1'), 'c2', 'the last writer wins')
    await store.update(demo, 'c1', (state) => state as ConversationState)
    t.equal(await store.findContextByTaskId(demo, 'task-1'), 'c1', 'every write claims the ids its state names')
    await store.update(demo, 'c2', (state) => state as ConversationState)
    t.equal(await store.findContextByTaskId(demo, 'task-1'), 'c2')
    await store.update(demo, 'c1', (state) => ({ ...(state as ConversationState), turns: [], inbox: [], routine: undefined }))
    t.equal(await store.findContextByTaskId(demo, 'task-2'), undefined, 'forgotten with the state that named it')
    t.equal(await store.findContextByTaskId(demo, 'task-3'), undefined)
    t.equal(await store.findContextByTaskId(demo, 'task-1'), 'c2', 'another conversation\'s claim is kept')
    await store.delete(demo, 'c2')
    t.equal(await store.findContextByTaskId(demo, 'task-1'), undefined, 'forgotten with the conversation')
  })

  t.test('concurrency: 100 parallel updates of one conversation all land, in call order', async (t) => {
    const demo = agent('demo')
    const store = await subject.create({ maxTurns: 200 })
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.update(demo, 'busy', async (state) => {
      const next = state ?? newConversationState(demo, 'busy')
      await sleep(Math.floor(Math.random() * 3)) // yield between read and write: interleaving would lose updates
      next.turns.push(turn(`t${i}`))
      return next
    })))
    const final = await store.get(demo, 'busy') as ConversationState
    t.equal(final.turns.length, 100, 'no lost update')
    t.equal(final.version, 100)
    t.same(final.turns.map((entry) => entry.id), Array.from({ length: 100 }, (_, i) => `t${i}`), 'in call order (FIFO)')
    t.same(results.map((state) => state.version), Array.from({ length: 100 }, (_, i) => i + 1))
  })

  t.test('concurrency: different conversations do not block each other', async (t) => {
    const demo = agent('demo')
    const other = agent('other')
    const store = await subject.create()
    const gate = deferred()
    const slow = store.update(demo, 'slow', async (state) => {
      await gate.promise
      return addTurn('slow')(state)
    })
    const fast = await store.update(demo, 'fast', addTurn('fast'))
    t.equal(fast.version, 1, 'done while the other conversation is still held')
    t.equal(await store.get(demo, 'slow'), undefined, 'the held update has not written yet')
    t.equal(await store.exists(demo, 'slow'), false)
    t.same(await store.list(demo).then((list) => list.map((entry) => entry.contextId)), ['fast'])
    const sameContextOtherAgent = await store.update(other, 'slow', addTurn('x'))
    t.equal(sameContextOtherAgent.version, 1, 'same contextId under another agent is another conversation')
    gate.resolve()
    t.equal((await slow).version, 1)
  })

  t.test('fn may be called more than once: the state returned by the last call is the one written', async (t) => {
    const store = await subject.create()
    const demo = 'contract-rerun'
    for (const contextId of ['new', 'new', 'other']) {
      let calls = 0
      let recorded: string | undefined
      const result = await store.update(demo, contextId, (state) => {
        calls++
        recorded = `call ${calls}`
        return addTurn(`${contextId}-${calls}-${state?.version ?? 0}`)(state)
      })
      const last = result.turns[result.turns.length - 1]
      t.equal(last.id, `${contextId}-${calls}-${result.version - 1}`, 'the last call, on the last version, wrote')
      t.equal(recorded, `call ${calls}`)
      t.same(await store.get(demo, contextId), result)
    }
  })

  t.test('an update whose fn returns undefined writes nothing and resolves undefined', async (t) => {
    const demo = agent('demo')
    const store = await subject.create()
    t.equal(await store.update(demo, 'new', () => undefined), undefined, 'a new conversation')
    t.equal(await store.exists(demo, 'new'), false, 'is not created')
    t.equal((await store.update(demo, 'new', addTurn('then'))).version, 1, 'and a later update creates it')
    await store.update(demo, 'c', addTurn('first'))
    t.equal(await store.update(demo, 'c', async (state) => {
      (state as ConversationState).turns.push(turn('dropped'))
      return undefined
    }), undefined, 'an existing conversation')
    const state = await store.get(demo, 'c') as ConversationState
    t.same(state.turns.map((entry) => entry.id), ['first'], 'is left as it was')
    t.equal(state.version, 1)
    t.equal((await store.update(demo, 'c', addTurn('second'))).version, 2, 'and the key works after it')
  })

  t.test('read: an update given the state its caller read writes on it when unchanged, and on the latest state when not', async (t) => {
    const demo = agent('demo')
    const store = await subject.create()
    const first = await store.update(demo, 'c', addTurn('first'))
    const read = await store.get(demo, 'c') as ConversationState
    const seen: number[] = []
    const tracked = (id: string) => (state: ConversationState | undefined): ConversationState => {
      seen.push((state as ConversationState).version)
      return addTurn(id)(state)
    }
    const second = await store.update(demo, 'c', tracked('second'), { read })
    t.equal(second.version, 2)
    t.same(seen.at(-1), first.version, 'fn saw the version read')
    // `read` is now stale: the update lands on the latest state, nothing is lost.
    const third = await store.update(demo, 'c', tracked('third'), { read })
    t.equal(third.version, 3)
    t.same(seen.at(-1), 2, 'the last call saw the latest version')
    t.same((await store.get(demo, 'c'))?.turns.map((entry) => entry.id), ['first', 'second', 'third'])
    t.same(read.turns.map((entry) => entry.id), ['first'], 'the state read is not changed by the update')
    t.equal(await store.update(demo, 'c', () => undefined, { read: third }), undefined, 'undefined writes nothing')
    t.equal((await store.get(demo, 'c'))?.version, 3)
    // Answers logged by an update on the state read, as by any update.
    const answered = await store.update(demo, 'c', (state) => {
      const next = state as ConversationState
      next.turns.push({ id: 'a', at: '2026-01-01T00:00:00.000Z', role: 'agent', text: 'an answer', envelope: { author: 'agent', answerCoverage: { availability: 'assessed', coverage: 'unanswered' }, ownership: { state: 'ai_owned', suppressed: false } } })
      return next
    }, { read: third })
    t.equal(answered.version, 4)
  })

  t.test('a throwing update leaves the state unchanged and does not poison the key', async (t) => {
    const demo = agent('demo')
    const store = await subject.create()
    await store.update(demo, 'c', addTurn('first'))
    await t.rejects(store.update(demo, 'c', (state) => {
      (state as ConversationState).turns.push(turn('half-done'))
      throw new Error('boom')
    }), { message: 'boom' })
    await t.rejects(store.update(demo, 'c', async () => { await sleep(1); throw new Error('async boom') }), { message: 'async boom' })
    await t.rejects(store.update(demo, 'c', () => null as unknown as ConversationState), TypeError)
    await t.rejects(store.update(demo, 'c', () => 'text' as unknown as ConversationState), TypeError)
    await t.rejects(store.update(demo, 'c', (state) => ({ ...(state as ConversationState), bad: () => 1 })), 'not cloneable: refused')
    const state = await store.get(demo, 'c') as ConversationState
    t.same(state.turns.map((entry) => entry.id), ['first'], 'nothing of the failed updates was written')
    t.equal(state.version, 1)
    const after = await store.update(demo, 'c', addTurn('second'))
    t.equal(after.version, 2, 'the key works after failures')

    await t.rejects(store.update(demo, 'never', () => { throw new Error('no') }), { message: 'no' })
    t.equal(await store.exists(demo, 'never'), false, 'a failed first update creates nothing')
    t.same(await store.list(demo).then((list) => list.map((entry) => entry.contextId)), ['c'])
    t.equal((await store.update(demo, 'never', addTurn('yes'))).version, 1)

    // A failure in the middle of a queue: the updates behind it still run.
    const queued = await Promise.allSettled([
      store.update(demo, 'q', addTurn('1')),
      store.update(demo, 'q', async () => { await sleep(2); throw new Error('middle') }),
      store.update(demo, 'q', addTurn('3'))
    ])
    t.same(queued.map((entry) => entry.status), ['fulfilled', 'rejected', 'fulfilled'])
    t.same((await store.get(demo, 'q'))?.turns.map((entry) => entry.id), ['1', '3'])
  })

  t.test('per owner (MAX_CONVERSATIONS_PER_CALLER): admit (or, without admit, the write) refuses at the cap; one more created anyway evicts the owner\'s own oldest idle one', async (t) => {
    const demo = agent('demo')
    const other = agent('other')
    const store = await subject.create({ maxConversationsPerCaller: 2 })
    const alice = 'caller:alice'
    await store.admit?.(demo, alice)
    await store.update(demo, 'a-1', addTurn('t1'), { owner: alice })
    await store.update(demo, 'b-1', addTurn('t1'), { owner: 'caller:bob' })
    await store.update(demo, 'a-2', addTurn('t1'), { owner: alice })
    await store.update(demo, 'a-1', addTurn('t2'), { owner: alice })
    await store.update(other, 'a-3', addTurn('t1'), { owner: alice })
    await store.update(demo, 'x-1', addTurn('t1'))
    const refusal = { name: 'CallerCapError', cap: 'MAX_CONVERSATIONS_PER_CALLER', limit: 2 }
    const counted = 'counted per agent and owner, once per conversation (continuing one counts nothing)'
    if (store.admit === undefined) {
      await t.rejects(store.update(demo, 'a-4', addTurn('t1'), { owner: alice }), refusal, `the write refuses: ${counted}`)
      t.equal(await store.exists(demo, 'a-4'), false, 'nothing written')
      await store.update(demo, 'b-2', addTurn('t1'), { owner: 'caller:bob' })
      await store.update(other, 'a-4', addTurn('t1'), { owner: alice })
      t.ok(await store.delete(demo, 'b-2'))
      t.ok(await store.delete(other, 'a-4'))
    } else {
      await t.rejects(store.admit(demo, alice), refusal, counted)
      await store.admit(demo, 'caller:bob')
      await store.admit(other, alice)
    }
    await store.update(demo, 'a-1', addTurn('t3'), { owner: alice })
    t.equal((await store.get(demo, 'a-1'))?.turns.length, 3, 'continuing a conversation at the cap is never refused')
    // Refused in the write, no second one is created past the cap in this order: the eviction's cases are the store's.
    if (store.admit === undefined) return

    // Two new conversations at once both passed admit: the owner's own least recently updated idle one goes.
    await store.update(demo, 'a-4', addTurn('t1'), { owner: alice })
    t.equal(await store.exists(demo, 'a-2'), false, 'alice\'s least recently updated one went')
    t.ok(await store.exists(demo, 'a-1'))
    t.ok(await store.exists(demo, 'b-1'), 'never another owner\'s')
    t.ok(await store.exists(demo, 'x-1'), 'nor one without an owner')
    t.ok(await store.exists(other, 'a-3'), 'nor one of another agent')

    if (subject.oneSession === true) return
    // Every other conversation of alice's busy (an update holds it): none of them goes, the bound is passed for now.
    const gates = [deferred(), deferred()]
    const entered = [deferred(), deferred()]
    const held = ['a-1', 'a-4'].map(async (key, index) => await store.update(demo, key, async (state) => {
      entered[index].resolve()
      await gates[index].promise
      return state as ConversationState
    }))
    await Promise.all(entered.map((entry) => entry.promise))
    await store.update(demo, 'a-5', addTurn('t1'), { owner: alice })
    for (const gate of gates) gate.resolve()
    await Promise.all(held)
    t.same(await Promise.all(['a-1', 'a-4', 'a-5'].map(async (key) => await store.exists(demo, key))), [true, true, true],
      'no idle one of the owner\'s to evict')
    t.ok(await store.delete(demo, 'a-5'))
    t.ok(await store.delete(demo, 'a-4'))
    await store.admit(demo, alice)
    t.pass('a deleted conversation no longer counts')
  })

  t.test('close waits for running updates, then every call rejects', async (t) => {
    const demo = agent('demo')
    const store = await subject.create()
    const gate = deferred()
    const running = store.update(demo, 'c', async (state) => { await gate.promise; return addTurn('x')(state) })
    const queued = store.update(demo, 'c', addTurn('y'))
    let closed = false
    const closing = store.close().then(() => { closed = true })
    await sleep(5)
    t.equal(closed, false, 'close waits for the running update')
    gate.resolve()
    t.equal((await running).version, 1)
    t.equal((await queued).version, 2, 'an update queued before close still runs')
    await closing
    await t.rejects(store.get(demo, 'c'), ConversationStoreClosedError)
    await t.rejects(store.update(demo, 'c', addTurn('y')), { code: 'A2A_CONVERSE_STORE_CLOSED' })
    await t.rejects(store.exists(demo, 'c'), ConversationStoreClosedError)
    await t.rejects(store.list(demo), ConversationStoreClosedError)
    await t.rejects(store.findContextByTaskId(demo, 't'), ConversationStoreClosedError)
    await t.rejects(store.delete(demo, 'c'), ConversationStoreClosedError)
    await store.close()
    t.pass('closing twice is fine')
  })

  answerLogContract(t, subject)
}
