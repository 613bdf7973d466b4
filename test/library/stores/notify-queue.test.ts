import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('NOTIFY queue', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const { NotifyQueue } = await import('../../../packages/a2a-converse/src/stores/postgres/notify-queue.js')

  /** A queue on a pool of its own whose statements are counted, and a listener on its channel. */
  const setup = async (t: Test): Promise<{ channel: string, queue: InstanceType<typeof NotifyQueue>, statements: () => number, received: string[], until: (count: number) => Promise<void> }> => {
    const channel = `notify_queue_test_${randomBytes(4).toString('hex')}`
    const pool = new pg.Pool({ connectionString: url, max: 4 })
    let statements = 0
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
    ;(pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args) => { statements++; return await query(...args) }
    const listener = new pg.Client({ connectionString: url })
    await listener.connect()
    const received: string[] = []
    listener.on('notification', (message) => { received.push(message.payload as string) })
    await listener.query(`listen "${channel}"`)
    t.teardown(async () => {
      await listener.end()
      await pool.end()
    })
    const until = async (count: number): Promise<void> => {
      for (let i = 0; i < 500 && received.length < count; i++) await sleep(10)
      await sleep(50)
    }
    return { channel, queue: new NotifyQueue(pool, channel), statements: () => statements, received, until }
  }

  t.test('what is asked in one turn of the event loop goes in one statement; what is asked while it is on its way, together in the next, in order', async (t) => {
    const { queue, statements, received, until } = await setup(t)
    const payloads = Array.from({ length: 20 }, (_, index) => `event ${index}`)
    const first = payloads.slice(0, 8).map(async (payload) => { await queue.notify(payload) })
    // The queue's own setImmediate ran first: its statement has left with the first eight.
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(statements(), 1, 'the first eight on their way')
    await Promise.all([...first, ...payloads.slice(8).map(async (payload) => { await queue.notify(payload) })])
    await until(20)
    t.same(received, payloads)
    t.equal(statements(), 2, 'the first eight in one statement, the other twelve in the next')
    await queue.notify('alone')
    t.equal(statements(), 3, 'one alone: one statement')
    await queue.idle()
  })

  t.test('an event equal to one in the batch waits for the next statement (both delivered); equal wakes go once', async (t) => {
    const { queue, statements, received, until } = await setup(t)
    await Promise.all([queue.notify('first'), queue.notify('chunk'), queue.notify('chunk'), queue.notify('wake', true), queue.notify('wake', true)])
    await until(4)
    t.same(received, ['first', 'chunk', 'chunk', 'wake'])
    t.equal(statements(), 2, 'first and chunk; the equal chunk and one wake')
  })

  t.test('a spilled event keeps its place in the order; a failing statement rejects its own items only', async (t) => {
    const { channel, queue, received, until } = await setup(t)
    const results = await Promise.allSettled([
      queue.notify('before'),
      queue.spill({ text: 'select pg_notify($1, $2)', values: [channel, 'spilled'] }),
      queue.notify('after'),
      queue.spill({ text: 'select no_such_function()' }),
      queue.notify('last')
    ])
    t.same(results.map((result) => result.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    t.match((results[3] as PromiseRejectedResult).reason, { code: '42883' })
    await until(4)
    t.same(received, ['before', 'spilled', 'after', 'last'])
  })

  t.test('a statement holds at most 100 notifications and about 256 KiB of payloads', async (t) => {
    const { queue, statements, received, until } = await setup(t)
    await Promise.all(Array.from({ length: 151 }, async (_, index) => { await queue.notify(`n${index}`) }))
    t.equal(statements(), 2, '100, then 51')
    const big = Array.from({ length: 40 }, (_, index) => `${index}`.padEnd(7000, '.'))
    await Promise.all([queue.notify('small'), ...big.map(async (payload) => { await queue.notify(payload) })])
    t.equal(statements(), 2 + 2, 'the small one and 37 of 7,000 bytes, then 3')
    await until(151 + 41)
    t.equal(received.length, 192)
    t.same(received.slice(152), big)
  })
}
