/**
 * Human takeover through the gateway: takeover → a suppressed turn → a person's reply seen by streaming clients and
 * in GetTask → release. Streams run over a real listening server.
 */
import t from 'tap'
import {
  Client, envelopeOf, envelopesIn, gateway, operator, statusEnvelope, statusMessageOf, stream, textOf
} from '../../fixtures/conversation-gateway.js'

const SUPPRESSED = { state: 'human_owned', suppressed: false }

t.test('takeover → suppressed turn → a reply seen by SubscribeToTask and in GetTask → release', async (t) => {
  const app = await gateway(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client(t, app)

  const first = await client.send('What are your opening hours?')
  const contextId = first.message.contextId
  t.strictSame(envelopeOf(t, first.message).ownership, { state: 'ai_owned', suppressed: false })

  const taken = await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  t.equal(taken.statusCode, 200)
  t.equal(taken.json().ownership, 'human_owned')

  const held = await client.task('Is anyone there?', { contextId })
  t.equal(held.status.state, 'TASK_STATE_WORKING', 'the turn waits for a person')
  t.strictSame(held.status.message.parts, [{ data: { ownership: 'human_owned', suppressed: true }, mediaType: 'application/json' }])
  t.equal(textOf(held.status.message), '', 'no generated answer text')
  const suppressed = statusEnvelope(t, held)
  t.strictSame(suppressed.ownership, { state: 'human_owned', suppressed: true })
  t.equal(suppressed.answerCoverage.availability, 'not_recorded')
  t.equal(suppressed.routine, undefined)

  const subscriber = stream(base, 'SubscribeToTask', { id: held.id })
  const snapshot = await subscriber.next((event) => event.result?.task !== undefined)
  t.equal(snapshot.result.task.status.state, 'TASK_STATE_WORKING')
  t.equal(subscriber.response?.headers.get('content-type'), 'text/event-stream')

  const replied = await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Hello, this is Sam from the shop.' })
  t.equal(replied.statusCode, 201)
  const reply = replied.json()
  t.equal(reply.taskId, held.id)
  t.equal(reply.delivered, true)
  t.equal(reply.message.role, 'ROLE_AGENT')
  t.equal(reply.message.metadata[Object.keys(reply.message.metadata)[0]].author, 'human')

  const pushed = statusMessageOf(await subscriber.next((event) => textOf(statusMessageOf(event)) === 'Hello, this is Sam from the shop.'))
  t.equal(pushed.role, 'ROLE_AGENT')
  const human = envelopeOf(t, pushed)
  t.equal(human.author, 'human')
  t.strictSame(human.ownership, SUPPRESSED)
  t.equal(pushed.messageId, reply.message.messageId)

  const stored = await client.getTask(held.id)
  t.equal(stored.status.state, 'TASK_STATE_WORKING')
  t.equal(stored.status.message.messageId, reply.message.messageId, 'the reply is the status message')
  const inHistory = stored.history.find((message: any) => message.messageId === reply.message.messageId)
  t.equal(inHistory?.role, 'ROLE_AGENT')
  t.equal(envelopeOf(t, inHistory).author, 'human')

  const view = await operator(app, 'GET', `demo/conversations/${contextId}`)
  t.strictSame(view.json().turns.map((turn: any) => turn.role), ['user', 'agent', 'user', 'human'])

  const released = await operator(app, 'POST', `demo/conversations/${contextId}/release`)
  t.equal(released.statusCode, 200)
  t.equal(released.json().ownership, 'ai_owned')
  const ended = await subscriber.next((event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED')
  t.equal(envelopeOf(t, statusMessageOf(ended)).author, 'agent')
  await subscriber.done
  envelopesIn(t, subscriber.events)

  const completed = await client.getTask(held.id)
  t.equal(completed.status.state, 'TASK_STATE_COMPLETED', 'release completes the held task')
  t.strictSame(statusEnvelope(t, completed).ownership, { state: 'ai_owned', suppressed: false })

  const answered = await client.send('What are your opening hours?', { contextId })
  t.ok(answered.message, 'the agent answers again')
  const envelope = envelopeOf(t, answered.message)
  t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
  t.equal(envelope.author, 'agent')
  t.ok(textOf(answered.message).length > 0)
})

t.test('SendStreamingMessage while human-owned: the stream stays open, gets the reply, and ends on release', async (t) => {
  const app = await gateway(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client(t, app)
  const first = await client.task('book a table')
  const contextId = first.contextId
  t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)

  const live = stream(base, 'SendStreamingMessage', {
    message: { messageId: 'streamed-1', role: 'ROLE_USER', contextId, parts: [{ text: 'Can a person help me?' }] }
  })
  const working = await live.next((event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
  const taskId = working.result.statusUpdate.taskId
  t.not(taskId, first.id, 'a message with the contextId only: a new task')
  t.strictSame(envelopeOf(t, statusMessageOf(working)).ownership, { state: 'human_owned', suppressed: true })

  const left = await client.getTask(first.id)
  t.equal(left.status.state, 'TASK_STATE_CANCELED', 'the routine task it left is closed')
  t.equal(textOf(left.status.message), `Continued in task ${taskId}.`)

  const replied = (await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Sure, which date?' })).json()
  t.equal(replied.taskId, taskId)
  const pushed = statusMessageOf(await live.next((event) => textOf(statusMessageOf(event)) === 'Sure, which date?'))
  t.equal(pushed.role, 'ROLE_AGENT')
  t.equal(envelopeOf(t, pushed).author, 'human')

  const view = (await operator(app, 'GET', `demo/conversations/${contextId}`)).json()
  t.equal(view.ownership, 'human_owned')
  t.equal(view.routine.status, 'waiting_for_input', 'the routine waits, untouched by the suppressed turn')

  await operator(app, 'POST', `demo/conversations/${contextId}/release`)
  await live.done
  const states = live.events.map((event) => event.result.task?.status.state ?? event.result.statusUpdate?.status.state)
  t.strictSame(states, ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'])
  envelopesIn(t, live.events)

  const after = await client.task('date=2026-12-24, partySize=2', { contextId })
  t.equal(after.status.state, 'TASK_STATE_COMPLETED', 'the routine continues with the agent')
  t.strictSame(statusEnvelope(t, after).ownership, { state: 'ai_owned', suppressed: false })
})

t.test('a second client message while held moves the conversation to its new task; the reply goes there', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const first = await client.send('hello')
  const contextId = first.message.contextId
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const one = await client.task('first question', { contextId })
  const same = await client.task('more on it', { taskId: one.id })
  t.equal(same.id, one.id)
  t.equal(same.status.state, 'TASK_STATE_WORKING')
  const two = await client.task('second question', { contextId })
  t.not(two.id, one.id)
  const closed = await client.getTask(one.id)
  t.equal(closed.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(closed.status.message), `Continued in task ${two.id}.`)

  const reply = (await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Answering both.' })).json()
  t.equal(reply.taskId, two.id)
  await operator(app, 'POST', `demo/conversations/${contextId}/release`)
  t.equal((await client.getTask(two.id)).status.state, 'TASK_STATE_COMPLETED')
  t.equal((await client.getTask(one.id)).status.state, 'TASK_STATE_CANCELED')
})

t.test('a reply while no task is held waits and goes into the next turn\'s task', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const first = await client.send('hello')
  const contextId = first.message.contextId
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const early = await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Hi, I am here if you need me.' })
  t.equal(early.statusCode, 201)
  t.equal(early.json().delivered, false)
  t.equal(early.json().taskId, undefined)

  const held = await client.task('Thanks!', { contextId })
  t.equal(held.status.state, 'TASK_STATE_WORKING')
  t.strictSame(statusEnvelope(t, held).ownership, { state: 'human_owned', suppressed: true }, 'the status is the suppressed turn')
  const delivered = held.history.filter((message: any) => textOf(message) === 'Hi, I am here if you need me.')
  t.equal(delivered.length, 1, 'the waiting reply is in the task')
  t.equal(envelopeOf(t, delivered[0]).author, 'human')
  t.equal(delivered[0].role, 'ROLE_AGENT')

  const again = await client.task('Still there?', { taskId: held.id })
  t.equal(again.history.filter((message: any) => textOf(message) === 'Hi, I am here if you need me.').length, 1, 'delivered once')
})

t.test('replies nobody received are dropped from the inbox on release; takeover twice is harmless', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const first = await client.send('hello')
  const contextId = first.message.contextId
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const twice = await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  t.equal(twice.json().ownership, 'human_owned')
  await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Anyone?' })
  await operator(app, 'POST', `demo/conversations/${contextId}/release`)
  const view = (await operator(app, 'GET', `demo/conversations/${contextId}`)).json()
  t.equal(view.turns.at(-1).role, 'human', 'the reply stays in the turns')
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const held = await client.task('back again', { contextId })
  t.notOk(JSON.stringify(held.history).includes('Anyone?'), 'not delivered after a release')
})

t.test('every agent reply outside takeover is ai_owned, not suppressed, author agent', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const replies = [
    await client.send('What is your warranty?'),
    await client.send('book a table'),
    await client.send('', { call: { toolName: 'request_refund', arguments: { orderId: 'Q-1' } } }),
    await client.send('', { call: { toolName: 'nope' } })
  ]
  const envelopes = replies.flatMap((reply) => envelopesIn(t, reply))
  t.ok(envelopes.length >= 4)
  for (const envelope of envelopes) {
    t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
    t.equal(envelope.author, 'agent')
  }
})
