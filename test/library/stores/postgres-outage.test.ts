/**
 * The database going away and coming back, simulated by a TCP proxy in front of the test server: `stop()` is a
 * server that went down (connections cut, new ones refused), `start()` brings it back, `freeze()` is a network that
 * silently stops carrying the existing connections (no FIN, no RST: only timeouts notice).
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import type { PostgresDatabase, PostgresDatabaseOptions } from '../../../packages/a2a-converse/src/stores/postgres/postgres-database.js'

const url = process.env.TEST_DATABASE_URL

class Proxy {
  readonly #target: { host: string, port: number }
  readonly #server: Server
  readonly #pairs = new Set<[Socket, Socket]>()
  port = 0

  constructor (target: URL) {
    this.#target = { host: target.hostname, port: Number(target.port === '' ? 5432 : target.port) }
    this.#server = createServer((client) => {
      const upstream = connect(this.#target)
      const pair: [Socket, Socket] = [client, upstream]
      this.#pairs.add(pair)
      const drop = (): void => {
        client.destroy()
        upstream.destroy()
        this.#pairs.delete(pair)
      }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
      client.pipe(upstream)
      upstream.pipe(client)
    })
  }

  /** `url` with the proxy's port. */
  url (base: string): string {
    const through = new URL(base)
    through.hostname = '127.0.0.1'
    through.port = String(this.port)
    return through.toString()
  }

  async start (): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.#server.address() as { port: number }).port
  }

  /** Refuses new connections and cuts the open ones. */
  async stop (): Promise<void> {
    const closed = new Promise((resolve) => this.#server.close(resolve))
    for (const [client, upstream] of this.#pairs) {
      client.destroy()
      upstream.destroy()
    }
    this.#pairs.clear()
    await closed
  }

  /** The open connections stop carrying anything, in either direction, without being closed. */
  freeze (): void {
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream)
      upstream.unpipe(client)
      client.pause()
      upstream.pause()
    }
  }
}

