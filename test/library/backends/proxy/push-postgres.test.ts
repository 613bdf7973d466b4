/**
 * Push notifications for a proxied agent (test/library/backends/proxy/push-cases.ts) on a PostgreSQL server: the outbox; and two
 * instances on one database, where the copy made on one is saved from a turn relayed by the other.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { ALICE_KEY, API_KEYS } from '../../../fixtures/auth.js'
import { startGateway } from '../../../fixtures/gateway-helpers.js'
import { testSchema } from '../../../fixtures/test-schema.js'
import { startUpstream } from '../../../fixtures/upstream-agent.js'
import { webhookReceiver } from '../../../fixtures/webhook-receiver.js'
import { proxyPushCases } from './push-cases.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  proxyPushCases(t, async (t) => ({ DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }))

  t.test('two instances: a config made on one, the update relayed by the other, delivered once', async (t) => {
    const receiver = await webhookReceiver(t)
    const upstream = await startUpstream()
    t.teardown(() => upstream.close())
    const env = {
      A2A_API_KEYS: API_KEYS, PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url)
    }
    const agents = [{ id: 'shop', upstream: { url: upstream.base } }]
    const first = await startGateway(t, env, { agents })
    const second = await startGateway(t, env, { agents })
    const rpc = async (base: string, method: string, params: Record<string, unknown>) => await (await fetch(`${base}/a2a/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${ALICE_KEY}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
    })).json() as Record<string, any>
    const message = (text: string, extra = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra })
    const asked = (await rpc(first.base, 'SendMessage', { message: message('ask me') })).result.task
    t.equal((await rpc(first.base, 'CreateTaskPushNotificationConfig', { taskId: asked.id, url: receiver.url })).error, undefined)
    t.equal((await rpc(second.base, 'ListTaskPushNotificationConfigs', { taskId: asked.id })).result.configs.length, 1, 'the other instance sees the config')
    const done = await rpc(second.base, 'SendMessage', { message: message('small', { taskId: asked.id }) })
    t.equal(done.result.task.status.state, 'TASK_STATE_COMPLETED')
    await receiver.waitFor(1)
    await new Promise((resolve) => setTimeout(resolve, 500))
    t.equal(receiver.received.length, 1, 'delivered once')
    t.equal(receiver.received[0].body.statusUpdate.status.state, 'TASK_STATE_COMPLETED')
  })
}
