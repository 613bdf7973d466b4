import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { TaskEventHub, TaskStreamEvent } from '../../../packages/a2a-converse/src/events/task-event-hub.js'
import type { PostgresDatabase, PostgresDatabaseOptions } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'
import type { PostgresTaskEventHubOptions } from '../../../packages/a2a-converse/src/stores/postgres/postgres-task-event-hub.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL task event hub', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const hubModule = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-event-hub.js')
  const { PostgresTaskEventHub, taskEventChannel, TASK_EVENT_CHANNEL, MAX_NOTIFY_PAYLOAD_BYTES } = hubModule
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')
  const { InvalidOptionError } = await import('../../../packages/a2a-converse/src/core/errors.js')

  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const otherSchema = `${schema}_b`
  const warnings: Array<{ obj: Record<string, unknown>, msg: string }> = []
  const logger = { warn: (obj: Record<string, unknown>, msg: string) => { warnings.push({ obj, msg }) } }
  const opened: Array<{ close: () => Promise<void> }> = []
  const open = (options: Partial<PostgresDatabaseOptions> = {}): PostgresDatabase => {
    const database = createPostgresDatabase({ connectionString: url, schema, logger, ...options })
    opened.push(database)
    return database
  }
  /** A hub on a pool of its own: an "instance". Closed before the databases at the end. */
  const hubs: Array<InstanceType<typeof PostgresTaskEventHub>> = []
  const newHub = (options: PostgresTaskEventHubOptions = {}, database: PostgresDatabase = open()): InstanceType<typeof PostgresTaskEventHub> => {
    const hub = new PostgresTaskEventHub(database, options)
    hubs.push(hub)
    return hub
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await migrate(open().db, { schema })
  await migrate(open({ schema: otherSchema }).db, { schema: otherSchema })
  t.teardown(async () => {
    for (const hub of hubs) await hub.close()
    for (const database of opened) await database.close()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.query(`drop schema if exists ${otherSchema} cascade`)
    await admin.end()
  })

  /** Collects a hub's events of a task. */
  const collect = (hub: TaskEventHub, taskId: string): { events: TaskStreamEvent[], stop: () => void } => {
    const events: TaskStreamEvent[] = []
    const stop = hub.subscribe(taskId, (event) => { events.push(event) })
    return { events, stop }
  }
  const waitUntil = async (check: () => boolean, what = 'condition'): Promise<void> => {
    for (let i = 0; i < 1000 && !check(); i++) await sleep(10)
    if (!check()) throw new Error(`waitUntil: timed out waiting for ${what}`)
  }
  const status = (n: number, text = `update ${n}`): TaskStreamEvent => ({
    statusUpdate: { taskId: 'T', contextId: 'C', status: { state: 'TASK_STATE_WORKING', message: { role: 'ROLE_AGENT', parts: [{ text }] } }, n }
  })

  t.test('channel names and options', async (t) => {
    t.equal(taskEventChannel(), TASK_EVENT_CHANNEL)
    t.equal(taskEventChannel('abc'), 'a2a_converse_task_events:abc', 'one channel per schema: no cross-talk')
    const long = taskEventChannel('s'.repeat(63))
    t.ok(long.length <= 63, 'a long schema is hashed into a valid channel name')
    t.equal(long, taskEventChannel('s'.repeat(63)), 'deterministically')
    t.not(long, taskEventChannel(`${'s'.repeat(62)}t`))
    t.equal(MAX_NOTIFY_PAYLOAD_BYTES, 7999)

    const database = open()
    t.throws(() => new PostgresTaskEventHub(database, { channel: '' }), InvalidOptionError)
    t.throws(() => new PostgresTaskEventHub(database, { channel: 'x'.repeat(64) }), { message: 'option "channel" must be 1 to 63 bytes long' })
    t.throws(() => new PostgresTaskEventHub(database, { reconnectInitialDelayMs: 0 }), { message: 'option "reconnectInitialDelayMs" must be a positive integer' })
    t.throws(() => new PostgresTaskEventHub(database, { reconnectMaxDelayMs: 1.5 }), InvalidOptionError)
    t.throws(() => new PostgresTaskEventHub(database, { healthCheckIntervalMs: -1 }), { message: 'option "healthCheckIntervalMs" must be a non-negative integer' })
    t.throws(() => new PostgresTaskEventHub(database, { healthCheckTimeoutMs: 0 }), InvalidOptionError)
    t.throws(() => new PostgresTaskEventHub(database, { spillRetentionMs: 0 }), InvalidOptionError)
    const hub = newHub({ channel: 'custom_channel' }, database)
    t.equal(hub.channel, 'custom_channel')
    t.equal(newHub({}, database).channel, `a2a_converse_task_events:${schema}`, 'default: the database\'s schema')
  })

  t.test('hub A publishes, hub B\'s subscribers receive; A\'s own subscribers get it once, at once', async (t) => {
    const a = newHub()
    const b = newHub()
    await Promise.all([a.ready(), b.ready()])
    t.equal(a.listening, true)
    await a.ready()
    t.pass('ready() once listening: at once')
    t.type(a.backendPid, 'number')
    t.not(a.backendPid, b.backendPid, 'one dedicated connection per hub')

    const onB = collect(b, 'task-1')
    const onA = collect(a, 'task-1')
    const otherTask = collect(b, 'task-2')
    for (let n = 1; n <= 5; n++) await a.publish('task-1', status(n))
    t.same(onA.events.map((event) => (event.statusUpdate as { n: number }).n), [1, 2, 3, 4, 5], 'local subscribers: delivered when publish resolves')
    await waitUntil(() => onB.events.length === 5, 'B to receive')
    t.same(onB.events, [1, 2, 3, 4, 5].map((n) => status(n)), 'B: every event, in publish order')
    await b.publish('task-1', status(6))
    await waitUntil(() => onA.events.length === 6, 'A to receive B\'s event')
    await sleep(100)
    t.equal(onA.events.length, 6, 'A\'s echo of its own events is ignored (no duplicates)')
    t.equal(onB.events.length, 6)
    t.same(otherTask.events, [], 'other tasks\' subscribers get nothing')

    onB.stop()
    otherTask.stop()
    t.equal(b.size, 0, 'nothing kept once the last listener leaves')
    await a.publish('task-1', status(7))
    await sleep(100)
    t.equal(onB.events.length, 6, 'unsubscribed')
    const again = b.subscribe('task-1', () => {})
    again()
    again()
    t.pass('unsubscribing twice is harmless')
  })

  t.test('a hub on another schema hears nothing', async (t) => {
    const here = newHub()
    const there = newHub({}, open({ schema: otherSchema }))
    const sameSchema = newHub()
    await Promise.all([here.ready(), there.ready(), sameSchema.ready()])
    const heard = collect(there, 'task-x')
    const control = collect(sameSchema, 'task-x')
    await here.publish('task-x', status(1))
    await waitUntil(() => control.events.length === 1, 'the same-schema hub')
    await sleep(50)
    t.same(heard.events, [], 'different channel')
  })

  t.test('events of 8000 bytes and more go through a table, in order with the others', async (t) => {
    const a = newHub()
    const b = newHub()
    await Promise.all([a.ready(), b.ready()])
    const onB = collect(b, 'big')
    const big = status(2, 'é'.repeat(6000)) // 12000 bytes of UTF-8
    await a.publish('big', status(1))
    await a.publish('big', big)
    await a.publish('big', status(3))
    await waitUntil(() => onB.events.length === 3, 'the three events')
    t.same(onB.events, [status(1), big, status(3)])
    const { rows } = await admin.query(`select task_id, length(event) as length from ${schema}.converse_task_events`)
    t.match(rows, [{ task_id: 'big', length: JSON.stringify(big).length }], 'the big one only')

    const quick = newHub({ spillRetentionMs: 1 })
    await sleep(10)
    await quick.publish('big', big)
    await waitUntil(() => onB.events.length === 4, 'the fourth event')
    const left = await admin.query(`select count(*)::int as n from ${schema}.converse_task_events`)
    t.equal(left.rows[0].n, 1, 'older spilled events are pruned by the next spill')
  })

  t.test('notifications that are not task events, and spilled events that are gone', async (t) => {
    const hub = newHub({ channel: `${schema}_junk` }) // a channel of its own: only this hub logs
    await hub.ready()
    const heard = collect(hub, 'T')
    const before = warnings.length
    for (const payload of ['not json', '1', 'null', '{}', '{"t":"T"}', '{"t":"T","e":null}', '{"t":"T","r":"1"}', '{"t":"T","a":"A","e":{}}']) {
      await admin.query('select pg_notify($1, $2)', [hub.channel, payload])
    }
    await admin.query('select pg_notify($1, $2)', [hub.channel, '{"o":"elsewhere","t":"T","r":987654321}'])
    await admin.query('select pg_notify($1, $2)', [hub.channel, '{"o":"elsewhere","t":"T","e":{"statusUpdate":{"ok":true}}}'])
    await waitUntil(() => heard.events.length === 1, 'the valid event')
    t.same(heard.events, [{ statusUpdate: { ok: true } }], 'only the valid event, after the missing one was skipped')
    const mine = warnings.slice(before).map((warning) => warning.msg)
    t.equal(mine.filter((msg) => /not a task event/.test(msg)).length, 8)
    t.equal(mine.filter((msg) => /could not read a spilled task event/.test(msg)).length, 1)
    await admin.query('select pg_notify($1, $2)', [hub.channel, '{"o":"elsewhere","t":"nobody-listens","r":1}'])
    await sleep(50)
    t.equal(warnings.length, before + 9, 'an event nobody here follows is not even read')
  })

  t.test('the agent-level channel: conversation events across hubs, large ones through the table', async (t) => {
    const a = newHub()
    const b = newHub()
    await Promise.all([a.ready(), b.ready()])
    const onB: TaskStreamEvent[] = []
    const onA: TaskStreamEvent[] = []
    const before = warnings.length
    b.subscribeConversations('agent-1', () => { throw new Error('listener bug') })
    const stop = b.subscribeConversations('agent-1', (event) => { onB.push(event) })
    a.subscribeConversations('agent-1', (event) => { onA.push(event) })
    const taskSide = collect(b, 'agent-1')
    const big = { conversation: { contextId: 'c2', text: 'é'.repeat(6000) } }
    await a.publishConversation('agent-1', { conversation: { contextId: 'c1' } })
    await a.publishConversation('agent-1', big)
    await a.publishConversation('agent-2', { conversation: { contextId: 'other agent' } })
    t.equal(onA.length, 2, 'local subscribers at once')
    await waitUntil(() => onB.length === 2, 'B to receive both')
    t.same(onB, [{ conversation: { contextId: 'c1' } }, big], 'in order, the big one read back')
    t.match(warnings.slice(before), [{ obj: { agentId: 'agent-1' }, msg: 'task event hub: a listener threw' }], 'a throwing listener is logged with its agent')
    await sleep(50)
    t.equal(onB.length, 2, 'not the other agent\'s')
    t.same(taskSide.events, [], 'a task of the same id hears nothing')
    stop()
    t.equal(b.subscribeConversations('agent-1', () => {}) !== undefined, true)
    const closed = newHub()
    await closed.close()
    await closed.publishConversation('agent-1', { conversation: {} })
    closed.subscribeConversations('agent-1', () => { t.fail('a closed hub delivers nothing') })()
  })

  t.test('a throwing listener is logged; the others still get the event', async (t) => {
    const a = newHub()
    const b = newHub()
    await Promise.all([a.ready(), b.ready()])
    const before = warnings.length
    a.subscribe('T', () => { throw new Error('listener bug') })
    b.subscribe('T', () => { throw new Error('listener bug') })
    const onA = collect(a, 'T')
    const onB = collect(b, 'T')
    await a.publish('T', status(1))
    await waitUntil(() => onB.events.length === 1, 'B\'s second listener')
    t.equal(onA.events.length, 1)
    t.equal(warnings.slice(before).filter((warning) => warning.msg === 'task event hub: a listener threw').length, 2)
  })

  t.test('the LISTEN connection is re-opened after it drops (pg_terminate_backend)', async (t) => {
    const a = newHub({ channel: `${schema}_drop` })
    const b = newHub({ channel: `${schema}_drop`, reconnectInitialDelayMs: 20 })
    await Promise.all([a.ready(), b.ready()])
    const onB = collect(b, 'T')
    for (let round = 1; round <= 2; round++) {
      const pid = b.backendPid as number
      await admin.query('select pg_terminate_backend($1)', [pid])
      await waitUntil(() => !b.listening, 'B to notice')
      t.equal(b.backendPid, undefined)
      await b.ready()
      t.not(b.backendPid, pid, `round ${round}: a new connection`)
      await a.publish('T', status(round))
      await waitUntil(() => onB.events.length === round, `round ${round}: the event`)
    }
    t.same(onB.events, [status(1), status(2)])
    t.same(warnings.filter((warning) => warning.obj.channel === b.channel && /LISTEN connection is down/.test(warning.msg)).map((warning) => warning.obj.delayMs),
      [20, 20], 'logged; each drop after a good connection starts the backoff over')
  })

  t.test('an unreachable database: backoff, publish rejects, close releases everything', async (t) => {
    const database = open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 200 })
    const hub = newHub({ channel: `${schema}_unreachable`, reconnectInitialDelayMs: 10, reconnectMaxDelayMs: 40 }, database)
    await waitUntil(() => warnings.filter((warning) => warning.obj.channel === hub.channel && warning.obj.delayMs !== undefined).length >= 5, 'five attempts')
    const delays = warnings.filter((warning) => warning.obj.channel === hub.channel && warning.obj.delayMs !== undefined).map((warning) => warning.obj.delayMs)
    t.same(delays.slice(0, 5), [10, 20, 40, 40, 40], 'doubling, capped')
    t.equal(hub.listening, false)
    await t.rejects(hub.publish('T', status(1)), StoreUnavailableError)
    // Its rejection handled before the close rejects it: the close may then wait for a connection attempt to end.
    const waiting = t.rejects(hub.ready(), { message: 'the task event hub is closed' })
    await hub.close()
    await waiting
    await t.rejects(hub.ready(), { message: 'the task event hub is closed' })
    await hub.publish('T', status(1))
    t.pass('publish after close: nothing to do (as the memory hub)')
    const off = hub.subscribe('T', () => { t.fail('never called') })
    off()
    t.equal(hub.size, 0)
    await hub.close()
    t.pass('closing twice is fine')
  })

  t.test('close while connecting, and health checks', async (t) => {
    const early = newHub()
    await early.close()
    t.equal(early.listening, false, 'closed before the connection was up')
    await sleep(50)
    t.equal(early.listening, false, 'and it stays down')

    // Closed between two steps of setting up the connection: the set-up stops there.
    const originalQuery = pg.Client.prototype.query
    let hubToClose: InstanceType<typeof PostgresTaskEventHub> | undefined
    t.teardown(() => { pg.Client.prototype.query = originalQuery })
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (hubToClose !== undefined && args[0] === 'select pg_backend_pid() as pid') {
        const hub = hubToClose
        hubToClose = undefined
        return hub.close().then(() => ({ rows: [{ pid: 1 }] }))
      }
      return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args)
    } as typeof originalQuery
    const racing = newHub({}, open())
    hubToClose = racing
    await waitUntil(() => hubToClose === undefined, 'the set-up')
    await sleep(20)
    t.equal(racing.listening, false, 'not listening once closed')

    const checked = newHub({ healthCheckIntervalMs: 20 })
    await checked.ready()
    const pid = checked.backendPid
    await sleep(150)
    t.equal(checked.backendPid, pid, 'healthy checks keep the connection')
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (args[0] === 'select 1' && hubToClose === undefined) {
        // The check answers, but the hub was closed meanwhile: no further check is scheduled.
        return checked.close().then(() => ({ rows: [{ '?column?': 1 }] }))
      }
      return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args)
    } as typeof originalQuery
    await waitUntil(() => !checked.listening, 'the check')
    pg.Client.prototype.query = originalQuery
    await sleep(60)
    t.equal(checked.listening, false)
  })
}
