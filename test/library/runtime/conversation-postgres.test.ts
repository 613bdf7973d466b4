/**
 * The conversation flows on PostgreSQL (DATABASE_URL: SDK task store, conversation store, LISTEN/NOTIFY event hub),
 * when TEST_DATABASE_URL is set: routines by taskId and by contextId, a typed call, takeover with a person's reply
 * pushed to a stream, release, and parallel messages with a real database's latency.
 */
import t, { type Test } from 'tap'
import { Client, envelopeOf, envelopesIn, gateway, operator, statusEnvelope, statusMessageOf, stream, textOf } from '../../fixtures/conversation-gateway.js'
import { testSchema } from '../../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('conversation flows on PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const onPostgres = (t: Test) => gateway(t, { env: { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) } })

  t.test('routines: by taskId, by contextId (the task left is CANCELED), a typed call, approval', async (t) => {
    const client = new Client(t, await onPostgres(t))
    const first = await client.task("I'd like to book a table")
    t.equal(statusEnvelope(t, first).routine?.status, 'waiting_for_input')
    const second = await client.task('date=2026-12-24', { taskId: first.id })
    t.equal(second.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const done = await client.task('partySize=4', { contextId: first.contextId })
    t.equal(done.status.state, 'TASK_STATE_COMPLETED')
    t.strictSame(done.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 4 })
    const left = await client.getTask(first.id)
    t.equal(left.status.state, 'TASK_STATE_CANCELED')
    t.equal(textOf(left.status.message), `Continued in task ${done.id}.`)

    const refund = await client.task('', { call: { toolName: 'request_refund', arguments: { orderId: 'P-1' } } })
    t.strictSame(statusEnvelope(t, refund).invocation, { toolName: 'request_refund', outcome: 'started' })
    t.equal(statusEnvelope(t, refund).routine?.status, 'waiting_for_approval')
    const approved = await client.task('yes', { taskId: refund.id })
    t.equal(approved.status.state, 'TASK_STATE_COMPLETED')
  })

  t.test('a task closed on one instance ends a SubscribeToTask stream open on another', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    const a = await gateway(t, { env })
    const b = await gateway(t, { env })
    const baseA = await a.listen({ port: 0, host: '127.0.0.1' })
    const first = await new Client(t, a).task("I'd like to book a table")
    t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const subscriber = stream(baseA, 'SubscribeToTask', { id: first.id })
    t.teardown(() => subscriber.close())
    await subscriber.next((event) => event.result?.task !== undefined)
    const done = await new Client(t, b).task('date=2026-12-24, partySize=4', { contextId: first.contextId })
    t.equal(done.status.state, 'TASK_STATE_COMPLETED')
    const closed = await subscriber.next((event) => event.result?.statusUpdate !== undefined)
    t.equal(closed.result.statusUpdate.status.state, 'TASK_STATE_CANCELED')
    t.equal(textOf(closed.result.statusUpdate.status.message), `Continued in task ${done.id}.`)
    await subscriber.done
  })

  t.test('takeover → suppressed turn → reply pushed to SubscribeToTask → release', async (t) => {
    const app = await onPostgres(t)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = new Client(t, app)
    const first = await client.send('What are your opening hours?')
    const contextId = first.message.contextId
    t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).json().ownership, 'human_owned')
    const held = await client.task('Can a person help?', { contextId })
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    t.strictSame(statusEnvelope(t, held).ownership, { state: 'human_owned', suppressed: true })

    const subscriber = stream(base, 'SubscribeToTask', { id: held.id })
    await subscriber.next((event) => event.result?.task !== undefined)
    const reply = (await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Yes, I can.' })).json()
    t.equal(reply.taskId, held.id)
    const pushed = statusMessageOf(await subscriber.next((event) => textOf(statusMessageOf(event)) === 'Yes, I can.'))
    t.equal(pushed.role, 'ROLE_AGENT')
    t.equal(envelopeOf(t, pushed).author, 'human')
    const stored = await client.getTask(held.id)
    t.equal(stored.status.message.messageId, reply.message.messageId)

    await operator(app, 'POST', `demo/conversations/${contextId}/release`)
    await subscriber.next((event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED')
    await subscriber.done
    envelopesIn(t, subscriber.events)
    t.equal((await client.getTask(held.id)).status.state, 'TASK_STATE_COMPLETED')
    const again = await client.send('What are your opening hours?', { contextId })
    t.strictSame(envelopeOf(t, again.message).ownership, { state: 'ai_owned', suppressed: false })
  })

  t.test('20 parallel messages with the contextId only: no lost turn, one open task', async (t) => {
    const app = await onPostgres(t)
    const client = new Client(t, app)
    const first = await client.task('book a table')
    const tasks = await Promise.all(Array.from({ length: 20 }, (_, index) => client.task(`notes=note ${index}`, { contextId: first.contextId })))
    const view = (await operator(app, 'GET', `demo/conversations/${first.contextId}`)).json()
    t.equal(view.routine.status, 'waiting_for_input')
    // A close whose old task was not stored by the bound (a loaded machine) follows the turn's answer: wait for it.
    let all = await Promise.all([first, ...tasks].map((task) => client.getTask(task.id)))
    for (let i = 0; i < 200 && all.filter((task) => task.status.state === 'TASK_STATE_INPUT_REQUIRED').length > 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      all = await Promise.all([first, ...tasks].map((task) => client.getTask(task.id)))
    }
    const open = all.filter((task) => task.status.state === 'TASK_STATE_INPUT_REQUIRED')
    t.equal(open.length, 1, 'exactly one task waits for input')
    t.equal(all.filter((task) => task.status.state === 'TASK_STATE_CANCELED').length, 20)
    t.equal(view.turns.at(-1).taskId, open[0].id, 'the last turn\'s task is the open one')
  })
}
