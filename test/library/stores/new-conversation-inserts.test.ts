/**
 * New conversations of one owner share a statement (issue 43, group commit; new-conversation-inserts.ts): while one
 * insert of an agent and owner is in flight, the others wait and go out together — each inserted, counted and logged
 * as its own insert would, the owner's cap refusing exactly those past it, a conversation that exists left to the
 * locked path, a connection that fails failing each. On the embedded database, and on a server with TEST_DATABASE_URL.
 * The calls are made in one tick, so that the first is in flight while the others arrive.
 */
import t, { type Test } from 'tap'
import pg from 'pg'
import { ANSWERS_TABLE, CONVERSATION_OWNERS_TABLE, CONVERSATION_TASKS_TABLE, CONVERSATIONS_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { MAX_BATCH, NewConversationInserts, type NewConversation } from '../../../packages/a2a-converse/src/stores/postgres/new-conversation-inserts.js'
import { PostgresConversationStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js'
import { CallerCapError } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'
import { newConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import { onBothDatabases } from '../../fixtures/both-databases.js'

const AT = '2026-12-07T00:00:00.000Z'

/** A new conversation's row as conversation-writes.ts hands it over; `answers`: questions logged with it. */
function conversation (contextId: string, taskIds: string[] = [], questions: string[] = []): NewConversation {
  const state = { ...newConversationState('agent', contextId), createdAt: AT, updatedAt: AT, version: 1 }
  const answers = questions.map((question, index) => ({ at: index, availability: 'assessed', coverage: 'unanswered', reason: 'insufficient_evidence', question, key: question }))
  return { contextId, json: JSON.stringify(state), createdAt: AT, updatedAt: AT, taskIds, answers: JSON.stringify(answers) }
}

function cases (t: Test, database: PostgresDatabase): void {
  const rows = async (text: string, values: unknown[] = []): Promise<any[]> => (await database.pool.query(text, values)).rows
  const held = async (agentId: string, owner: string): Promise<number | undefined> =>
    (await rows(`select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $2`, [agentId, owner]))[0]?.held

  t.test('those that arrive while one is in flight go out together, each written as its own insert would write it', async (t) => {
    const inserts = new NewConversationInserts(database.pool, 100)
    await inserts.insert('together', 'caller:bob', conversation('existing'))
    const given = [conversation('first'), conversation('second', ['task-b', 'task-a'], ['q1', 'q2']), conversation('existing'), conversation('third', [], ['q3'])]
    const inserted = await Promise.all(given.map(async (one) => await inserts.insert('together', 'caller:alice', one)))
    t.same(inserted, [true, true, false, true], 'one that exists is not inserted (the locked path follows)')
    t.same((await rows(`select context_id, version, owner from ${CONVERSATIONS_TABLE} where agent_id = 'together' order by context_id`)).map((row) => [row.context_id, row.version, row.owner]),
      [['existing', 1, 'caller:bob'], ['first', 1, 'caller:alice'], ['second', 1, 'caller:alice'], ['third', 1, 'caller:alice']])
    t.equal(await held('together', 'caller:alice'), 3, 'each counted once')
    t.equal(await held('together', 'caller:bob'), 1, 'the existing one stays its owner\'s')
    t.same((await rows(`select task_id, context_id from ${CONVERSATION_TASKS_TABLE} where agent_id = 'together' order by task_id`)).map((row) => [row.task_id, row.context_id]),
      [['task-a', 'second'], ['task-b', 'second']])
    t.same((await rows(`select context_id, question from ${ANSWERS_TABLE} where agent_id = 'together' order by seq`)).map((row) => [row.context_id, row.question]),
      [['second', 'q1'], ['second', 'q2'], ['third', 'q3']], 'the answers logged in the order they came')
  })

  t.test(`at most ${MAX_BATCH} to a statement: the rest go out next, one alone as a single insert`, async (t) => {
    const inserts = new NewConversationInserts(database.pool, 1000)
    const given = Array.from({ length: MAX_BATCH + 2 }, (_, index) => conversation(`many-${index}`))
    t.ok((await Promise.all(given.map(async (one) => await inserts.insert('many', 'caller:alice', one)))).every((inserted) => inserted))
    t.equal(await held('many', 'caller:alice'), MAX_BATCH + 2)
  })

  t.test('a statement the owner\'s cap refuses runs again one at a time: only those past the cap are refused', async (t) => {
    const inserts = new NewConversationInserts(database.pool, 2)
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map(async (id) => await inserts.insert('capped', 'caller:alice', conversation(id))))
    t.same(outcomes.slice(0, 2).map((outcome) => outcome.status === 'fulfilled' && outcome.value), [true, true])
    for (const outcome of outcomes.slice(2)) {
      t.ok(outcome.status === 'rejected' && outcome.reason instanceof CallerCapError, 'refused at the cap')
      t.match((outcome as PromiseRejectedResult).reason, { cap: 'MAX_CONVERSATIONS_PER_CALLER', limit: 2 })
    }
    t.equal(await held('capped', 'caller:alice'), 2)
    t.same((await rows(`select context_id from ${CONVERSATIONS_TABLE} where agent_id = 'capped' order by context_id`)).map((row) => row.context_id), ['a', 'b'])
  })

  t.test('without an owner, or with the answer log\'s prune due, an insert goes alone', async (t) => {
    const inserts = new NewConversationInserts(database.pool, 10)
    t.same(await Promise.all([inserts.insert('alone', null, conversation('x')), inserts.insert('alone', null, conversation('y'))]), [true, true])
    t.same(await Promise.all([
      inserts.insert('alone', 'caller:alice', conversation('p', [], ['q'])),
      inserts.insert('alone', 'caller:alice', conversation('q', [], ['r']), [1000, 0])
    ]), [true, true])
    t.equal(await held('alone', 'caller:alice'), 2)
    // On a server the two run at once (the prune's alone, the other in flight): either may commit first.
    t.same((await rows(`select question from ${ANSWERS_TABLE} where agent_id = 'alone' order by question`)).map((row) => row.question), ['q', 'r'])
  })

  t.test('through the store: concurrent new conversations of one owner are all stored and counted', async (t) => {
    const store = new PostgresConversationStore(database, { maxConversationsPerCaller: 50 })
    const ids = Array.from({ length: 12 }, (_, index) => `store-${index}`)
    await Promise.all(ids.map(async (id) => await store.update('store', id, (state) => {
      const next = state ?? newConversationState('store', id)
      next.turns.push({ id: `${id}-u`, at: AT, role: 'user', text: `hello from ${id}` })
      return next
    }, { owner: 'caller:alice' })))
    for (const id of ids) t.equal((await store.get('store', id))?.turns[0].text, `hello from ${id}`)
    t.equal(await held('store', 'caller:alice'), 12)
    await store.close()
  })
}

onBothDatabases('converse_batches', (t, database) => { cases(t, database) })

t.test('a statement whose connection fails is not run again: each of its conversations gets the error', async (t) => {
  // Nothing listens on port 1: every connection is refused, the first insert's and the batch's alike.
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 2000 })
  t.teardown(async () => await pool.end())
  const inserts = new NewConversationInserts(pool, 10)
  const outcomes = await Promise.allSettled(['a', 'b', 'c'].map(async (id) => await inserts.insert('down', 'caller:alice', conversation(id))))
  for (const outcome of outcomes) t.ok(outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError)
})
