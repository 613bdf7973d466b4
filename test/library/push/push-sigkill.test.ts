/**
 * The outbox's guarantee across instances: two gateway processes on one PostgreSQL schema; the one delivering is
 * SIGKILLed after the task update committed, while its POST is in flight. The survivor delivers the notification
 * (the same A2A-Notification-Id) once the dead one's lease runs out: none lost.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startMain } from '../../fixtures/gateway-process.js'
import { testSchema } from '../../fixtures/test-schema.js'
import { webhookReceiver } from '../../fixtures/webhook-receiver.js'

const url = process.env.TEST_DATABASE_URL

async function rpc (base: string, method: string, params: unknown): Promise<any> {
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  })
  return await response.json()
}

if (url === undefined) {
  t.test('SIGKILL between commit and delivery', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.setTimeout(180_000)
  t.test('SIGKILL between commit and delivery: the survivor delivers, none lost', async (t) => {
    const receiver = await webhookReceiver(t)
    let hang = true
    receiver.answer = async (_request, reply) => {
      if (hang) return await new Promise(() => {})
      return await reply.code(200).send({ ok: true })
    }
    const env = {
      DATABASE_URL: url,
      DATABASE_SCHEMA: testSchema(t, url),
      LOG_LEVEL: 'info',
      PUSH_ALLOWED_HOSTS: '127.0.0.1',
      PUSH_ALLOW_HTTP: 'true',
      PUSH_TIMEOUT_MS: '1000',
      PUSH_RETRY_BASE_MS: '50'
    }
    const a = startMain(t, env)
    const baseA = await a.listening()
    const b = startMain(t, env)
    await b.listening()
    const task = (await rpc(baseA, 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', contextId: randomUUID(), parts: [{ text: 'book a table' }] } })).result.task
    t.equal((await rpc(baseA, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: receiver.url })).result.taskId, task.id)
    b.kill('SIGSTOP')
    const canceled = (await rpc(baseA, 'CancelTask', { id: task.id })).result
    t.equal(canceled.status.state, 'TASK_STATE_CANCELED', 'the update committed')
    const [inFlight] = await receiver.waitFor(1)
    t.equal(inFlight.body.statusUpdate.status.state, 'TASK_STATE_CANCELED', 'instance A is posting it')
    a.kill('SIGKILL')
    await a.exited
    hang = false
    b.kill('SIGCONT')
    const [, delivered] = await receiver.waitFor(2, 30_000)
    t.equal(delivered.headers['a2a-notification-id'], inFlight.headers['a2a-notification-id'], 'the same notification, from the survivor')
    t.strictSame(delivered.body, inFlight.body)
    await new Promise((resolve) => setTimeout(resolve, 2000))
    t.equal(receiver.received.length, 2, 'delivered once (answered 200) after the one cut short')
  })
}
