/**
 * The push outbox on the embedded database (the same SQL as on a server): rows recorded in a transaction, claimed one
 * per task and config at a time and in order, retried at their time, deleted once delivered or given up (logged),
 * a claim that fails logged and tried again; close waits for the attempts running.
 */
import t from 'tap'
import { sql } from 'kysely'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { migrate, PUSH_OUTBOX_TABLE } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { PostgresPushOutbox } from '../../../packages/a2a-converse/src/stores/postgres/push-outbox.js'
import { recordNotifications } from '../../fixtures/push-outbox-rows.js'
import type { PostOutcome, WebhookPoster } from '../../../packages/a2a-converse/src/push/webhook-post.js'

t.setTimeout(120_000)
const database = await openEmbeddedDatabase({ schema: 'outbox_test', logger: { warn () {} } })
t.teardown(async () => await database.close())
await migrate(database.db, { schema: 'outbox_test' })

const config = (id: string) => ({ config: { tenant: '', id, taskId: 't', url: `https://h.example/${id}`, token: 'tok', authentication: undefined }, converse: id === 'b' })

async function rows (): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(PUSH_OUTBOX_TABLE)}`.execute(database.db)
  return Number(rows[0].n)
}

async function until (check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !await check(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
}

t.test('in order per task and config, retried, given up, deleted', async (t) => {
  const posted: string[] = []
  const plan = new Map<string, PostOutcome[]>([
    ['https://h.example/a', [{ kind: 'retry', reason: 'HTTP 503', retryAfterMs: 30 }]],
    ['https://h.example/b', [{ kind: 'refused', reason: 'HTTP 400' }]]
  ])
  const poster: WebhookPoster = {
    async post (target, body, id) {
      posted.push(`${target.url} ${body} ${id.length}`)
      return plan.get(target.url)?.shift() ?? { kind: 'delivered', status: 200 }
    },
    async close () {}
  }
  const warnings: Array<Record<string, unknown>> = []
  const presented: boolean[] = []
  const outbox = new PostgresPushOutbox(database.db, {
    poster,
    retry: { baseDelayMs: 10 },
    pollMs: 50,
    present: (_agentId, event, converse) => { presented.push(converse); return event },
    log: { warn: (object) => { warnings.push(object as Record<string, unknown>) } }
  })
  t.teardown(() => outbox.close())
  await database.db.transaction().execute(async (trx) => {
    await recordNotifications(trx, { agentId: 'demo', tenant: '', owner: 'demo:o', taskId: 't', configs: [config('a'), config('b')], updates: [{ n: 1 }, { n: 2 }] })
  })
  t.equal(await rows(), 4, 'one row per config and update')
  outbox.start()
  await until(async () => await rows() === 0)
  t.equal(await rows(), 0, 'every row delivered or given up')
  t.strictSame(posted.filter((line) => line.includes('/a ')), [
    'https://h.example/a {"n":1} 36', 'https://h.example/a {"n":1} 36', 'https://h.example/a {"n":2} 36'
  ], 'a\'s first one retried before its second was tried')
  t.strictSame(posted.filter((line) => line.includes('/b ')), ['https://h.example/b {"n":1} 36', 'https://h.example/b {"n":2} 36'])
  t.strictSame(outbox.stats, { delivered: 3, retried: 1, gaveUp: 1 })
  t.match(warnings, [{ taskId: 't', webhookHost: 'h.example', reason: 'HTTP 400', attempts: 1 }])
  t.ok(presented.includes(true) && presented.includes(false), 'presented per config')
})

t.test('closed while claiming: close waits for the claim, and no attempt starts after it (the lease runs out)', async (t) => {
  const posted: string[] = []
  const outbox = new PostgresPushOutbox(database.db, {
    poster: { post: async (target) => { posted.push(target.url); return { kind: 'delivered', status: 200 } }, close: async () => {} },
    pollMs: 50
  })
  await database.db.transaction().execute(async (trx) => {
    await recordNotifications(trx, { agentId: 'demo', tenant: '', owner: 'demo:closing', taskId: 'closing', configs: [config('c')], updates: [{ n: 1 }] })
  })
  outbox.start()
  await outbox.close()
  t.strictSame(posted, [], 'nothing posted by a closed outbox')
  const { rows: left } = await sql<{ claimed: boolean }>`select claimed_until is not null as claimed from ${sql.table(PUSH_OUTBOX_TABLE)} where task_id = 'closing'`.execute(database.db)
  t.strictSame(left, [{ claimed: true }], 'the row stays, leased: any instance claims it once the lease runs out')
  await sql`delete from ${sql.table(PUSH_OUTBOX_TABLE)} where task_id = 'closing'`.execute(database.db)
})

t.test('a notification that cannot be built is given up; a claim that fails is logged and tried again', async (t) => {
  const warnings: string[] = []
  let fail = true
  const outbox = new PostgresPushOutbox(database.db, {
    poster: { post: async () => ({ kind: 'delivered', status: 200 }), close: async () => {} },
    pollMs: 30,
    present: () => { throw new Error('no shape') },
    log: { warn: (_object, message) => { warnings.push(message) } }
  })
  t.teardown(() => outbox.close())
  await recordNotifications(database.db, { agentId: 'demo', tenant: '', owner: 'demo:o', taskId: 'u', configs: [config('c')], updates: [{ n: 1 }] })
  const broken = Object.create(database.db, {
    executeQuery: {
      value: async (...args: unknown[]) => {
        if (fail) throw new Error('connection lost')
        return await (database.db.executeQuery as (...a: unknown[]) => Promise<unknown>)(...args)
      }
    }
  })
  const flaky = new PostgresPushOutbox(broken, { poster: { post: async () => ({ kind: 'delivered', status: 200 }), close: async () => {} }, pollMs: 30, log: { warn: (_object, message) => { warnings.push(message) } } })
  flaky.start()
  await until(() => warnings.some((message) => /claiming/.test(message)))
  t.ok(warnings.some((message) => /claiming notifications failed/.test(message)))
  await flaky.close()
  fail = false
  outbox.start()
  outbox.wake()
  await until(async () => await rows() === 0)
  t.equal(await rows(), 0)
  t.equal(outbox.stats.gaveUp, 1)
  t.ok(warnings.includes('push notification given up'))
  await outbox.close()
  outbox.wake()
  t.pass('closed: wakes do nothing')
})

t.test('the task store records notifications in its save\'s transaction; a refused save records none', async (t) => {
  const { PostgresTaskStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js')
  const { PostgresPushConfigStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js')
  const { ServerCallContext } = await import('@a2a-js/sdk/server')
  const { Task } = await import('@a2a-js/sdk')
  const store = new PostgresTaskStore(database.db, { push: { agentId: 'demo' } })
  const configs = new PostgresPushConfigStore(database.db, { agentId: 'demo' })
  const context = new ServerCallContext()
  const taskId = 'refused-task'
  const task = (state: string) => Task.fromJSON({ id: taskId, contextId: 'c', status: { state } })
  await configs.save(taskId, context, { tenant: '', id: 'c1', taskId: '', url: 'https://h.example/a', token: '', authentication: undefined })
  await store.save(task('TASK_STATE_SUBMITTED'), context)
  await store.save(task('TASK_STATE_COMPLETED'), context)
  t.equal(await rows(), 2, 'two updates recorded (no `recorded` hook given: nothing to wake)')
  t.strictSame(await configs.load(taskId, context), [], 'the finished task\'s configs are gone')
  await configs.save(taskId, context, { tenant: '', id: 'c2', taskId: '', url: 'https://h.example/a', token: '', authentication: undefined })
  await t.rejects(store.save(task('TASK_STATE_WORKING'), context), { name: 'UnsupportedOperationError' }, 'a finished task stays finished')
  t.equal(await rows(), 2, 'nothing recorded for the refused save')
  await sql`delete from ${sql.table(PUSH_OUTBOX_TABLE)}`.execute(database.db)
})

t.test('a save\'s outbox rows are its updates as task-updates.ts tells them; a config not sealed with the current key is re-sealed first', async (t) => {
  const { PostgresTaskStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-task-store.js')
  const { PostgresPushConfigStore } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-push-config-store.js')
  const { SecretBox, currentPrefix } = await import('../../../packages/a2a-converse/src/stores/secret-box.js')
  const { taskUpdates } = await import('../../../packages/a2a-converse/src/push/task-updates.js')
  const { ServerCallContext } = await import('@a2a-js/sdk/server')
  const { Task } = await import('@a2a-js/sdk')
  const { randomBytes } = await import('node:crypto')
  const box = new SecretBox(randomBytes(32))
  let woken = 0
  const store = new PostgresTaskStore(database.db, { push: { agentId: 'demo', secrets: box, recorded: () => { woken++ } } })
  // Written in clear (before a key was given): the save re-seals it, then copies it into its rows.
  const configs = new PostgresPushConfigStore(database.db, { agentId: 'demo' })
  const context = new ServerCallContext()
  const taskId = 'resealed-task'
  const artifact = (id: string, text: string) => ({ artifactId: id, parts: [{ text }] })
  const task = (state: string, artifacts: unknown[]) => Task.fromJSON({ id: taskId, contextId: 'c "q"', status: { state, timestamp: '2026-12-06T10:00:00.000Z' }, artifacts })
  await configs.save(taskId, context, { tenant: '', id: 'k1', taskId: '', url: 'https://h.example/k', token: 't', authentication: undefined })
  const events = async (): Promise<unknown[]> => {
    const { rows } = await sql<{ event: string, target: string }>`select event, target from ${sql.table(PUSH_OUTBOX_TABLE)}
      where task_id = ${taskId} order by seq`.execute(database.db)
    t.ok(rows.every((row) => row.target.startsWith(currentPrefix(box))), 'each target sealed with the current key')
    await sql`delete from ${sql.table(PUSH_OUTBOX_TABLE)} where task_id = ${taskId}`.execute(database.db)
    return rows.map((row) => JSON.parse(row.event))
  }
  const first = task('TASK_STATE_WORKING', [artifact('a1', 'one'), artifact('a2', 'two')])
  await store.save(first, context)
  t.strictSame(await events(), taskUpdates(undefined, first), 'a new task: its status and every artifact')
  const { rows: sealed } = await sql<{ config: string }>`select config from converse_push_configs where task_id = ${taskId}`.execute(database.db)
  t.ok(sealed[0].config.startsWith(currentPrefix(box)), 'the config re-sealed')
  const second = task('TASK_STATE_WORKING', [artifact('a1', 'one'), artifact('a2', 'changed'), artifact('a3', 'new')])
  await store.save(second, context)
  t.strictSame(await events(), taskUpdates(first, second), 'the same status: only the changed and the new artifacts')
  const third = task('TASK_STATE_COMPLETED', second.artifacts)
  await store.save(third, context)
  t.strictSame(await events(), taskUpdates(second, third), 'only the status')
  t.equal(woken, 3, 'the deliverer woken after each save that recorded')
  await t.rejects(store.save(Task.fromJSON({ id: 'refused-by-the-database', contextId: 'c\0', status: { state: 'TASK_STATE_WORKING' } }), context),
    'a save the database refuses rejects with its error')
  // A config sealed, read by a store given no key: refused as the config store refuses it.
  const keyless = new PostgresTaskStore(database.db, { push: { agentId: 'demo' } })
  const sealedConfigs = new PostgresPushConfigStore(database.db, { agentId: 'demo', secrets: box })
  await sealedConfigs.save('keyless-task', context, { tenant: '', id: 'k2', taskId: '', url: 'https://h.example/k', token: 't', authentication: undefined })
  await t.rejects(keyless.save(Task.fromJSON({ id: 'keyless-task', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }), context), { name: 'SealedValueError' })
  t.equal(await keyless.load('keyless-task', context), undefined, 'nothing saved')
})

t.test('sealed targets: opened with the key; one sealed with a key not given stays leased for an instance that has it', async (t) => {
  const { SecretBox } = await import('../../../packages/a2a-converse/src/stores/secret-box.js')
  const { randomBytes } = await import('node:crypto')
  const ours = new SecretBox(randomBytes(32))
  const theirs = new SecretBox(randomBytes(32))
  await recordNotifications(database.db, { agentId: 'demo', tenant: '', owner: 'demo:sealed', taskId: 'x', configs: [config('x')], updates: [{ n: 1 }], secrets: theirs })
  await recordNotifications(database.db, { agentId: 'demo', tenant: '', owner: 'demo:sealed', taskId: 'y', configs: [config('y')], updates: [{ n: 1 }], secrets: ours })
  const { rows: stored } = await sql<{ target: string }>`select target from ${sql.table(PUSH_OUTBOX_TABLE)} where owner = 'demo:sealed'`.execute(database.db)
  t.ok(stored.every((row) => row.target.startsWith('sb1.') && !row.target.includes('h.example')), 'no URL or token in clear')
  const posted: string[] = []
  const warnings: Array<{ object: Record<string, unknown>, message: string }> = []
  const outbox = new PostgresPushOutbox(database.db, {
    poster: { post: async (target) => { posted.push(`${target.url} ${target.token}`); return { kind: 'delivered', status: 200 } }, close: async () => {} },
    pollMs: 30,
    secrets: ours,
    log: { warn: (object, message) => { warnings.push({ object: object as Record<string, unknown>, message }) } }
  })
  t.teardown(() => outbox.close())
  outbox.start()
  await until(() => posted.length === 1 && warnings.length > 0)
  await outbox.close()
  t.strictSame(posted, ['https://h.example/y tok'])
  t.match(warnings[0], { object: { taskId: 'x', reason: /key id/ }, message: /cannot be opened \(SECRETS_KEY, SECRETS_KEY_PREVIOUS\)/ })
  const { rows: left } = await sql<{ task_id: string, leased: boolean }>`select task_id, claimed_until > now() as leased from ${sql.table(PUSH_OUTBOX_TABLE)} where owner = 'demo:sealed'`.execute(database.db)
  t.strictSame(left, [{ task_id: 'x', leased: true }])
  await sql`delete from ${sql.table(PUSH_OUTBOX_TABLE)} where owner = 'demo:sealed'`.execute(database.db)
})
