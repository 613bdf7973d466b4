/**
 * /metrics on STATE=postgres: the connection pool's counts read at each scrape, and push deliveries made from the
 * outbox counted by outcome (a real webhook receiver on loopback).
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { gateway, URI } from '../fixtures/conversation-gateway.js'
import { parsePrometheus, valueOf } from '../fixtures/prometheus-text.js'
import { testSchema } from '../fixtures/test-schema.js'
import { webhookReceiver } from '../fixtures/webhook-receiver.js'

const url = process.env.TEST_DATABASE_URL
const TOKEN = 'metrics-token-0123456789'
const P = 'a2a_converse_'

if (url === undefined) {
  t.test('metrics on PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const schema = testSchema(t, url)
  t.test('the pool\'s connections and the outbox\'s deliveries', async (t) => {
    const receiver = await webhookReceiver(t)
    const app = await gateway(t, {
      env: { DATABASE_URL: url, DATABASE_SCHEMA: schema, METRICS_TOKEN: TOKEN, PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true' }
    })
    const sent = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] }, configuration: { taskPushNotificationConfig: { url: receiver.url } } }
      })
    })
    t.equal(sent.json().result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
    await receiver.waitFor(1)
    // The outbox quiet: nothing more for longer than its poll (1 s), so the close below finds no claim under way.
    let seen = -1
    while (seen !== receiver.received.length) {
      seen = receiver.received.length
      await new Promise((resolve) => setTimeout(resolve, 1500))
    }
    const samples = parsePrometheus((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body)
    t.equal(valueOf(samples, `${P}push_deliveries_total`, { outcome: 'delivered' }), receiver.received.length, 'each delivery the receiver got')
    const total = valueOf(samples, `${P}pg_pool_connections`, { state: 'total' })
    t.ok(total >= 1, `the pool holds connections (${total})`)
    t.ok(valueOf(samples, `${P}pg_pool_connections`, { state: 'idle' }) <= total)
    t.equal(valueOf(samples, `${P}pg_pool_connections`, { state: 'waiting' }), 0)
  })
}
