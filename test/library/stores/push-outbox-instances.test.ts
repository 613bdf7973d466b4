/**
 * The push outbox with several instances on one PostgreSQL server (issue 41's mutation audit: without
 * `FOR UPDATE SKIP LOCKED` in the claim, four outboxes delivered 90–143 of 300 notifications twice, and no test
 * noticed). Four outboxes, each with a pool of its own, claim 300 due notifications at once and post them to a
 * real webhook receiver: each is delivered exactly once, and the outbox is empty after.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { sql } from 'kysely'
import { webhookReceiver } from '../../fixtures/webhook-receiver.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('push outbox, several instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const { createPostgresDatabase } = await import('../../../packages/a2a-converse/src/stores/postgres/postgres-database.js')
  const { migrate, PUSH_OUTBOX_TABLE } = await import('../../../packages/a2a-converse/src/stores/postgres/migrations.js')
  const { PostgresPushOutbox } = await import('../../../packages/a2a-converse/src/stores/postgres/push-outbox.js')
  const { recordNotifications } = await import('../../fixtures/push-outbox-rows.js')
  const { webhookPoster } = await import('../../../packages/a2a-converse/src/push/webhook-post.js')
  const { PushUrlPolicy } = await import('../../../packages/a2a-converse/src/push/url-guard.js')
  const { SecretBox } = await import('../../../packages/a2a-converse/src/stores/secret-box.js')

  t.setTimeout(180_000)
  const schema = `a2a_outbox_${process.pid}_${randomBytes(4).toString('hex')}`
  const logger = { warn () {} }
  const databases = Array.from({ length: 4 }, () => createPostgresDatabase({ connectionString: url, schema, logger }))
  t.teardown(async () => {
    for (const database of databases) await database.close()
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  await migrate(databases[0].db, { schema })

  t.test('four instances claiming at once: each of 300 notifications delivered exactly once', async (t) => {
    const receiver = await webhookReceiver(t)
    const secrets = new SecretBox(randomBytes(32))
    const count = 300
    await databases[0].db.transaction().execute(async (trx) => {
      for (let n = 0; n < count; n++) {
        await recordNotifications(trx, {
          agentId: 'demo',
          tenant: '',
          owner: 'demo:o',
          taskId: `task-${n}`,
          configs: [{ config: { tenant: '', id: 'c', taskId: `task-${n}`, url: receiver.url, token: 'tok', authentication: undefined }, converse: false }],
          updates: [{ n }],
          secrets
        })
      }
    })
    const poster = webhookPoster(new PushUrlPolicy({ allowedHosts: ['127.0.0.1'], allowHttp: true }), { timeoutMs: 10_000 })
    t.teardown(async () => await poster.close())
    // Small batches: every instance claims many times while the others do.
    const outboxes = databases.map((database) => new PostgresPushOutbox(database.db, { poster, secrets, maxInFlight: 8, pollMs: 50 }))
    for (const outbox of outboxes) outbox.start()
    t.teardown(async () => { for (const outbox of outboxes) await outbox.close() })

    await receiver.waitFor(count, 120_000)
    // Until every row is gone (a duplicate claim would post again before its row is deleted).
    for (let left = 1; left > 0;) {
      const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(PUSH_OUTBOX_TABLE)}`.execute(databases[0].db)
      left = Number(rows[0].n)
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    for (const outbox of outboxes) await outbox.close()
    const ids = receiver.received.map((entry) => entry.headers['a2a-notification-id'])
    const tasks = receiver.received.map((entry) => entry.body.statusUpdate?.taskId ?? entry.body.n)
    t.equal(receiver.received.length, count, `${receiver.received.length} POSTs for ${count} notifications`)
    t.equal(new Set(ids).size, count, 'every notification id once')
    t.equal(new Set(tasks).size, count, 'every task\'s update once')
    t.equal(outboxes.reduce((sum, outbox) => sum + outbox.stats.delivered, 0), count, 'delivered counted once')
    t.ok(outboxes.filter((outbox) => outbox.stats.delivered > 0).length > 1, 'more than one instance delivered')
  })
}
