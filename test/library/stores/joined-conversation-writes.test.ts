/**
 * A turn's conversation write joined to its task's deferred saves (PostgresConversationStoreOptions.joinsTaskSaves and
 * soleWriter, deferred-task-saves.ts `joinDeferredSaves`): a routine step's conditional write on a kept state, and a new
 * conversation found absent moments ago, go in the statement of the request's task saves — one round trip for the
 * turn; `update` answers before anything is sent, the conversation stays locked in this process until the statement
 * has run, and a write that finds its row moved or taken writes nothing at all (ConversationMovedError); a refusal at
 * the caller's bound refuses the whole statement. Written alone when the request saved nothing; given up (nothing
 * written, the lock released) when the saves' write fails first. A new task's reservation left to the saves
 * (reserveWithSaves) is made in their statement ahead of the insert, alone before a write that does not join, or in
 * the statement of an insert that does not join. Never joined: a state read from the database, a request that saves no
 * task, a store that does not join; and, for a store that is not the database's one writer (a server's), anything but
 * the insert of an id made for the request (`newContextId`). On the embedded database and, for the SQL, on a server
 * with TEST_DATABASE_URL. Queries are counted as test/gateway/turn-round-trips.test.ts counts them.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import { Task, TaskState } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { queryCounter } from '../../fixtures/query-counter.js'
import { onBothDatabases } from '../../fixtures/both-databases.js'
import { ANSWERS_TABLE, CONVERSATIONS_TABLE, PUSH_OUTBOX_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresTaskStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js'
import { PostgresConversationStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js'
import type { PostgresDatabase } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import { newConversationState, type ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { ConversationMovedError } from '../../../packages/a2a-converse/src/stores/errors.js'
import { CallerCapError } from '../../../packages/a2a-converse/src/stores/caller-key.js'
import { joinedWriteOf, withDeferredSaves } from '../../../packages/a2a-converse/src/stores/deferred-task-saves.js'
import { PostgresPushConfigStore } from '../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js'
import { SecretBox, currentPrefix } from '../../../packages/a2a-converse/src/stores/secret-box.js'
import { ConversationFeedStore } from '../../../packages/a2a-converse/src/runtime/conversation-feed.js'

t.setTimeout(120_000)

const counted = queryCounter(t)

const task = (id: string, contextId: string, state: string): Task =>
  Task.fromJSON({ id, contextId, status: { state, timestamp: '2026-12-07T10:00:00.000Z' }, history: [{ messageId: `${id}-m`, role: 'ROLE_USER', parts: [{ text: 'hi' }] }] })

const addTurn = (id: string) => (state: ConversationState | undefined): ConversationState => {
  const next = state ?? newConversationState('demo', 'x')
  next.turns.push({ id, at: '2026-12-07T10:00:00.000Z', role: 'user', text: id })
  return next
}

async function storedTurns (database: Pick<PostgresDatabase, 'db'>, contextId: string): Promise<string[] | undefined> {
  const { rows } = await sql<{ state: ConversationState }>`select state from ${sql.table(CONVERSATIONS_TABLE)} where agent_id = 'demo' and context_id = ${contextId}`.execute(database.db)
  return rows[0]?.state.turns.map((turn) => turn.id)
}

function joinedWrites (t: Test, database: Pick<PostgresDatabase, 'db' | 'pool'>, prefix: string): void {
  const conversations = new PostgresConversationStore(database, { joinsTaskSaves: true, soleWriter: true, maxConversationsPerCaller: 3 })
  const tasks = new PostgresTaskStore(database.db, { soleWriter: true })
  t.teardown(async () => { await conversations.close() })

  /** A conversation written and kept: a step's `read`. */
  const kept = async (contextId: string): Promise<ConversationState> => {
    await conversations.update('demo', contextId, addTurn('t1'))
    return await conversations.get('demo', contextId, { recent: true }) as ConversationState
  }
  /** A step's setting: a task waiting for input on a kept conversation, and a request. */
  const waiting = async (name: string): Promise<{ contextId: string, id: string, read: ConversationState, context: ServerCallContext }> => {
    const [contextId, id] = [`${prefix}${name}`, `${prefix}${name}-task`]
    await tasks.save(task(id, contextId, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    return { contextId, id, read: await kept(contextId), context: new ServerCallContext() }
  }

  t.test('a routine step: answered before anything is sent, locked until its task\'s saves, then one statement', async (t) => {
    const { contextId, id, read, context } = await waiting('step')
    const turn = await counted(async () => await withDeferredSaves(tasks, context, id, async () => {
      const inside = await counted(async () => {
        const next = await conversations.update('demo', contextId, addTurn('t2'), { read, context })
        t.strictSame(next.turns.map((one) => one.id), ['t1', 't2'], 'the state as it will be stored')
        await tasks.save(task(id, contextId, 'TASK_STATE_COMPLETED'), context)
      })
      t.equal(inside.queries, 0, 'nothing sent during the turn')
      t.strictSame(await storedTurns(database, contextId), ['t1'], 'not stored yet')
    }))
    t.equal(turn.queries, 2, 'one statement (and the check above)')
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2'])
    t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'the task with it')
    const next = await conversations.get('demo', contextId, { recent: true })
    t.equal(next?.version, 2, 'kept as written')
  })

  t.test('locked in this process until written: another request\'s update waits for it', async (t) => {
    const contextId = `${prefix}locked`
    const read = await kept(contextId)
    const context = new ServerCallContext()
    let other: Promise<unknown> | undefined
    await withDeferredSaves(tasks, context, `${prefix}locked-task`, async () => {
      await conversations.update('demo', contextId, addTurn('t2'), { read, context })
      other = conversations.update('demo', contextId, addTurn('t3'))
      await new Promise((resolve) => setTimeout(resolve, 20))
      t.strictSame(await storedTurns(database, contextId), ['t1'], 'the other waits')
    })
    await other
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2', 't3'], 'written, then the other update on it')
  })

  t.test('a new conversation found absent, a new task reserved: the insert goes with the saves', async (t) => {
    // Reserved first in a statement of its own, or left to the saves (reserveWithSaves): made in theirs, ahead of the insert.
    for (const [way, statements] of [['reserve', 2], ['reserveWithSaves', 1]] as const) {
      const [contextId, id] = [`${prefix}new-${way}`, `${prefix}new-${way}-task`]
      const context = new ServerCallContext()
      const turn = await counted(async () => await withDeferredSaves(tasks, context, undefined, async () => {
        await tasks[way](id, context)
        const inside = await counted(async () => {
          t.equal(await tasks.load(id, context), undefined, 'adopted: no row')
          await conversations.update('demo', contextId, addTurn('t1'), { context, foundNone: true, owner: 'alice' })
          await tasks.save(task(id, contextId, 'TASK_STATE_INPUT_REQUIRED'), context)
        })
        t.equal(inside.queries, 0)
      }))
      t.equal(turn.queries, statements, `${way}: ${statements} statement(s)`)
      t.strictSame(await storedTurns(database, contextId), ['t1'])
      t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
    }
  })

  t.test('not the sole writer (a server): only the insert of an id made for the request joins', async (t) => {
    const server = new PostgresConversationStore(database, { joinsTaskSaves: true })
    t.teardown(async () => { await server.close() })
    const { contextId, id, context } = await waiting('server-step')
    const read = await server.get('demo', contextId, { recent: true }) as ConversationState
    await withDeferredSaves(tasks, context, id, async () => {
      const { queries } = await counted(async () => await server.update('demo', contextId, addTurn('t2'), { read, context }))
      t.equal(queries, 1, 'a step on a kept state: written at once (another instance may have moved it)')
      t.equal(joinedWriteOf(context), undefined)
    })
    const absent = new ServerCallContext()
    await withDeferredSaves(tasks, absent, undefined, async () => {
      await tasks.reserveWithSaves(`${prefix}server-absent-task`, absent)
      const { queries } = await counted(async () => await server.update('demo', `${prefix}server-absent`, addTurn('a1'), { context: absent, foundNone: true }))
      t.equal(queries, 1, 'found absent (another instance may insert it meanwhile): not joined; the reservation and the insert at once, one statement')
      t.equal(joinedWriteOf(absent), undefined)
      await tasks.save(task(`${prefix}server-absent-task`, `${prefix}server-absent`, 'TASK_STATE_INPUT_REQUIRED'), absent)
    })
    const [newId, newTask] = [`${prefix}server-new`, `${prefix}server-new-task`]
    const minted = new ServerCallContext()
    const turn = await counted(async () => await withDeferredSaves(tasks, minted, undefined, async () => {
      await tasks.reserveWithSaves(newTask, minted)
      const inside = await counted(async () => {
        const next = await server.update('demo', newId, addTurn('n1'), { context: minted, foundNone: true, newContextId: true, owner: 'alice' })
        t.strictSame(next.turns.map((one) => one.id), ['n1'], 'the state as it will be stored')
        await tasks.save(task(newTask, newId, 'TASK_STATE_COMPLETED'), minted)
      })
      t.equal(inside.queries, 0, 'an id made for the request: nothing sent during the turn')
    }))
    t.equal(turn.queries, 1, 'the reservation, the insert and the saves in one statement')
    t.strictSame(await storedTurns(database, newId), ['n1'])
    t.equal((await tasks.load(newTask, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED)
  })

  t.test('not joined, a pending reservation ahead of the insert: refused there (nothing inserted), or standing when the conversation exists', async (t) => {
    const server = new PostgresConversationStore(database, { joinsTaskSaves: true, maxConversationsPerCaller: 3 })
    t.teardown(async () => { await server.close() })
    const capped = new PostgresTaskStore(database.db, { maxOpenTasksPerCaller: 1, callerResolver: () => `${prefix}erin` })
    await capped.save(task(`${prefix}erin-open`, `${prefix}erin-0`, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    const refused = new ServerCallContext()
    await t.rejects(withDeferredSaves(capped, refused, undefined, async () => {
      await capped.reserveWithSaves(`${prefix}erin-task`, refused)
      await server.update('demo', `${prefix}erin-1`, addTurn('e1'), { context: refused, foundNone: true, owner: 'erin' })
    }), { name: 'CallerCapError', message: /MAX_OPEN_TASKS_PER_CALLER/ })
    t.equal(await storedTurns(database, `${prefix}erin-1`), undefined, 'refused in the statement: the conversation not inserted')
    // Found absent, inserted meanwhile by another writer: the reservation stands, the locked path writes the turn.
    const taken = `${prefix}exists`
    await conversations.update('demo', taken, addTurn('t1'))
    const context = new ServerCallContext()
    const id = `${prefix}exists-task`
    await withDeferredSaves(tasks, context, undefined, async () => {
      await tasks.reserveWithSaves(id, context)
      await server.update('demo', taken, addTurn('t2'), { context, foundNone: true, owner: 'alice' })
      await tasks.save(task(id, taken, 'TASK_STATE_INPUT_REQUIRED'), context)
    })
    t.strictSame(await storedTurns(database, taken), ['t1', 't2'], 'the turn written on the stored state')
    t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the task saved')
  })

  t.test('a reservation refused in the statement: -32000, nothing written', async (t) => {
    // One caller (dave) for every task of this store, at most one open.
    const capped = new PostgresTaskStore(database.db, { soleWriter: true, maxOpenTasksPerCaller: 1, callerResolver: () => `${prefix}dave` })
    await capped.save(task(`${prefix}dave-open`, `${prefix}dave-0`, 'TASK_STATE_INPUT_REQUIRED'), new ServerCallContext())
    const context = new ServerCallContext()
    const id = `${prefix}dave-task`
    await t.rejects(withDeferredSaves(capped, context, undefined, async () => {
      await capped.reserveWithSaves(id, context)
      await conversations.update('demo', `${prefix}dave-1`, addTurn('t1'), { context, foundNone: true })
      await capped.save(task(id, `${prefix}dave-1`, 'TASK_STATE_INPUT_REQUIRED'), context)
    }), { name: 'CallerCapError', limit: 1 })
    t.equal(await storedTurns(database, `${prefix}dave-1`), undefined, 'no conversation')
    t.equal(await capped.load(id, new ServerCallContext()), undefined, 'no task')

    const refusedFirst = new ServerCallContext()
    const known = `${prefix}dave-known`
    await conversations.update('demo', known, addTurn('t1'))
    await withDeferredSaves(capped, refusedFirst, undefined, async () => {
      await capped.reserveWithSaves(`${prefix}dave-task-2`, refusedFirst)
      // Known to the store: not joined; the reservation is made first, alone, and refuses before anything is written.
      await t.rejects(conversations.update('demo', known, addTurn('t2'), { context: refusedFirst, foundNone: true }), { name: 'CallerCapError' })
    })
    t.strictSame(await storedTurns(database, known), ['t1'], 'the conversation not written')
  })

  t.test('a pending reservation made alone: before a write that does not join, at the end when nothing joined', async (t) => {
    const known = `${prefix}pending-known`
    await conversations.update('demo', known, addTurn('t1'))
    const context = new ServerCallContext()
    const id = `${prefix}pending-task`
    const steps: number[] = []
    await withDeferredSaves(tasks, context, undefined, async () => {
      t.equal((await counted(async () => { await tasks.reserveWithSaves(id, context) })).queries, 0, 'left to the saves')
      steps.push((await counted(async () => await conversations.update('demo', known, addTurn('t2'), { context, foundNone: true }))).queries)
      await tasks.save(task(id, known, 'TASK_STATE_INPUT_REQUIRED'), context)
    })
    t.ok(steps[0] >= 2, 'the reservation, then the locked write')
    t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
    const idle = new ServerCallContext()
    const unjoined = `${prefix}pending-unjoined`
    const turn = await counted(async () => await withDeferredSaves(tasks, idle, undefined, async () => {
      await tasks.reserveWithSaves(unjoined, idle)
      await tasks.save(task(unjoined, `${prefix}pending-none`, 'TASK_STATE_COMPLETED'), idle)
    }))
    t.equal(turn.queries, 2, 'nothing joined: the reservation alone, then the saves')
    const nothing = new ServerCallContext()
    await withDeferredSaves(tasks, nothing, undefined, async () => {
      await tasks.reserveWithSaves(`${prefix}pending-nothing`, nothing)
      await conversations.update('demo', `${prefix}pending-nothing`, addTurn('n1'), { context: nothing, foundNone: true })
    })
    t.strictSame(await storedTurns(database, `${prefix}pending-nothing`), ['n1'], 'joined, nothing saved: the reservation, then the insert alone')
    const plain = new ServerCallContext()
    t.equal((await counted(async () => { await tasks.reserveWithSaves(`${prefix}pending-plain`, plain) })).queries, 1, 'no deferral: reserved now')
  })

  t.test('with answers for the log: its prune, when due, in the same statement; every variant on one connection', async (t) => {
    const answered = (id: string) => (state: ConversationState | undefined): ConversationState => {
      const next = addTurn(`${id}-q`)(state)
      next.turns.push({ id, at: '2026-12-07T10:00:00.000Z', role: 'agent', text: 'we open at nine', envelope: { author: 'agent', answerCoverage: { availability: 'assessed', coverage: 'full' } } } as never)
      return next
    }
    // The prune is due at an agent's first answers here: on the insert for one agent, on the step for the other.
    for (const [n, first] of [[1, answered('a1')], [2, addTurn('a2')]] as const) {
      const agent = `${prefix}answers-${n}`
      const contextId = `${prefix}answers-${n}`
      const id = `${prefix}answers-task-${n}`
      const context = new ServerCallContext()
      await withDeferredSaves(tasks, context, undefined, async () => {
        await tasks.reserveWithSaves(id, context)
        await conversations.update(agent, contextId, first, { context, foundNone: true })
        await tasks.save(task(id, contextId, 'TASK_STATE_INPUT_REQUIRED'), context)
      })
      const read = await conversations.get(agent, contextId, { recent: true }) as ConversationState
      const step = new ServerCallContext()
      await withDeferredSaves(tasks, step, id, async () => {
        await conversations.update(agent, contextId, answered(`b${n}`), { read, context: step })
        await tasks.save(task(id, contextId, 'TASK_STATE_COMPLETED'), step)
      })
      const { rows } = await sql<{ count: number }>`select count(*)::int as count from ${sql.table(ANSWERS_TABLE)} where agent_id = ${agent}`.execute(database.db)
      t.equal(rows[0].count, 3 - n, `answers logged with the ${n === 1 ? 'insert (its prune due) and the step' : 'step (its prune due)'}`)
      t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED)
    }
    // Not joined (a server's store, the conversation found absent): the reservation in the insert's statement, its prune due.
    const server = new PostgresConversationStore(database, { joinsTaskSaves: true })
    t.teardown(async () => { await server.close() })
    const [agent, id] = [`${prefix}answers-3`, `${prefix}answers-task-3`]
    const context = new ServerCallContext()
    const turn = await counted(async () => await withDeferredSaves(tasks, context, undefined, async () => {
      await tasks.reserveWithSaves(id, context)
      await server.update(agent, agent, answered('a3'), { context, foundNone: true })
      await tasks.save(task(id, agent, 'TASK_STATE_INPUT_REQUIRED'), context)
    }))
    t.equal(turn.queries, 2, 'the reserving insert, then the saves')
    const { rows } = await sql<{ count: number }>`select count(*)::int as count from ${sql.table(ANSWERS_TABLE)} where agent_id = ${agent}`.execute(database.db)
    t.equal(rows[0].count, 1, 'the answer logged with the reserving insert (its prune due)')
  })

  t.test('nothing saved: the joined write alone, at the end of the request', async (t) => {
    const contextId = `${prefix}alone`
    const read = await kept(contextId)
    const context = new ServerCallContext()
    const turn = await counted(async () => await withDeferredSaves(tasks, context, `${prefix}alone-task`, async () => {
      await conversations.update('demo', contextId, addTurn('t2'), { read, context })
      t.ok(joinedWriteOf(context), 'joined')
    }))
    t.equal(turn.queries, 1)
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2'])
    const fresh = `${prefix}alone-new`
    const second = new ServerCallContext()
    await withDeferredSaves(tasks, second, `${prefix}alone-new-task`, async () => {
      await conversations.update('demo', fresh, addTurn('n1'), { context: second, foundNone: true })
      t.ok(joinedWriteOf(second), 'a new one joined too')
    })
    t.strictSame(await storedTurns(database, fresh), ['n1'], 'inserted alone')
  })

  t.test('not joined: a state read from the database, a request saving no task, none given, a store that does not join', async (t) => {
    const contextId = `${prefix}not`
    await kept(contextId)
    const fromDatabase = await conversations.get('demo', contextId) as ConversationState
    const context = new ServerCallContext()
    await withDeferredSaves(tasks, context, `${prefix}not-task`, async () => {
      const { queries } = await counted(async () => await conversations.update('demo', contextId, addTurn('t2'), { read: fromDatabase, context }))
      t.equal(queries, 1, 'read from the database (not kept): written at once')
      t.equal(joinedWriteOf(context), undefined)
    })
    const knowledge = new ServerCallContext()
    await withDeferredSaves(tasks, knowledge, undefined, async () => {
      const read = await conversations.get('demo', contextId, { recent: true }) as ConversationState
      const { queries } = await counted(async () => await conversations.update('demo', contextId, addTurn('t3'), { read, context: knowledge }))
      t.equal(queries, 1, 'no task adopted (a knowledge answer): written at once')
    })
    const read = await conversations.get('demo', contextId, { recent: true }) as ConversationState
    t.equal((await counted(async () => await conversations.update('demo', contextId, addTurn('t4'), { read }))).queries, 1, 'no request given: at once')
    const plain = new PostgresConversationStore(database)
    t.teardown(async () => { await plain.close() })
    const plainRead = await plain.get('demo', contextId, { recent: true }) as ConversationState
    const step = new ServerCallContext()
    await withDeferredSaves(tasks, step, `${prefix}not-task`, async () => {
      const { queries } = await counted(async () => await plain.update('demo', contextId, addTurn('t5'), { read: plainRead, context: step }))
      t.equal(queries, 1, 'a store that does not join: at once')
    })
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2', 't3', 't4', 't5'])
  })

  t.test('moved meanwhile (removed, or made behind the store): nothing written, the lock released', async (t) => {
    const { contextId, id, read, context } = await waiting('moved')
    let written: Promise<boolean> | undefined
    await t.rejects(withDeferredSaves(tasks, context, id, async () => {
      await conversations.update('demo', contextId, addTurn('t2'), { read, context })
      written = joinedWriteOf(context)?.written
      await tasks.save(task(id, contextId, 'TASK_STATE_COMPLETED'), context)
      await sql`delete from ${sql.table(CONVERSATIONS_TABLE)} where agent_id = 'demo' and context_id = ${contextId}`.execute(database.db)
    }), ConversationMovedError)
    t.equal(await written, false, 'told: not written')
    t.equal((await tasks.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the task\'s saves not written either')
    t.equal(await storedTurns(database, contextId), undefined)
    await conversations.update('demo', contextId, addTurn('again'))
    t.strictSame(await storedTurns(database, contextId), ['again'], 'the lock released')

    const taken = `${prefix}taken`
    const second = new ServerCallContext()
    await t.rejects(withDeferredSaves(tasks, second, `${prefix}taken-task`, async () => {
      await conversations.update('demo', taken, addTurn('mine'), { context: second, foundNone: true })
      await sql`insert into ${sql.table(CONVERSATIONS_TABLE)} (agent_id, context_id, state, version) values ('demo', ${taken}, ${JSON.stringify(addTurn('theirs')(undefined))}::jsonb, 1)`.execute(database.db)
    }), ConversationMovedError, 'a new conversation made meanwhile: nothing written (alone)')
    t.strictSame(await storedTurns(database, taken), ['theirs'])
    const third = new ServerCallContext()
    const thirdId = `${prefix}taken-task-2`
    const made = `${prefix}taken-2`
    await t.rejects(withDeferredSaves(tasks, third, thirdId, async () => {
      await conversations.update('demo', made, addTurn('mine'), { context: third, foundNone: true })
      await tasks.save(task(thirdId, made, 'TASK_STATE_WORKING'), third)
      await sql`insert into ${sql.table(CONVERSATIONS_TABLE)} (agent_id, context_id, state, version) values ('demo', ${made}, ${JSON.stringify(addTurn('theirs')(undefined))}::jsonb, 1)`.execute(database.db)
    }), ConversationMovedError, 'with saves')
    t.equal(await tasks.load(thirdId, new ServerCallContext()), undefined, 'the task not stored')
  })

  t.test('a push config to re-seal first: the joined statement, refused whole, runs again once it is re-sealed', async (t) => {
    const box = new SecretBox(randomBytes(32))
    const sealing = new PostgresTaskStore(database.db, { soleWriter: true, push: { agentId: 'demo', secrets: box } })
    const { contextId, id, read, context } = await waiting('resealed')
    // Written in clear (before a key was given): the saves' function refuses until it is sealed with the current key.
    await new PostgresPushConfigStore(database.db, { agentId: 'demo' }).save(id, new ServerCallContext(), { tenant: '', id: 'k1', taskId: '', url: 'https://h.example/k', token: 't', authentication: undefined })
    await withDeferredSaves(sealing, context, id, async () => {
      await conversations.update('demo', contextId, addTurn('t2'), { read, context })
      await sealing.save(task(id, contextId, 'TASK_STATE_COMPLETED'), context)
    })
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2'], 'the conversation written once')
    t.equal((await sealing.load(id, new ServerCallContext()))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'the task with it')
    const { rows } = await sql<{ config: string }>`select config from converse_push_configs where task_id = ${id}`.execute(database.db)
    t.strictSame(rows, [], 'the finished task\'s config dropped after its re-seal')
    const { rows: outbox } = await sql<{ target: string }>`select target from ${sql.table(PUSH_OUTBOX_TABLE)} where task_id = ${id}`.execute(database.db)
    t.ok(outbox.length > 0 && outbox.every((row) => row.target.startsWith(currentPrefix(box))), 'its notifications sealed with the current key')
    await conversations.update('demo', contextId, addTurn('t3'))
    t.strictSame(await storedTurns(database, contextId), ['t1', 't2', 't3'], 'the lock released')
  })

  t.test('the caller\'s bound refuses the whole statement', async (t) => {
    for (const n of [1, 2, 3]) await conversations.update('demo', `${prefix}cap-${n}`, addTurn('t1'), { owner: 'bob' })
    const context = new ServerCallContext()
    const id = `${prefix}cap-task`
    await t.rejects(withDeferredSaves(tasks, context, undefined, async () => {
      await tasks.reserve(id, context)
      await conversations.update('demo', `${prefix}cap-4`, addTurn('t1'), { context, foundNone: true, owner: 'bob' })
      await tasks.save(task(id, `${prefix}cap-4`, 'TASK_STATE_INPUT_REQUIRED'), context)
    }), CallerCapError)
    t.equal(await storedTurns(database, `${prefix}cap-4`), undefined, 'no conversation')
    t.equal(await tasks.load(id, new ServerCallContext()), undefined, 'no task')
  })

  t.test('given up when the saves\' write fails first; never waiting for itself', async (t) => {
    const contextId = `${prefix}given-up`
    const read = await kept(contextId)
    const context = new ServerCallContext()
    const failing = { writeDeferredSaves: async () => { throw new Error('the saves failed') } }
    let written: Promise<boolean> | undefined
    await t.rejects(withDeferredSaves(failing, context, `${prefix}given-up-task`, async () => {
      await conversations.update('demo', contextId, addTurn('t2'), { read, context })
      written = joinedWriteOf(context)?.written
      await t.rejects(conversations.update('demo', contextId, addTurn('t3'), { context }), /updated again by the request whose write waits/,
        'the same request again: refused at once, not a wait for itself')
    }), /the saves failed/)
    t.equal(await written, false)
    await conversations.update('demo', contextId, addTurn('t4'))
    t.strictSame(await storedTurns(database, contextId), ['t1', 't4'], 'nothing of it written, the lock released')
  })

  t.test('the inbox feed publishes a joined write once it is stored, and not one that is not', async (t) => {
    const published: unknown[] = []
    const feed = new ConversationFeedStore(conversations, {
      async publishConversation (_agentId: string, event: Record<string, unknown>) { published.push(event) }
    }, { warn () {} })
    t.equal(feed.joinsTaskSaves, true, 'the feed says what the store it wraps does')
    const contextId = `${prefix}feed`
    const read = await kept(contextId)
    const context = new ServerCallContext()
    await withDeferredSaves(tasks, context, `${prefix}feed-task`, async () => {
      await feed.update('demo', contextId, addTurn('t2'), { read, context })
      t.equal(published.length, 0, 'not before it is stored')
      await feed.update('demo', `${prefix}feed-other`, addTurn('o1'), { context })
      t.equal(published.length, 0, 'another update of the request, written at once: once the saves are written')
    })
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(published.length, 2, 'published once stored')
    const moved = new ServerCallContext()
    const again = await conversations.get('demo', contextId, { recent: true }) as ConversationState
    await t.rejects(withDeferredSaves(tasks, moved, `${prefix}feed-task`, async () => {
      await feed.update('demo', contextId, addTurn('t3'), { read: again, context: moved })
      await sql`delete from ${sql.table(CONVERSATIONS_TABLE)} where agent_id = 'demo' and context_id = ${contextId}`.execute(database.db)
    }), ConversationMovedError)
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(published.length, 2, 'not written: not published')
  })
}

onBothDatabases('converse_joined', joinedWrites)