if (url === undefined) {
  t.test('PostgreSQL outages', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Loaded only here: without a database these modules are not part of the run (nor of its coverage).
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresConversationStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-conversation-store.js')
  const { PostgresTaskEventHub } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-event-hub.js')
  const { StoreUnavailableError } = await import('../../../packages/a2a-converse/src/stores/errors.js')

  const schema = `a2a_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const warnings: Array<{ obj: Record<string, unknown>, msg: string }> = []
  const logger = { warn: (obj: Record<string, unknown>, msg: string) => { warnings.push({ obj, msg }) } }
  const closers: Array<() => Promise<void>> = []
  const open = (options: Partial<PostgresDatabaseOptions> = {}): PostgresDatabase => {
    const database = createPostgresDatabase({ connectionString: url, schema, logger, ...options })
    closers.push(async () => { await database.close() })
    return database
  }
  const proxies: Proxy[] = []
  const newProxy = async (): Promise<Proxy> => {
    const proxy = new Proxy(new URL(url))
    await proxy.start()
    proxies.push(proxy)
    return proxy
  }
  const direct = open()
  await migrate(direct.db, { schema })
  t.teardown(async () => {
    // Cut the proxied connections first: a frozen one would keep its pool from ending.
    for (const proxy of proxies) await proxy.stop().catch(() => {})
    for (const close of closers.reverse()) await close()
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  const waitUntil = async (check: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 1000 && !check(); i++) await sleep(10)
    if (!check()) throw new Error(`waitUntil: timed out waiting for ${what}`)
  }
  const addTurn = (id: string) => (state: ConversationState | undefined): ConversationState => {
    const next = state ?? { agentId: 'x', contextId: 'x', ownership: 'ai_owned', turns: [], inbox: [], version: 0, createdAt: 'x', updatedAt: 'x' }
    next.turns.push({ id, at: 'x', role: 'user', text: id })
    return next
  }

  t.test('the server goes down and comes back: calls fail fast, then work again by themselves', async (t) => {
    const proxy = await newProxy()
    const database = open({ connectionString: proxy.url(url), connectTimeoutMs: 500 })
    const store = new PostgresConversationStore(database)
    await store.update('outage', 'c', addTurn('before'))
    t.equal(await database.ping(), true)

    await proxy.stop()
    for (const [name, call] of [
      ['get', async () => await store.get('outage', 'c')],
      ['update', async () => await store.update('outage', 'c', addTurn('during'))],
      ['list', async () => await store.list('outage')]
    ] as Array<[string, () => Promise<unknown>]>) {
      const started = Date.now()
      await t.rejects(call(), StoreUnavailableError, `${name}: StoreUnavailableError`)
      t.ok(Date.now() - started < 3000, `${name}: fast`)
    }
    t.equal(await database.ping(), false, 'readiness: not ready')

    await proxy.start()
    t.equal(await database.ping(), true, 'ready again')
    const after = await store.update('outage', 'c', addTurn('after'))
    t.same(after.turns.map((entry) => entry.id), ['before', 'after'], 'nothing lost, nothing half-written')
    t.ok(warnings.some((warning) => /PostgreSQL connection error/.test(warning.msg)), 'the cut connections were logged')
  })

  t.test('a connection that silently stops answering: ping says not ready within the connect timeout', async (t) => {
    const proxy = await newProxy()
    const database = open({ connectionString: proxy.url(url), connectTimeoutMs: 300 })
    t.equal(await database.ping(), true, 'one idle connection in the pool')
    proxy.freeze()
    // A frozen connection never answers: only ping's own timer can resolve it (a hang fails the test by its timeout).
    t.equal(await database.ping(), false, 'bounded by the connect timeout, not by the connection')
  })

  t.test('the event hub: health check on a frozen connection, reconnect after the server came back', async (t) => {
    const proxy = await newProxy()
    const channel = `${schema}_outage`
    const publisher = new PostgresTaskEventHub(direct, { channel })
    const hub = new PostgresTaskEventHub(open({ connectionString: proxy.url(url) }), {
      channel, healthCheckIntervalMs: 50, healthCheckTimeoutMs: 200, reconnectInitialDelayMs: 20, reconnectMaxDelayMs: 100
    })
    closers.push(async () => { await hub.close() }, async () => { await publisher.close() })
    await Promise.all([publisher.ready(), hub.ready()])
    const events: unknown[] = []
    hub.subscribe('T', (event) => { events.push(event) })

    const frozenPid = hub.backendPid
    proxy.freeze()
    await waitUntil(() => !hub.listening, 'the health check to give up')
    t.ok(warnings.some((warning) => warning.obj.channel === channel && /did not answer within 200 ms/.test(String((warning.obj.err as Error).message))))
    await hub.ready()
    t.not(hub.backendPid, frozenPid, 'a new connection')
    await publisher.publish('T', { n: 1 })
    await waitUntil(() => events.length === 1, 'the event after the freeze')

    await proxy.stop()
    await waitUntil(() => !hub.listening, 'the cut')
    await sleep(150) // a few refused attempts
    await proxy.start()
    await hub.ready()
    await publisher.publish('T', { n: 2 })
    await waitUntil(() => events.length === 2, 'the event after the restart')
    t.same(events, [{ n: 1 }, { n: 2 }])
  })

  t.test('closing a hub whose connection no longer answers does not hang', async (t) => {
    const proxy = await newProxy()
    const hub = new PostgresTaskEventHub(open({ connectionString: proxy.url(url) }), { channel: `${schema}_frozen`, healthCheckIntervalMs: 0 })
    await hub.ready()
    proxy.freeze()
    // The frozen peer never confirms the end: close resolves only through its own bound (CLOSE_TIMEOUT_MS).
    await hub.close()
    t.pass('close gave up waiting for the frozen connection')
  })
}
