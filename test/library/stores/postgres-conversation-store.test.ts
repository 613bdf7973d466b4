import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import type { PostgresDatabase, PostgresDatabaseOptions } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL conversation store', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresConversationStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js')
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')
  const { InvalidOptionError } = await import('../../../packages/a2a-converse/src/core/errors.js')
  const { newConversationState } = await import('../../../packages/a2a-converse/src/stores/conversation-store.js')
  const { conversationStoreContract } = await import('./conversation-store-contract.js')

  // pg 8 warns (once per process) when a query is issued while another runs on a connection that is not pipelined.
  const queued: string[] = []
  const onWarning = (warning: Error): void => { if (warning.message.includes('already executing a query')) queued.push(warning.stack ?? warning.message) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const warnings: string[] = []
  const logger = { warn: (_obj: Record<string, unknown>, msg: string) => { warnings.push(msg) } }
  const opened: PostgresDatabase[] = []
  let instances = 0
  /** A pool of its own (an "instance"), with an application_name of its own to find its connections by. */
  const open = (options: Partial<PostgresDatabaseOptions> = {}): PostgresDatabase => {
    const database = createPostgresDatabase({
      connectionString: url, schema, logger, applicationName: `${schema}_${++instances}`, ...options
    })
    opened.push(database)
    return database
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const main = open()
  await migrate(main.db, { schema })
  t.teardown(async () => {
    for (const database of opened) await database.close()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  const addTurn = (id: string) => (state: ConversationState | undefined): ConversationState => {
    const next = state ?? newConversationState('x', 'x')
    next.turns.push({ id, at: '2026-01-01T00:00:00.000Z', role: 'user', text: id })
    return next
  }
  const applicationOf = (database: PostgresDatabase): string => database.clientConfig.application_name as string
  /** Polls until `check` holds (at most 5 s). */
  const waitFor = async (check: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 500; i++) {
      if (await check()) return
      await sleep(10)
    }
    throw new Error('waitFor: timed out')
  }
  const lockWaiters = async (database: PostgresDatabase): Promise<number> => (await admin.query(
    'select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = \'Lock\'', [applicationOf(database)]
  )).rows[0].n
  /** Terminates the backend holding an open transaction of `database` (there is one in these tests). */
  const killTransaction = async (database: PostgresDatabase): Promise<void> => {
    const { rows } = await admin.query(
      'select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = $1 and state like \'idle in transaction%\'',
      [applicationOf(database)])
    if (rows.length !== 1) throw new Error(`expected one transaction, found ${rows.length}`)
  }
  function deferred (): { promise: Promise<void>, resolve: () => void } {
    let release!: () => void
    const promise = new Promise<void>((resolve) => { release = resolve })
    return { promise, resolve: release }
  }

  t.test('the ConversationStore contract', async (t) => {
    conversationStoreContract(t, { create: (options) => new PostgresConversationStore(main, options) })
  })

  t.test('the ConversationStore contract, keeping recent states', async (t) => {
    conversationStoreContract(t, { create: (options) => new PostgresConversationStore(main, { recentStates: 100, ...options }) })
  })

  t.test('the ConversationStore contract, on pipelined connections', async (t) => {
    const pipelined = open({ pipeline: true })
    t.equal(pipelined.clientConfig.pipeline, true)
    conversationStoreContract(t, { create: (options) => new PostgresConversationStore(pipelined, options) })
  })

  t.test('options are checked', async (t) => {
    t.throws(() => new PostgresConversationStore(main, { maxTurns: 0 }), InvalidOptionError)
    t.throws(() => new PostgresConversationStore(main, { maxInbox: 1.5 }), { message: 'option "maxInbox" must be a positive integer' })
    t.throws(() => new PostgresConversationStore(main, { maxTextLength: -1 }), { message: /maxTextLength/ })
    t.same(new PostgresConversationStore(main).limits, { maxTurns: 50, maxInbox: 50, maxTextLength: 8000 })
  })

  t.test('what SQL adds: list limits, U+0000, the row', async (t) => {
    const store = new PostgresConversationStore(main)
    for (const id of ['a', 'b', 'c']) await store.update('sql', id, addTurn(id))
    t.same((await store.list('sql', { limit: Number.POSITIVE_INFINITY })).map((entry) => entry.contextId), ['c', 'b', 'a'])
    t.equal((await store.list('sql', { limit: 1.5 })).length, 2, 'a fractional limit is rounded up (as the memory store does)')
    t.same(await store.list('sql', { limit: -3 }), [])

    const nul = await store.update('sql', 'nul', (state) => {
      const next = addTurn('t')(state)
      next.turns[0].text = 'a\u0000b'
      return next
    })
    t.equal(nul.turns[0].text, 'a\uFFFDb', 'jsonb cannot hold U+0000: it becomes U+FFFD')
    t.same(await store.get('sql', 'nul'), nul)
    const backslash = await store.update('sql', 'nul', (state) => {
      (state as ConversationState).turns[0].text = 'a\\u0000b' // the six characters, not the code point
      return state as ConversationState
    })
    t.equal(backslash.turns[0].text, 'a\\u0000b', 'an escaped-looking text is kept as is')

    const { rows } = await main.pool.query('select version, state, created_at, updated_at from converse_conversations where agent_id = $1 and context_id = $2', ['sql', 'nul'])
    t.equal(rows[0].version, 2, 'the version column follows the state')
    t.equal(rows[0].state.version, 2)
    t.equal(rows[0].updated_at.toISOString(), backslash.updatedAt)
    t.equal(rows[0].created_at.toISOString(), backslash.createdAt)

    const longKey = randomBytes(6000).toString('hex')
    const error = await store.update('sql', longKey, addTurn('x')).catch((error: unknown) => error)
    t.match(error, { code: '54000' }, 'a database refusal that is not an outage is passed on as is')
    t.notOk(error instanceof StoreUnavailableError)
    t.equal(await store.exists('sql', 'a'), true, 'the store works on')
  })

  /** A pool that records the statements sent on its connections, named by kind. */
  const counting = (database: PostgresDatabase): { pool: pg.Pool, statements: string[] } => {
    const statements: string[] = []
    const kind = (text: string): string => {
      const flat = text.replace(/\s+/g, ' ').trim()
      if (flat.startsWith('with setting as')) return 'insert-new'
      if (flat.startsWith('with conversation as ( update')) return 'write'
      if (flat.endsWith('for update')) return 'lock'
      return flat.split(' ')[0].toLowerCase()
    }
    const pool = {
      async connect () {
        const client = await database.pool.connect()
        return {
          async query (text: string | { name: string, text: string }, values?: unknown[]) {
            statements.push(kind(typeof text === 'string' ? text : text.text))
            return await client.query(text, values)
          },
          release: (destroy?: boolean) => { client.release(destroy) }
        }
      }
    }
    return { pool: pool as unknown as pg.Pool, statements }
  }

  t.test('a conversation not seen before: one autocommit INSERT (the optimistic path)', async (t) => {
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool })
    let calls = 0
    const created = await store.update('opt', 'new', (state) => {
      calls++
      t.equal(state, undefined)
      return { ...addTurn('a')(state), routine: { routine: 'r', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x', taskId: 'T-opt' } }
    })
    t.same(statements, ['insert-new'], 'one statement, no BEGIN / COMMIT')
    t.equal(calls, 1)
    t.equal(created.version, 1)
    t.equal(created.createdAt, created.updatedAt)
    t.same(await store.get('opt', 'new'), created, 'the row as returned')
    t.equal(await store.findContextByTaskId('opt', 'T-opt'), 'new', 'the task index rows came with it')
    const { rows } = await main.pool.query('select version, created_at, updated_at from converse_conversations where agent_id = $1 and context_id = $2', ['opt', 'new'])
    t.same([rows[0].version, rows[0].created_at.toISOString(), rows[0].updated_at.toISOString()], [1, created.createdAt, created.updatedAt])

    statements.length = 0
    t.equal((await store.update('opt', 'new', addTurn('b'))).version, 2)
    t.same(statements, ['begin', 'lock', 'write', 'commit'], 'a conversation the store wrote goes straight to the locked path')

    // Keys read through another store instance are remembered too.
    for (const [read, key] of [
      [async (other: InstanceType<typeof PostgresConversationStore>) => await other.get('opt', 'new'), 'get'],
      [async (other: InstanceType<typeof PostgresConversationStore>) => await other.exists('opt', 'new'), 'exists'],
      [async (other: InstanceType<typeof PostgresConversationStore>) => await other.findContextByTaskId('opt', 'T-opt'), 'findContextByTaskId']
    ] as const) {
      const counted = counting(main)
      const other = new PostgresConversationStore({ pool: counted.pool })
      await read(other)
      counted.statements.length = 0
      let seen = 0
      await other.update('opt', 'new', (state) => { seen++; return addTurn(key)(state) })
      t.same(counted.statements, ['begin', 'lock', 'write', 'commit'], `a key found by ${key} goes straight to the locked path`)
      t.equal(seen, 1)
    }
    const misses = counting(main)
    const reader = new PostgresConversationStore({ pool: misses.pool })
    t.equal(await reader.get('opt', 'missing'), undefined)
    t.equal(await reader.exists('opt', 'missing'), false)
    t.equal(await reader.findContextByTaskId('opt', 'T-missing'), undefined)
    misses.statements.length = 0
    t.equal((await reader.update('opt', 'missing', addTurn('x'))).version, 1)
    t.same(misses.statements, ['insert-new'], 'a key not found is still tried as new')

    t.equal(await store.delete('opt', 'new'), true)
    statements.length = 0
    t.equal((await store.update('opt', 'new', addTurn('again'))).version, 1)
    t.same(statements, ['insert-new'], 'a deleted key is forgotten: its next update is tried as new')
  })

  t.test('the remembered keys are bounded: the least recently used one is forgotten', async (t) => {
    t.throws(() => new PostgresConversationStore(main, { rememberedConversations: 0 }), { message: /rememberedConversations/ })
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool }, { rememberedConversations: 2 })
    for (const id of ['a', 'b']) await store.update('lru', id, addTurn(id))
    await store.get('lru', 'a') // a is now the most recently used
    await store.update('lru', 'c', addTurn('c')) // b is forgotten
    statements.length = 0
    await store.update('lru', 'a', addTurn('a2'))
    t.same(statements, ['begin', 'lock', 'write', 'commit'], 'a is remembered')
    statements.length = 0
    const calls: Array<string[] | undefined> = []
    const b = await store.update('lru', 'b', (state) => { calls.push(state?.turns.map((entry) => entry.id)); return addTurn('b2')(state) })
    t.same(statements, ['insert-new', 'begin', 'lock', 'write', 'commit'], 'b was forgotten: tried as new, it conflicts, then the locked path')
    t.same(calls, [undefined, ['b']], 'fn ran twice: on nothing, then on the real state')
    t.same([b.version, b.turns.map((entry) => entry.id)], [2, ['b', 'b2']], 'the last call\'s state is written')
  })

  t.test('kept states: a turn reads the state the store last wrote and writes on it in one statement; a stale one falls back', async (t) => {
    t.throws(() => new PostgresConversationStore(main, { recentStates: -1 }), { message: /recentStates/ })
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool }, { recentStates: 2 })
    const written = await store.update('recent', 'a', addTurn('a1'))
    statements.length = 0
    const read = await store.get('recent', 'a', { recent: true }) as ConversationState
    t.same(read, written, 'the state as written')
    t.not(read, await store.get('recent', 'a', { recent: true }), 'each read is a copy')
    t.same(statements, [], 'no round trip')
    await store.update('recent', 'a', addTurn('a2'), { read })
    t.same(statements, ['write'], 'one conditional write')
    statements.length = 0
    t.same((await store.get('recent', 'a') as ConversationState).turns.map((entry) => entry.id), ['a1', 'a2'], 'without recent: the row')
    t.same(statements, ['select'])
    // Another writer (here: a second store on the database) moves the version: the kept state is behind.
    const other = new PostgresConversationStore(main)
    const behind = await store.get('recent', 'a', { recent: true }) as ConversationState
    await other.update('recent', 'a', addTurn('elsewhere'))
    statements.length = 0
    const next = await store.update('recent', 'a', addTurn('a3'), { read: behind })
    t.same(statements, ['write', 'begin', 'lock', 'write', 'commit'], 'the version moved: the locked path')
    t.same(next.turns.map((entry) => entry.id), ['a1', 'a2', 'elsewhere', 'a3'], 'nothing lost')
    // Deleted and made again elsewhere at the same version: the creation time tells them apart.
    const kept = await store.get('recent', 'a', { recent: true }) as ConversationState
    await other.delete('recent', 'a')
    for (const id of ['b1', 'b2', 'b3', 'b4']) await other.update('recent', 'a', addTurn(id))
    t.equal((await other.get('recent', 'a') as ConversationState).version, kept.version, 'the same version, another conversation')
    const again = await store.update('recent', 'a', addTurn('a4'), { read: { ...kept, createdAt: '2020-01-01T00:00:00.000Z' } })
    t.same(again.turns.map((entry) => entry.id), ['b1', 'b2', 'b3', 'b4', 'a4'], 'not written over the new one')
    // A failed update keeps no state; a delete forgets it; the bound drops the least recently used.
    await t.rejects(store.update('recent', 'a', () => { throw new Error('no') }))
    statements.length = 0
    await store.get('recent', 'a', { recent: true })
    t.same(statements, ['select'], 'none kept after a failed update')
    for (const id of ['b', 'c']) await store.update('recent', id, addTurn(id))
    statements.length = 0
    await store.get('recent', 'b', { recent: true })
    await store.get('recent', 'a', { recent: true })
    t.same(statements, ['select'], 'b kept, a dropped past the bound')
    await store.delete('recent', 'b')
    statements.length = 0
    t.equal(await store.get('recent', 'b', { recent: true }), undefined)
    t.same(statements, ['select'], 'a deleted one is not kept')
  })

  t.test('kept states: their JSON is bounded as a whole; with recentStates 0 none is kept; soleWriter changes nothing', async (t) => {
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool }, { maxTextLength: 9_000_000 })
    const long = (id: string) => (state: ConversationState | undefined): ConversationState => {
      const next = addTurn(id)(state)
      ;(next.turns.at(-1) as { text: string }).text = id.repeat(9_000_000)
      return next
    }
    await store.update('recent-chars', 'a', long('a'))
    await store.update('recent-chars', 'b', long('b'))
    statements.length = 0
    await store.get('recent-chars', 'b', { recent: true })
    await store.get('recent-chars', 'a', { recent: true })
    t.same(statements, ['select'], 'past 16 Mi characters the least recently used goes')
    for (const [options, kept] of [[{ soleWriter: true, recentStates: 0 }, []], [{ recentStates: 0 }, []], [{ soleWriter: true }, ['kept']]] as const) {
      const plain = counting(main)
      const none = new PostgresConversationStore({ pool: plain.pool }, options)
      await none.update('recent-chars', 'c', addTurn('c'))
      plain.statements.length = 0
      await none.get('recent-chars', 'c', { recent: true })
      t.same(plain.statements.length === 0 ? ['kept'] : [], kept, JSON.stringify(options))
    }
  })

  t.test('MAX_CONVERSATIONS_PER_CALLER: the insert refuses a new conversation at the cap in its statement (no count read first); the locked path too', async (t) => {
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool }, { maxConversationsPerCaller: 2 })
    t.equal('admit' in store, false, 'nothing to ask before a turn')
    const alice = 'caller:alice'
    const refusal = { name: 'CallerCapError', cap: 'MAX_CONVERSATIONS_PER_CALLER', limit: 2 }
    await store.update('held', 'a-1', addTurn('t1'), { owner: alice })
    await store.update('held', 'a-2', addTurn('t1'), { owner: alice })
    t.same(statements, ['insert-new', 'insert-new'], 'one statement each')
    statements.length = 0
    await t.rejects(store.update('held', 'a-3', addTurn('t1'), { owner: alice }), refusal)
    t.same(statements, ['insert-new'], 'refused by the insert itself')
    t.equal(await store.exists('held', 'a-3'), false, 'nothing written')
    // A conversation alice already has, not known here (another instance's): not refused, continued on the locked path.
    const other = new PostgresConversationStore(main, { maxConversationsPerCaller: 2 })
    t.equal((await other.update('held', 'a-1', addTurn('t2'), { owner: alice })).turns.length, 2)
    await other.update('held', 'w', addTurn('t1'))
    t.equal((await other.get('held', 'w'))?.turns.length, 1, 'without an owner: no bound')
    // Created on the locked path (the key remembered, the row gone): refused there too, rolled back.
    await store.update('held', 'x', addTurn('t1'))
    await admin.query(`delete from ${schema}.converse_conversations where agent_id = 'held' and context_id = 'x'`)
    await t.rejects(store.update('held', 'x', addTurn('t2'), { owner: alice }), refusal)
    t.equal(await store.exists('held', 'x'), false, 'the placeholder went with the transaction')
    t.ok(await store.delete('held', 'a-2'))
    await store.update('held', 'x', addTurn('t2'), { owner: alice })
    t.ok(await store.exists('held', 'x'), 'room again after a delete: created on the locked path')
    await t.rejects(store.update('held', 'a-2', addTurn('t1'), { owner: alice }), refusal, 'at the cap again')
  })

  t.test('MAX_CONVERSATIONS_PER_CALLER: two new conversations of one owner at once on the locked path both pass the count; the later one\'s transaction evicts the owner\'s oldest idle one', async (t) => {
    const store = new PostgresConversationStore(main, { maxConversationsPerCaller: 2 })
    const alice = 'caller:alice'
    await store.update('racing', 'old', addTurn('t1'), { owner: alice })
    // Known to this store, gone from the table: their next updates take the locked path.
    for (const key of ['n-1', 'n-2']) await store.update('racing', key, addTurn('t0'))
    await admin.query(`delete from ${schema}.converse_conversations where agent_id = 'racing' and context_id in ('n-1', 'n-2')`)
    const arrived = [deferred(), deferred()]
    const go = deferred()
    const created = ['n-1', 'n-2'].map(async (key, index) => await store.update('racing', key, async (state) => {
      arrived[index].resolve()
      await go.promise
      return addTurn('t1')(state)
    }, { owner: alice }))
    await Promise.all(arrived.map((entry) => entry.promise))
    // The owner's counter row held, so that neither write commits before both read the count: otherwise the later
    // one may read the earlier's commit and be refused at the cap (a schedule, not this case).
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    t.teardown(async () => await holder.end())
    await holder.query('begin')
    await holder.query(`select held from ${schema}.converse_conversation_owners where agent_id = 'racing' and owner = $1 for update`, [alice])
    go.resolve()
    // Both writes wait on it: both counts were read.
    await waitFor(async () => await lockWaiters(main) === 2)
    await holder.query('commit')
    await Promise.all(created)
    t.same(await Promise.all(['old', 'n-1', 'n-2'].map(async (key) => await store.exists('racing', key))), [false, true, true],
      'alice keeps 2: her oldest idle one went')
  })

  t.test('a conversation another instance created: the insert conflicts, fn runs again on the real state', async (t) => {
    const a = new PostgresConversationStore(open())
    const { pool, statements } = counting(open())
    const b = new PostgresConversationStore({ pool })
    await a.update('elsewhere', 'c', addTurn('from-a'))
    const calls: Array<string[] | undefined> = []
    let plan: string | undefined
    const result = await b.update('elsewhere', 'c', (state) => {
      calls.push(state?.turns.map((entry) => entry.id))
      plan = state === undefined ? 'new' : 'existing'
      return addTurn(`from-b-${calls.length}`)(state)
    })
    t.same(statements, ['insert-new', 'begin', 'lock', 'write', 'commit'])
    t.same(calls, [undefined, ['from-a']], 'fn called twice, the second time on A\'s state')
    t.equal(plan, 'existing', 'a closure keeps what the last call decided')
    t.same([result.version, result.turns.map((entry) => entry.id)], [2, ['from-a', 'from-b-2']], 'no lost update; the last result written')
    t.same(await a.get('elsewhere', 'c'), result)
    statements.length = 0
    await b.update('elsewhere', 'c', addTurn('again'))
    t.same(statements, ['begin', 'lock', 'write', 'commit'], 'after the conflict the key is remembered')
  })

  t.test('fn throwing or returning nothing usable in the optimistic attempt: nothing written, the error propagates', async (t) => {
    const { pool, statements } = counting(main)
    const store = new PostgresConversationStore({ pool })
    const seen: Array<ConversationState | undefined> = []
    await t.rejects(store.update('throws', 'c', (state) => { seen.push(state); throw new Error('no') }), { message: 'no' })
    t.same(seen, [undefined, undefined], 'tried as new, then on the locked path (the conversation does not exist either way)')
    t.same(statements, ['begin', 'lock', 'insert', 'rollback'], 'the optimistic attempt sent nothing')
    t.equal(await store.exists('throws', 'c'), false, 'nothing written')
    await t.rejects(store.update('throws', 'c', () => null as unknown as ConversationState), TypeError)
    t.equal(await store.exists('throws', 'c'), false)
    t.equal((await store.update('throws', 'c', addTurn('ok'))).version, 1, 'the key is not poisoned')
  })

  t.test('the optimistic insert is not retried when its connection fails: the store is unavailable', async (t) => {
    const db = open()
    let kill = false
    let refuse = false
    const flaky = {
      async connect (): Promise<pg.PoolClient> {
        if (refuse) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
        const client = await db.pool.connect()
        if (kill) {
          kill = false
          const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number
          await admin.query('select pg_terminate_backend($1)', [pid])
          await waitFor(async () => (await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rows.length === 0)
        }
        return client
      }
    }
    const store = new PostgresConversationStore({ pool: flaky as unknown as pg.Pool })
    let calls = 0
    kill = true
    await t.rejects(store.update('unsure', 'c', (state) => { calls++; return addTurn('a')(state) }), StoreUnavailableError,
      'whether it committed is unknown: no second attempt that could apply fn twice')
    t.equal(calls, 1)
    refuse = true
    await t.rejects(store.update('unsure', 'd', addTurn('a')), { code: 'A2A_CONVERSE_STORE_UNAVAILABLE' }, 'no connection at all')
    refuse = false
    t.equal(await store.exists('unsure', 'd'), false)
    t.equal((await store.update('unsure', 'd', addTurn('a'))).version, 1, 'and the store works on')
  })

  t.test('two instances: 50 parallel updates of one new conversation all land (one optimistic insert wins, the rest lock)', async (t) => {
    const a = new PostgresConversationStore(open({ poolMax: 5 }), { maxTurns: 100 })
    const b = new PostgresConversationStore(open({ poolMax: 5, pipeline: true }), { maxTurns: 100 })
    const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => await (i % 2 === 0 ? a : b).update('two', 'counter', async (state) => {
      const next = state ?? newConversationState('two', 'counter')
      await sleep(Math.floor(Math.random() * 3)) // read, yield, write: without the row lock, updates would be lost
      next.turns.push({ id: `t${i}`, at: 'x', role: 'user', text: `${next.turns.length + 1}` })
      return next
    })))
    const final = await a.get('two', 'counter') as ConversationState
    t.equal(final.version, 50, 'final counter = 50')
    t.equal(final.turns.length, 50)
    t.same(final.turns.map((entry) => entry.text), Array.from({ length: 50 }, (_, i) => `${i + 1}`), 'each update saw the previous one')
    t.same(results.map((state) => state.version).sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i + 1))
    t.same(await b.get('two', 'counter'), final, 'both instances read the same state')
  })

  t.test('two instances serialise on a conversation and see each other\'s writes', async (t) => {
    const dbB = open()
    const a = new PostgresConversationStore(open())
    const b = new PostgresConversationStore(dbB)
    await a.update('x', 'c', addTurn('first'))
    const gate = deferred()
    const holding = deferred()
    const held = a.update('x', 'c', async (state) => { holding.resolve(); await gate.promise; return addTurn('from-a')(state) })
    await holding.promise
    let bSaw: string[] | undefined
    const waiting = b.update('x', 'c', (state) => {
      bSaw = state?.turns.map((entry) => entry.id)
      return addTurn('from-b')(state)
    })
    await waitFor(async () => await lockWaiters(dbB) === 1)
    t.equal(bSaw, undefined, 'B waits for the row A holds')
    t.equal((await b.get('x', 'c'))?.version, 1, 'reads do not wait: they see the last commit')
    gate.resolve()
    await held
    t.equal((await waiting).version, 3)
    t.same(bSaw, ['first', 'from-a'], 'B ran on A\'s committed state')

    await a.update('x', 'task-owner', (state) => ({ ...addTurn('t')(state), routine: { routine: 'r', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x', taskId: 'T-1' } }))
    t.equal(await b.findContextByTaskId('x', 'T-1'), 'task-owner', 'the task index is shared')
    t.same((await b.list('x')).map((entry) => entry.contextId), ['task-owner', 'c'])

    const gate2 = deferred()
    const holding2 = deferred()
    const held2 = a.update('x', 'c', async (state) => { holding2.resolve(); await gate2.promise; return addTurn('late')(state) })
    await holding2.promise
    const deleting = b.delete('x', 'c')
    await waitFor(async () => await lockWaiters(dbB) === 1)
    gate2.resolve()
    await held2
    t.equal(await deleting, true, 'a delete waits for the update another instance holds, then removes its result')
    t.equal(await a.exists('x', 'c'), false)
  })

  t.test('a new conversation created by two instances at once: one creates, the other locks the committed row', async (t) => {
    const db = open()
    const store = new PostgresConversationStore(db)
    const other = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
    await other.connect()
    t.teardown(async () => { await other.end() })

    // The other "instance" has inserted the row but not committed: our insert waits, then finds the row taken.
    await other.query('begin')
    const state = { ...newConversationState('race', 'new'), version: 1, turns: [{ id: 'theirs', at: 'x', role: 'user', text: 'x' }] }
    await other.query('insert into converse_conversations (agent_id, context_id, state, version) values ($1, $2, $3, 1)', ['race', 'new', state])
    let seen: ConversationState | undefined | null = null
    const ours = store.update('race', 'new', (current) => { seen = structuredClone(current); return addTurn('ours')(current) })
    await waitFor(async () => await lockWaiters(db) === 1)
    await other.query('commit')
    const result = await ours
    t.same((seen as ConversationState | null)?.turns.map((entry) => entry.id), ['theirs'], 'our update saw their committed state')
    t.equal(result.version, 2)

    // The other one rolls back: our insert goes through and the conversation is new.
    await other.query('begin')
    await other.query('insert into converse_conversations (agent_id, context_id) values ($1, $2)', ['race', 'rolled-back'])
    seen = null
    const second = store.update('race', 'rolled-back', (current) => { seen = current; return addTurn('ours')(current) })
    await waitFor(async () => await lockWaiters(db) === 1)
    await other.query('rollback')
    t.equal((await second).version, 1)
    t.equal(seen, undefined)

    // A conversation this store remembers (so its update takes the locked path), deleted and being created again
    // elsewhere: the placeholder insert waits for the creator, then the committed row is locked.
    await store.update('race', 'again', addTurn('old'))
    await other.query('delete from converse_conversations where agent_id = $1 and context_id = $2', ['race', 'again'])
    await other.query('begin')
    await other.query('insert into converse_conversations (agent_id, context_id, state, version) values ($1, $2, $3, 1)', ['race', 'again', state])
    seen = null
    const third = store.update('race', 'again', (current) => { seen = structuredClone(current); return addTurn('ours')(current) })
    await waitFor(async () => await lockWaiters(db) === 1)
    await other.query('commit')
    t.equal((await third).version, 2)
    t.same((seen as ConversationState | null)?.turns.map((entry) => entry.id), ['theirs'], 'the locked path saw their committed state')
  })

  t.test('a connection that died while idle is replaced once; twice is an outage', async (t) => {
    const db = open()
    let kills = 0
    /** Hands out pool connections, the first `kills` of them with their backend terminated. */
    const flaky = {
      async connect (): Promise<pg.PoolClient> {
        const client = await db.pool.connect()
        if (kills > 0) {
          kills--
          const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number
          await admin.query('select pg_terminate_backend($1)', [pid])
          await waitFor(async () => (await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rows.length === 0)
        }
        return client
      }
    }
    const store = new PostgresConversationStore({ pool: flaky as unknown as pg.Pool })
    await store.update('flaky', 'c', addTurn('a'))
    kills = 1
    t.equal((await store.get('flaky', 'c'))?.version, 1, 'a read is retried on a fresh connection')
    kills = 1
    t.equal((await store.update('flaky', 'c', addTurn('b'))).version, 2, 'so is the start of an update (nothing was done yet)')
    kills = 2
    await t.rejects(store.exists('flaky', 'c'), StoreUnavailableError, 'not more than once')
    let called = false
    kills = 2
    await t.rejects(store.update('flaky', 'c', (state) => { called = true; return state as ConversationState }), { code: 'A2A_CONVERSE_STORE_UNAVAILABLE' })
    t.equal(called, false, 'fn never ran')
    t.equal((await store.get('flaky', 'c'))?.version, 2)
  })

  t.test('the connection lost during an update', async (t) => {
    const db = open()
    const store = new PostgresConversationStore(db)
    await store.update('lost', 'c', addTurn('a'))

    await t.rejects(store.update('lost', 'c', async () => {
      await killTransaction(db)
      throw new Error('fn failed')
    }), { message: 'fn failed' }, 'fn\'s error wins over the failed rollback')

    const error = await store.update('lost', 'c', async (state) => {
      await killTransaction(db)
      return addTurn('b')(state)
    }).catch((error: unknown) => error)
    t.ok(error instanceof StoreUnavailableError, 'the write failed: the store is unavailable')
    t.match(error, { code: 'A2A_CONVERSE_STORE_UNAVAILABLE', message: /^the conversation store is unreachable: / })
    t.same((await store.get('lost', 'c'))?.turns.map((entry) => entry.id), ['a'], 'nothing was written')
    t.equal((await store.update('lost', 'c', addTurn('c'))).version, 2, 'and the store works on')
    t.ok(warnings.length > 0, 'the lost connections were logged, not thrown')
  })

  t.test('a statement waiting longer than statementTimeoutMs fails instead of hanging', async (t) => {
    const a = new PostgresConversationStore(open())
    const b = new PostgresConversationStore(open({ statementTimeoutMs: 200 }))
    await a.update('slow', 'c', addTurn('a'))
    const gate = deferred()
    const holding = deferred()
    const held = a.update('slow', 'c', async (state) => { holding.resolve(); await gate.promise; return addTurn('b')(state) })
    await holding.promise
    const started = Date.now()
    await t.rejects(b.update('slow', 'c', addTurn('never')), StoreUnavailableError)
    t.ok(Date.now() - started < 3000, 'bounded by the statement timeout')
    gate.resolve()
    t.equal((await held).version, 2)
  })

  t.test('an unreachable database: every call rejects with StoreUnavailableError, fast', async (t) => {
    const check = async (store: InstanceType<typeof PostgresConversationStore>, boundMs: number): Promise<void> => {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['get', async () => await store.get('a', 'c')],
        ['exists', async () => await store.exists('a', 'c')],
        ['list', async () => await store.list('a')],
        ['findContextByTaskId', async () => await store.findContextByTaskId('a', 't')],
        ['update', async () => await store.update('a', 'c', addTurn('x'))],
        ['delete', async () => await store.delete('a', 'c')]
      ]
      for (const [name, call] of calls) {
        const started = Date.now()
        const error = await call().catch((error: unknown) => error)
        t.ok(error instanceof StoreUnavailableError, `${name} rejects with StoreUnavailableError`)
        t.match(error, { name: 'StoreUnavailableError', code: 'A2A_CONVERSE_STORE_UNAVAILABLE', message: /^the conversation store is unreachable/ })
        t.ok(Date.now() - started < boundMs, `${name} within ${boundMs} ms`)
      }
    }

    await check(new PostgresConversationStore(open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 200 })), 2000)

    // A server that accepts connections and never answers: the connect timeout bounds every call.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => { sockets.add(socket) })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    t.teardown(async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    })
    const { port } = silent.address() as { port: number }
    await check(new PostgresConversationStore(open({ connectionString: `postgres://postgres@127.0.0.1:${port}/test`, connectTimeoutMs: 200 })), 2000)
  })
  t.test('no store queues a query behind another on a connection that is not pipelined (deprecated by pg 8, gone in pg 9)', async (t) => {
    await new Promise((resolve) => setImmediate(resolve))
    t.same(queued, [])
  })
}
