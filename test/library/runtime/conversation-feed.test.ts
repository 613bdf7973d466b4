/**
 * When the inbox's live feed (conversation-feed.ts) publishes a conversation's write: at once, unless the request
 * defers a task's saves (deferred-task-saves.ts) — then once those saves are written or failed, so that on a server
 * the event's NOTIFY goes in one statement with the saves' wake (test/gateway/turn-round-trips.test.ts counts them).
 * A request deferring no task's saves (a knowledge answer) publishes at once.
 */
import t from 'tap'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { ConversationFeedStore } from '../../../packages/a2a-converse/src/runtime/conversation-feed.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { newConversationState, type ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { afterDeferredSaves, withDeferredSaves, type DefersTaskSaves } from '../../../packages/a2a-converse/src/stores/deferred-task-saves.js'

const addTurn = (id: string) => (state: ConversationState | undefined): ConversationState => {
  const next = state ?? newConversationState('demo', 'x')
  next.turns.push({ id, at: '2026-12-07T10:00:00.000Z', role: 'user', text: id })
  return next
}

function feed (): { store: ConversationFeedStore, published: string[] } {
  const published: string[] = []
  const store = new ConversationFeedStore(new MemoryConversationStore(), {
    async publishConversation (_agentId: string, event: Record<string, unknown>) {
      published.push((event.conversation as { contextId: string }).contextId)
    }
  }, { warn () {} })
  return { store, published }
}

/** A task store's deferred saves, written or refused when the request's turn is done. */
const saves = (refused = false): DefersTaskSaves & { written: number } => ({
  written: 0,
  async writeDeferredSaves () {
    this.written++
    if (refused) throw new Error('refused: the task is finished')
  }
})

t.test('a write in a request that defers a task\'s saves is published once they are written', async (t) => {
  const { store, published } = feed()
  const context = new ServerCallContext()
  const tasks = saves()
  await withDeferredSaves(tasks, context, 'task-1', async () => {
    await store.update('demo', 'c1', addTurn('t1'), { context })
    t.strictSame(published, [], 'not while the turn runs')
  })
  t.equal(tasks.written, 1)
  t.strictSame(published, ['c1'], 'once the saves are written')
})

t.test('and once they failed: the conversation was written all the same', async (t) => {
  const { store, published } = feed()
  const context = new ServerCallContext()
  await t.rejects(withDeferredSaves(saves(true), context, 'task-1', async () => {
    await store.update('demo', 'c1', addTurn('t1'), { context })
  }), /refused/)
  t.strictSame(published, ['c1'])
})

t.test('at once: without a request, in a request deferring nothing, or deferring no task\'s saves', async (t) => {
  const { store, published } = feed()
  await store.update('demo', 'c1', addTurn('t1'))
  t.strictSame(published, ['c1'], 'no request')
  await store.update('demo', 'c2', addTurn('t1'), { context: new ServerCallContext() })
  t.strictSame(published, ['c1', 'c2'], 'a request deferring nothing')
  const context = new ServerCallContext()
  await withDeferredSaves(saves(), context, undefined, async () => {
    await store.update('demo', 'c3', addTurn('t1'), { context })
    t.strictSame(published, ['c1', 'c2', 'c3'], 'a turn with no task (a knowledge answer)')
    t.equal(afterDeferredSaves(context, () => {}), false, 'nothing is kept for later')
  })
})
