/**
 * EmbeddedWire (embedded-wire.ts): pg speaking PostgreSQL's wire protocol to a PGlite session through
 * `execProtocolRaw`, one call per write — what the embedded database's stores rest on, spoken here without them, so a
 * PGlite or pg that changes what it sends or answers fails here first: the start-up, a query's messages in one call,
 * named statements, errors (and the session still usable after them), a transaction, pg's end (the session stays
 * open), a session that fails under a query.
 */
import t from 'tap'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { EmbeddedWire } from '../../../packages/a2a-converse/src/stores/postgres/embedded-wire.js'

// An in-memory PGlite: an initdb (seconds, tens of them on a loaded 2-core machine).
t.setTimeout(300_000)

const session = new PGlite()
await session.waitReady
t.teardown(async () => await session.close())

/** The session's calls, counted (one per write pg makes). */
let calls = 0
const counted: Pick<PGlite, 'execProtocolRaw'> = {
  execProtocolRaw: async (message, options) => {
    calls++
    return await session.execProtocolRaw(message, options)
  }
}

async function connect (wired: Pick<PGlite, 'execProtocolRaw'> = counted): Promise<pg.Client> {
  const client = new pg.Client({ stream: () => new EmbeddedWire(wired), user: 'postgres', database: 'postgres' })
  await client.connect()
  return client
}

t.test('the start-up, then a query with parameters: one call into the session for all its messages', async (t) => {
  const client = await connect()
  t.teardown(async () => await client.end())
  calls = 0
  const result = await client.query('select $1::int8 + 1 as n, $2::text as word', ['9007199254740992', 'wire'])
  t.strictSame(result.rows, [{ n: '9007199254740993', word: 'wire' }], 'values read as from a server (int8 as a string)')
  t.equal(calls, 1, 'Parse, Bind, Describe, Execute and Sync written at once')
  t.equal((await client.query('select 1 as one')).rows[0].one, 1, 'a simple query too')
})

t.test('a named statement is parsed once and bound after', async (t) => {
  const client = await connect()
  t.teardown(async () => await client.end())
  await client.query('create table words (word text primary key)')
  const insert = { name: 'wire_insert', text: 'insert into words values ($1) returning word' }
  t.strictSame((await client.query(insert, ['a'])).rows, [{ word: 'a' }])
  calls = 0
  t.strictSame((await client.query(insert, ['b'])).rows, [{ word: 'b' }])
  t.equal(calls, 1)
  const prepared = await client.query("select count(*)::int as n from pg_prepared_statements where name = 'wire_insert'")
  t.equal(prepared.rows[0].n, 1, 'prepared once in the session')
})

t.test('an error answers its query; the session goes on; a transaction rolls back', async (t) => {
  const client = await connect()
  t.teardown(async () => await client.end())
  await t.rejects(client.query('select no_such_column'), { code: '42703', message: /no_such_column/ })
  t.equal((await client.query('select 2 as two')).rows[0].two, 2, 'the next query is answered')
  await client.query('create table kept (n int)')
  await client.query('begin')
  await client.query('insert into kept values (1)')
  await t.rejects(client.query('insert into kept values ($1)', ['not a number']), { code: '22P02' })
  await client.query('rollback')
  t.equal((await client.query('select count(*)::int as n from kept')).rows[0].n, 0, 'nothing of the transaction stays')
})

t.test('pg\'s end closes the wire, not the session', async (t) => {
  const client = await connect()
  await client.end()
  const again = await connect()
  t.teardown(async () => await again.end())
  t.equal((await again.query('select 3 as three')).rows[0].three, 3)
})

t.test('a session that fails under a query: the query rejects with its error', async (t) => {
  let failing = false
  const client = await connect({
    execProtocolRaw: async (message, options) => {
      if (failing) throw new Error('the session failed')
      return await session.execProtocolRaw(message, options)
    }
  })
  client.on('error', () => {})
  failing = true
  await t.rejects(client.query('select 1'), { message: 'the session failed' })
  await client.end()
  t.pass('and pg\'s end still ends')
})
