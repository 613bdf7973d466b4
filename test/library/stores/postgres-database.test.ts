import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL database and connection errors', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase, assertSchemaName } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { isConnectionFailure, isStatementError, isUnavailable, toStoreError } = await import('../../../packages/a2a-converse/src/stores/postgres/connection-errors.js')
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')
  const { ConverseError, InvalidOptionError } = await import('../../../packages/a2a-converse/src/core/errors.js')

  const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

  t.test('StoreUnavailableError', async (t) => {
    const bare = new StoreUnavailableError()
    t.ok(bare instanceof ConverseError)
    t.match(bare, { name: 'StoreUnavailableError', code: 'A2A_CONVERSE_STORE_UNAVAILABLE', message: 'the conversation store is unreachable' })
    t.notOk('cause' in bare, 'no cause given, none set')
    const cause = coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1')
    t.match(new StoreUnavailableError(cause), { message: 'the conversation store is unreachable: connect ECONNREFUSED 127.0.0.1:1', cause })
    t.equal(new StoreUnavailableError(new Error('')).message, 'the conversation store is unreachable', 'an empty message adds nothing')
    t.match(new StoreUnavailableError('down'), { message: 'the conversation store is unreachable', cause: 'down' })
  })

  t.test('which errors mean the database is unreachable', async (t) => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '08006', '08001', '57P01', '57P02', '57P03']) {
      t.ok(isConnectionFailure(coded(code)), `${code}: connection failure`)
      t.ok(isUnavailable(coded(code)), `${code}: unavailable`)
    }
    for (const message of ['Connection terminated unexpectedly', 'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable']) {
      t.ok(isConnectionFailure(new Error(message)), message)
    }
    t.ok(isConnectionFailure(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], '')), 'localhost: one per address')
    t.notOk(isConnectionFailure(new AggregateError([new Error('a')], 'b')))
    for (const code of ['57014', '53300']) {
      t.notOk(isConnectionFailure(coded(code)), `${code}: not a lost connection (not retried)`)
      t.ok(isUnavailable(coded(code)), `${code}: but not answering in bounded time`)
    }
    for (const value of [coded('42P01', 'relation "x" does not exist'), coded('23505'), new Error('boom'), 'ECONNREFUSED', undefined, { code: 'ECONNREFUSED' }]) {
      t.notOk(isUnavailable(value), `not an outage: ${String((value as { code?: string } | undefined)?.code ?? value)}`)
    }
    for (const code of ['CV002', '23505', '42P01']) t.ok(isStatementError(coded(code)), `${code}: the statement refused, the connection as before`)
    for (const value of [coded('57014'), coded('53100'), coded('08006'), coded('ECONNRESET'), new Error('Connection terminated unexpectedly'), 'CV002', { code: 'CV002' }]) {
      t.notOk(isStatementError(value), `in doubt: ${String((value as { code?: string }).code ?? value)}`)
    }
    t.ok(toStoreError(coded('ECONNREFUSED')) instanceof StoreUnavailableError)
    const other = coded('42P01')
    t.equal(toStoreError(other), other, 'anything else is passed on as is')
  })

  t.test('options are checked', async (t) => {
    t.throws(() => createPostgresDatabase({ connectionString: '' }), InvalidOptionError)
    t.throws(() => createPostgresDatabase({ connectionString: undefined as unknown as string }), { message: /connectionString/ })
    t.throws(() => createPostgresDatabase({ connectionString: url, schema: 'Bad-Name' }), { message: /option "schema" must be a lowercase SQL identifier/ })
    t.throws(() => createPostgresDatabase({ connectionString: url, poolMax: 0 }), { message: 'option "poolMax" must be a positive integer' })
    t.throws(() => createPostgresDatabase({ connectionString: url, connectTimeoutMs: 1.5 }), { message: /connectTimeoutMs/ })
    t.throws(() => createPostgresDatabase({ connectionString: url, statementTimeoutMs: -1 }), { message: 'option "statementTimeoutMs" must be a non-negative integer' })
    t.throws(() => createPostgresDatabase({ connectionString: url, idleTimeoutMs: 0 }), { message: /idleTimeoutMs/ })
    assertSchemaName('a2a_ok_1')
    t.throws(() => assertSchemaName('x'.repeat(64)), InvalidOptionError, 'at most 63 characters')
    t.throws(() => assertSchemaName('1abc'), InvalidOptionError)
    t.throws(() => assertSchemaName('a"b'), InvalidOptionError)
  })

  t.test('the connections\' settings', async (t) => {
    const defaults = createPostgresDatabase({ connectionString: url })
    t.teardown(async () => { await defaults.close() })
    t.match(defaults.clientConfig, {
      connectionString: url, connectionTimeoutMillis: 5000, statement_timeout: 30000, application_name: 'a2a-converse', keepAlive: true, pipeline: false
    })
    t.notOk('options' in defaults.clientConfig, 'no search_path without a schema')
    t.equal(defaults.schema, undefined)
    t.ok(Object.isFrozen(defaults.clientConfig))

    const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const custom = createPostgresDatabase({
      connectionString: url, schema, statementTimeoutMs: 0, connectTimeoutMs: 700, poolMax: 2, applicationName: 'custom-app', pipeline: true
    })
    t.equal(custom.clientConfig.pipeline, true)
    t.teardown(async () => { await custom.close() })
    t.notOk('statement_timeout' in custom.clientConfig, '0 disables the statement timeout')
    t.equal(custom.schema, schema)
    const { rows } = await custom.pool.query('select current_setting(\'search_path\') as path, current_setting(\'application_name\') as app, current_setting(\'statement_timeout\') as timeout')
    t.same(rows[0], { path: schema, app: 'custom-app', timeout: '0' })
    const viaKysely = await defaults.db.selectNoFrom((eb) => eb.val(1).as('one')).execute()
    t.same(viaKysely, [{ one: 1 }], 'Kysely runs on the pool')
    const timeout = await defaults.pool.query('select current_setting(\'statement_timeout\') as timeout')
    t.equal(timeout.rows[0].timeout, '30s')
  })

  t.test('statements with parameters are prepared once per connection, from Kysely too; a callback form passes', async (t) => {
    const database = createPostgresDatabase({ connectionString: url, poolMax: 1 })
    t.teardown(async () => { await database.close() })
    const prepared = async (): Promise<string[]> =>
      (await database.pool.query('select statement from pg_prepared_statements order by prepare_time')).rows.map((row) => row.statement as string)
    for (let run = 0; run < 3; run++) t.strictSame((await database.pool.query('select $1::int + 1 as n', [run])).rows, [{ n: run + 1 }])
    t.same(await database.db.selectNoFrom((eb) => eb.val(7).as('seven')).execute(), [{ seven: 7 }])
    const client = await database.pool.connect()
    const viaCallback = await new Promise((resolve, reject) => {
      client.query('select $1::text as s', ['cb'], (error: Error | undefined, result: pg.QueryResult) => { if (error === undefined || error === null) resolve(result.rows); else reject(error) })
    })
    client.release()
    t.strictSame(viaCallback, [{ s: 'cb' }])
    t.strictSame(await prepared(), ['select $1::int + 1 as n', 'select $1 as "seven"', 'select $1::text as s'], 'each text prepared once, on the one connection')
  })

  t.test('ping, close', async (t) => {
    const database = createPostgresDatabase({ connectionString: url })
    t.equal(await database.ping(), true)
    await database.close()
    t.equal(await database.ping(), false, 'closed: false, no throw')
    await database.close()
    t.pass('closing twice is fine')

    const used = createPostgresDatabase({ connectionString: url })
    await used.db.selectNoFrom((eb) => eb.val(1).as('one')).execute()
    await used.close()
    t.equal(used.pool.ending, true, 'Kysely ended the pool it had started')

    const unreachable = createPostgresDatabase({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 300 })
    t.teardown(async () => { await unreachable.close() })
    const started = Date.now()
    t.equal(await unreachable.ping(), false, 'unreachable: false, no throw')
    t.ok(Date.now() - started < 2000, 'fast')
  })

  t.test('a connection error (server restart, terminated backend) is logged, never thrown at the process', async (t) => {
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    t.teardown(async () => { await admin.end() })
    const application = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const terminate = async (): Promise<number> => (await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [application])).rowCount as number

    const warned: Array<[Record<string, unknown>, string]> = []
    const database = createPostgresDatabase({ connectionString: url, applicationName: application, logger: { warn: (obj, msg) => { warned.push([obj, msg]) } } })
    t.teardown(async () => { await database.close() })

    await database.pool.query('select 1') // one idle connection
    t.equal(await terminate(), 1)
    await waitUntil(() => warned.length > 0)
    t.match(warned[0], [{ err: { code: '57P01' } }, /PostgreSQL connection error/])
    t.equal(await database.ping(), true, 'a new connection replaces it')

    // Checked out, between two queries of a transaction: pg-pool has no listener on it then.
    const client = await database.pool.connect()
    await client.query('begin')
    t.equal(await terminate(), 1)
    await waitUntil(() => warned.length > 1)
    await t.rejects(client.query('select 1'), 'the transaction\'s connection is gone')
    client.release(true)
    t.equal(await database.ping(), true, 'and the pool recovers')

    // The default logger is console.warn.
    const warnings: unknown[][] = []
    const original = console.warn
    console.warn = (...args: unknown[]) => { warnings.push(args) }
    try {
      const defaults = createPostgresDatabase({ connectionString: url, applicationName: application })
      await defaults.pool.query('select 1')
      await terminate()
      await waitUntil(() => warnings.length > 0)
      await defaults.close()
    } finally {
      console.warn = original
    }
    t.match(warnings[0], [/^a2a-converse: PostgreSQL connection error/, { err: { code: '57P01' } }])
  })

  async function waitUntil (check: () => boolean): Promise<void> {
    for (let i = 0; i < 500 && !check(); i++) await sleep(10)
    if (!check()) throw new Error('waitUntil: timed out')
  }
}
