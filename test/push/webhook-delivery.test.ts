/**
 * Push notifications delivered to a real webhook receiver (Fastify on loopback; PUSH_ALLOWED_HOSTS=127.0.0.1 and
 * PUSH_ALLOW_HTTP=true, as the receivers are plain http on this host): the routine and human takeover story in
 * order with the config's Authorization, retries, refusals, redirects, a receiver down then back.
 */
import t from 'tap'
import { Client, envelopeOf, gateway, operator, textOf } from '../fixtures/conversation-gateway.js'
import { webhookReceiver } from '../fixtures/webhook-receiver.js'

const LOOPBACK = { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', PUSH_RETRY_BASE_MS: '20', PUSH_RETRY_MAX_DELAY_MS: '200' }

function stateOf (body: any): string | undefined {
  return body.statusUpdate?.status?.state
}

t.test('routine and human takeover: every update delivered in order, with the Authorization and the token', async (t) => {
  const receiver = await webhookReceiver(t)
  const app = await gateway(t, { env: LOOPBACK })
  const client = new Client(t, app)
  const routine = await client.task('book a table')
  t.equal(routine.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the routine waits for input')
  const created = await client.call('CreateTaskPushNotificationConfig', {
    taskId: routine.id, url: receiver.url, token: 'routine-token', authentication: { scheme: 'Bearer', credentials: 'hook-secret' }
  })
  t.equal(created.error, undefined)
  t.match(created.result, { taskId: routine.id, url: receiver.url, token: 'routine-token', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } })
  t.type(created.result.id, 'string')

  const contextId = routine.contextId
  t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)
  const held = await client.task('Can a person help me?', { taskId: routine.id })
  t.equal(held.status.state, 'TASK_STATE_WORKING', 'the turn waits for a person')
  const replied = await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Hello, this is Sam.' })
  t.equal(replied.statusCode, 201)
  t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/release`)).statusCode, 200)

  const received = await receiver.waitFor(3)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const states = receiver.received.map((entry) => stateOf(entry.body))
  t.strictSame(states, ['TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'], 'suppressed turn, the reply, the release')
  for (const entry of received) {
    t.equal(entry.headers['content-type'], 'application/a2a+json')
    t.equal(entry.headers.authorization, 'Bearer hook-secret')
    t.equal(entry.headers['x-a2a-notification-token'], 'routine-token')
    t.match(entry.headers['a2a-notification-id'], /^[0-9a-f-]{36}$/)
    t.equal(entry.body.statusUpdate.taskId, routine.id)
    t.equal(entry.body.statusUpdate.contextId, contextId)
  }
  const human = receiver.received[1].body.statusUpdate.status.message
  t.equal(textOf(human), 'Hello, this is Sam.')
  t.equal(envelopeOf(t, human).author, 'human', 'the config was created with the extension active: the envelope comes along')
  t.equal(new Set(receiver.received.map((entry) => entry.headers['a2a-notification-id'])).size, 3, 'one id per notification')
})
