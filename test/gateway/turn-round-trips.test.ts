/**
 * The database round trips of each turn kind (issue 43), counted on the embedded database and, with
 * TEST_DATABASE_URL, on a PostgreSQL server: every query `pg`'s Client sends is one round trip (pg sends a query's
 * Parse, Bind, Execute and Sync at once; the embedded database is spoken to by pg too). Only the queries of the turn
 * are counted — those sent in the request's asynchronous context (AsyncLocalStorage), not the push outbox's polls.
 * Each kind fails past its budget (docs/state.md, "Round trips per turn"); the counts are reported with the
 * statements, so a change that adds one shows which.
 */
import t, { type Test } from 'tap'
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { Client, gateway } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

// The embedded gateway's first start (a child process's initdb: seconds, tens of them on a loaded 2-core machine).
t.setTimeout(300_000)

/**
 * Round trips at most, per turn kind and store, counted until the turn's work has settled (the reply and what runs
 * after it). The counts of 2026-12-06 once a task save and a reservation are one statement each (issue 43; before:
 * routine start 26 / 29, step 15 / 22, typed call 28 / 32), and once the embedded store, its database's one writer,
 * plans a turn on the state it last wrote and admits on the count it last wrote (knowledge answers 2 → 1; a caller's
 * first conversation since the start still reads its count), then once a new conversation's insert refuses one past
 * MAX_CONVERSATIONS_PER_CALLER in its statement (no count read: a new conversation's turn one trip less on both
 * stores), and once a server's store keeps the states it wrote too (an existing conversation's knowledge answer
 * 3 → 2), then once the embedded task store, its table's one writer too, answers the SDK's reads of a task from the
 * tasks it saved or read (soleWriter, remembered-tasks.ts; a new task's reservation tells it has no row): routine start
 * 8 → 5, step 10 → 5, typed call 9 → 5, what is left being the saves and the conversation's statements. A server's
 * turn adds its live events' and saves' `pg_notify` and the turn lock's lease row, and reads the task before each save
 * (other instances write it) — but a step, which holds its task's turn lock on every instance, reads it once and is
 * answered from what it saved afterwards (held-task-turn.ts): routine step 17 → 13. Then (2026-12-07) a save of the
 * task as kept — the SDK's save of a step's opening task event, merged onto the task it stored — writes nothing
 * (sameColumns, task-rows.ts): routine step 5 → 4 embedded, 13 → 11 on a server (the save and its NOTIFY). Then
 * (2026-12-07) a blocking turn's saves of its task are written once, before its reply, in one statement
 * (deferred-task-saves.ts, converse_save_task_steps), and its reads of the task answered from them: embedded routine
 * start 5 → 4, step 4 → 2, typed call 5 → 3; on a server 11 → 6, 11 → 7, 13 → 5. Then (2026-12-07) the embedded
 * conversation store, its database's one writer, leaves a turn's conversation write to that statement when it cannot
 * find its row moved (a kept state unchanged since, or a conversation found absent moments ago: joinsTaskSaves):
 * routine start 4 → 3, step 2 → 1, typed call 3 → 2; and a new task's reservation with them (reserveWithSaves):
 * routine start 3 → 2, typed call 2 → 1. Then (2026-12-07) a server's store joins the insert of a conversation whose
 * id was made for the request (no contextId sent: no other instance can know it) and its task's reservation to the
 * saves as well: typed call 5 → 3 (one statement, the two `pg_notify`); and a new task's reservation goes in the
 * statement of an insert that does not join (a contextId the client named): routine start 6 → 5; and a step's saves
 * delete the turn lock's lease row in their statement: routine step 7 → 6. Then (2026-12-07) the lease's take reads
 * the task in its statement (converse_take_task_turn), which the SDK's first load is answered from: routine step 6 → 5;
 * and the NOTIFYs one database answer sets off go in one statement (notify-queue.ts): typed call 3 → 2; and the inbox's
 * live event of a conversation written apart waits for the request's saves (afterDeferredSaves), its NOTIFY going
 * with theirs: routine start 5 → 4, step 5 → 4.
 */
export const BUDGETS = {
  embedded: {
    'knowledge answer, a caller\'s first conversation since the start': 1,
    'knowledge answer, new conversation': 1,
    'knowledge answer, existing conversation': 1,
    'routine start (a new task)': 2,
    'routine step (its task)': 1,
    'typed routine call, new conversation': 1
  },
  postgres: {
    'knowledge answer, a caller\'s first conversation since the start': 2,
    'knowledge answer, new conversation': 2,
    'knowledge answer, existing conversation': 2,
    'routine start (a new task)': 4,
    'routine step (its task)': 4,
    'typed routine call, new conversation': 2
  }
} as const

type Kind = keyof typeof BUDGETS.embedded

const turn = new AsyncLocalStorage<string[]>()
const query = pg.Client.prototype.query
t.teardown(() => { pg.Client.prototype.query = query })
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as string | { text?: string } | undefined
  turn.getStore()?.push((typeof config === 'string' ? config : config?.text ?? '?').replace(/\s+/g, ' ').slice(0, 80))
  return (query as (...args: unknown[]) => unknown).apply(this, args)
} as typeof query

/** Runs the turn, then waits for what it left running to settle; the statements it sent. */
async function counted<T> (run: () => Promise<T>): Promise<{ result: T, statements: string[] }> {
  const statements: string[] = []
  const result = await turn.run(statements, run)
  await new Promise((resolve) => setTimeout(resolve, 200))
  return { result, statements }
}

async function turnKinds (t: Test, store: keyof typeof BUDGETS, env: Record<string, string>): Promise<void> {
  const app = await gateway(t, { env })
  const client = new Client(t, app)
  const counts: Partial<Record<Kind, string[]>> = {}
  counts['knowledge answer, a caller\'s first conversation since the start'] = (await counted(async () => await client.send('When are you open on Saturday?'))).statements
  const knowledge = await counted(async () => await client.send('How long do I have to return an order?'))
  counts['knowledge answer, new conversation'] = knowledge.statements
  const contextId = knowledge.result.message.contextId as string
  t.ok(contextId, 'a knowledge answer')
  counts['knowledge answer, existing conversation'] = (await counted(async () => await client.send('Do you ship abroad?', { contextId }))).statements
  const start = await counted(async () => await client.task('I would like to book a table', { contextId: randomUUID() }))
  counts['routine start (a new task)'] = start.statements
  const step = await counted(async () => await client.task('date=2026-12-24, partySize=4', { contextId: start.result.contextId, taskId: start.result.id }))
  t.equal(step.result.status.state, 'TASK_STATE_COMPLETED', 'the routine ran to its end')
  counts['routine step (its task)'] = step.statements
  const call = await counted(async () => await client.send('book it', { call: { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 2 } } }))
  t.ok(call.result.task, 'the call started the routine')
  counts['typed routine call, new conversation'] = call.statements
  for (const [kind, budget] of Object.entries(BUDGETS[store]) as Array<[Kind, number]>) {
    const statements = counts[kind] as string[]
    t.ok(statements.length <= budget, `${kind}: ${statements.length} round trips, budget ${budget}`, { statements })
  }
}

t.test('embedded', async (t) => {
  await turnKinds(t, 'embedded', { STATE: 'embedded', DATA_DIR: t.testdir() })
})

t.test('PostgreSQL server', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  await turnKinds(t, 'postgres', { DATABASE_URL: url as string, DATABASE_SCHEMA: testSchema(t, url as string) })
})
