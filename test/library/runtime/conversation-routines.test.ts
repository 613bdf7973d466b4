/** Routines through the gateway's A2A endpoint: slots, approval, abandon, continuation by taskId or contextId. */
import t from 'tap'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { Client, envelopeOf, gateway, statusEnvelope, stream, textOf } from '../../fixtures/conversation-gateway.js'

const BOOK_PENDING = [
  { key: 'date', type: 'string', required: true, description: 'The date of the booking, e.g. 2026-12-24.' },
  { key: 'partySize', type: 'integer', required: true, description: 'How many people the table is for.' },
  { key: 'notes', type: 'string', required: false, description: 'Anything we should know (a high chair, a window seat).' }
]

t.test('book a table by taskId in two turns', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task("I'd like to book a table")
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(first.status.message.role, 'ROLE_AGENT')
  t.match(textOf(first.status.message), /Which date, and for how many people\?/)
  const asking = statusEnvelope(t, first)
  t.strictSame(asking.routine, { toolName: 'book_table', name: 'Book a table', status: 'waiting_for_input', pendingInput: BOOK_PENDING })
  t.strictSame(asking.ownership, { state: 'ai_owned', suppressed: false })
  t.equal(asking.author, 'agent')
  t.equal(asking.answerCoverage.originatingRequestId, first.history[0].messageId)

  const done = await client.task('date=2026-12-24, partySize=4', { taskId: first.id, contextId: first.contextId })
  t.equal(done.id, first.id, 'the same task')
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  const completed = statusEnvelope(t, done)
  t.strictSame(completed.routine, { toolName: 'book_table', name: 'Book a table', status: 'completed', pendingInput: [] })
  t.equal(done.artifacts.length, 1)
  const [artifact] = done.artifacts
  t.equal(artifact.name, 'Book a table confirmation')
  t.match(artifact.parts[0], {
    data: { routine: 'Book a table', toolName: 'book_table', confirmationId: String, values: { date: '2026-12-24', partySize: 4 } },
    mediaType: 'application/json'
  })
  t.equal(artifact.parts[1].text, textOf(done.status.message), 'a text part too')
  t.strictSame(envelopeOf(t, artifact).routine, completed.routine, 'the artifact carries the envelope')

  const stored = await client.getTask(first.id)
  t.equal(stored.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(stored.history.map((m: any) => m.role),
    ['ROLE_USER', 'ROLE_AGENT', 'ROLE_USER', 'ROLE_AGENT'], 'both turns in the history')
})

t.test('book by contextId only, in one turn of key=value pairs: the task it left ends CANCELED', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('Can I reserve a table?')
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const done = await client.task('date=2026-12-31\npartySize=2\nnotes=window seat', { contextId: first.contextId })
  t.not(done.id, first.id, 'a new task')
  t.equal(done.contextId, first.contextId)
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.match(done.artifacts[0].parts[0].data.values, { date: '2026-12-31', partySize: 2, notes: 'window seat' })
  t.equal(statusEnvelope(t, done).routine?.status, 'completed')

  const left = await client.getTask(first.id)
  t.equal(left.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(left.status.message), `Continued in task ${done.id}.`)
  t.strictSame(left.status.message.referenceTaskIds, [done.id])
  t.equal(left.history.at(-1).messageId, left.status.message.messageId, 'the note is in its history too')
  t.strictSame(statusEnvelope(t, left).ownership, { state: 'ai_owned', suppressed: false })
})

t.test('a SubscribeToTask stream on the task the conversation left is told it ended, and ends', async (t) => {
  const app = await gateway(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client(t, app)
  const first = await client.task('Can I reserve a table?')
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const subscriber = stream(base, 'SubscribeToTask', { id: first.id })
  t.teardown(() => subscriber.close())
  await subscriber.next((event) => event.result?.task !== undefined)

  const done = await client.task('date=2026-12-31, partySize=2', { contextId: first.contextId })
  const closed = await subscriber.next((event) => event.result?.statusUpdate !== undefined)
  t.equal(closed.result.statusUpdate.taskId, first.id)
  t.equal(closed.result.statusUpdate.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(closed.result.statusUpdate.status.message), `Continued in task ${done.id}.`)
  t.strictSame(statusEnvelope(t, { status: closed.result.statusUpdate.status }).ownership, { state: 'ai_owned', suppressed: false },
    'decorated like every status message')
  await subscriber.done
  t.equal(subscriber.events.length, 2, 'the snapshot, the close, then the end of the stream')
})

t.test('pairs in the opening sentence fill slots at once', async (t) => {
  const client = new Client(t, await gateway(t))
  const task = await client.task('book a table, date: 2026-12-24, partySize: 3')
  t.equal(task.status.state, 'TASK_STATE_COMPLETED')
  t.match(task.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 3 })
  const introduced = await client.task('book a table: date=2026-12-25, party size=2')
  t.equal(introduced.status.state, 'TASK_STATE_COMPLETED', 'the trigger phrase may introduce the pairs with a colon')
  t.match(introduced.artifacts[0].parts[0].data.values, { date: '2026-12-25', partySize: 2 })
})

t.test('an invalid opening value is reported and its slot stays pending', async (t) => {
  const client = new Client(t, await gateway(t))
  const task = await client.task('book a table, date: 2026-12-24, partySize: lots')
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.match(textOf(task.status.message), /partySize must be an integer \(got "lots"\)/)
  t.strictSame(statusEnvelope(t, task).routine?.pendingInput.map((slot) => slot.key), ['partySize', 'notes'])
})

t.test('an invalid value keeps the slot pending and the reply says why; then plain text fills the one required slot', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table')
  const invalid = await client.task('date=2026-12-24, partySize=four', { taskId: first.id })
  t.equal(invalid.status.state, 'TASK_STATE_INPUT_REQUIRED', 'no completion')
  t.match(textOf(invalid.status.message), /partySize must be an integer \(got "four"\)/)
  const envelope = statusEnvelope(t, invalid)
  t.equal(envelope.routine?.status, 'waiting_for_input')
  t.strictSame(envelope.routine?.pendingInput, BOOK_PENDING.slice(1), 'date accepted, partySize still pending, notes offered')

  const unreadable = await client.task('', { taskId: first.id, parts: [{ url: 'https://example.com/x.png', mediaType: 'image/png' }] })
  t.equal(unreadable.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.match(textOf(unreadable.status.message), /couldn't read a value/)

  const done = await client.task('6', { taskId: first.id })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'plain text: exactly one required slot was pending')
  t.match(done.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 6 })
})

t.test('a data part of slot values', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('table reservation please')
  const done = await client.task(undefined, { taskId: first.id, parts: [{ data: { date: '2027-01-02', partySize: '5', notes: 'high chair' } }] })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(done.artifacts[0].parts[0].data.values, { date: '2027-01-02', partySize: 5, notes: 'high chair' }, 'coerced')
})

t.test('approval: request_refund waits for approval; yes completes', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('I want a refund')
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.strictSame(statusEnvelope(t, first).routine, {
    toolName: 'request_refund',
    name: 'Request a refund',
    status: 'waiting_for_input',
    pendingInput: [
      { key: 'orderId', type: 'string', required: true, description: 'The order number, e.g. A-1042.' },
      { key: 'reason', type: 'string', required: false, description: 'Why you want the refund.' }
    ]
  })
  const asking = await client.task('orderId: A-1042, reason: broken', { taskId: first.id })
  t.equal(asking.status.state, 'TASK_STATE_INPUT_REQUIRED', 'approval is input too')
  t.match(textOf(asking.status.message), /Shall I submit the refund request\? Answer yes or no\./)
  t.strictSame(statusEnvelope(t, asking).routine, {
    toolName: 'request_refund', name: 'Request a refund', status: 'waiting_for_approval', pendingInput: []
  })
  const done = await client.task('yes', { taskId: first.id })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.equal(statusEnvelope(t, done).routine?.status, 'completed')
  t.match(done.artifacts[0].parts[0].data, { toolName: 'request_refund', values: { orderId: 'A-1042', reason: 'broken' } })
})

t.test('approval: no abandons the routine and cancels the task', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('refund my order A-77 please')
  const asking = await client.task('A-77', { taskId: first.id })
  t.equal(statusEnvelope(t, asking).routine?.status, 'waiting_for_approval')
  const declined = await client.task('no', { taskId: first.id })
  t.equal(declined.status.state, 'TASK_STATE_CANCELED')
  t.strictSame(statusEnvelope(t, declined).routine, {
    toolName: 'request_refund', name: 'Request a refund', status: 'abandoned', pendingInput: []
  })
  t.same(declined.artifacts ?? [], [], 'no confirmation')
})

t.test('"cancel" abandons: TASK_STATE_CANCELED; the task is closed; the context starts fresh', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table')
  const canceled = await client.task('cancel', { taskId: first.id })
  t.equal(canceled.status.state, 'TASK_STATE_CANCELED')
  t.equal(statusEnvelope(t, canceled).routine?.status, 'abandoned')

  const again = await client.call('SendMessage', { message: { messageId: 'late', role: 'ROLE_USER', taskId: first.id, parts: [{ text: '4' }] } })
  t.equal(again.error?.code, -32004, 'a message to a canceled task')

  const fresh = await client.send('What are your opening hours?', { contextId: first.contextId })
  t.ok(fresh.message, 'a plain answer: no routine left in the conversation')
  const envelope = envelopeOf(t, fresh.message)
  t.equal(envelope.routine, undefined)
  t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
  t.equal(envelope.author, 'agent')
})

t.test('"stop" while waiting for approval abandons too', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('get a refund, orderId=B-1')
  t.equal(statusEnvelope(t, first).routine?.status, 'waiting_for_approval')
  const stopped = await client.task('stop', { contextId: first.contextId })
  t.equal(stopped.status.state, 'TASK_STATE_CANCELED')
  t.equal(statusEnvelope(t, stopped).routine?.status, 'abandoned')
  t.equal((await client.getTask(first.id)).status.state, 'TASK_STATE_CANCELED', 'the task it left')
})

t.test('a message to a completed task is -32004; a new message in the same context starts fresh', async (t) => {
  const client = new Client(t, await gateway(t))
  const done = await client.task('book a table, date=2026-12-24, partySize=2')
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  const late = await client.call('SendMessage', { message: { messageId: 'late', role: 'ROLE_USER', taskId: done.id, parts: [{ text: 'notes=window' }] } })
  t.equal(late.error?.code, -32004)
  const fresh = await client.task('book a table', { contextId: done.contextId })
  t.not(fresh.id, done.id)
  t.equal(statusEnvelope(t, fresh).routine?.status, 'waiting_for_input', 'a new run of the routine')
  t.strictSame(statusEnvelope(t, fresh).routine?.pendingInput, BOOK_PENDING, 'nothing carried over')
  t.equal((await client.getTask(done.id)).status.state, 'TASK_STATE_COMPLETED', 'the finished task is left alone')
})

t.test('CancelTask on a task waiting for input: CANCELED, routine abandoned', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table')
  const body = await client.call('CancelTask', { id: first.id })
  t.equal(body.result.status.state, 'TASK_STATE_CANCELED')
  t.strictSame(statusEnvelope(t, body.result).routine, {
    toolName: 'book_table', name: 'Book a table', status: 'abandoned', pendingInput: []
  })
  t.equal((await client.getTask(first.id)).status.state, 'TASK_STATE_CANCELED')
  const fresh = await client.send('What are your opening hours?', { contextId: first.contextId })
  t.ok(fresh.message, 'the routine is over')
})

t.test('CancelTask on a waiting task the conversation no longer knows (evicted): CANCELED, nothing abandoned', async (t) => {
  const client = new Client(t, await gateway(t, { conversations: new MemoryConversationStore({ maxConversations: 1 }) }))
  const first = await client.task('book a table')
  await client.task('book a table') // another conversation: the first one is evicted
  const body = await client.call('CancelTask', { id: first.id })
  t.equal(body.result.status.state, 'TASK_STATE_CANCELED')
  t.equal(body.result.contextId, first.contextId)
  t.equal(textOf(body.result.status.message), 'Task canceled.')
  const envelope = statusEnvelope(t, body.result)
  t.equal(envelope.routine, undefined)
  t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
})

t.test('the non-exposed routine: envelope routine without toolName', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task("I'd like to leave feedback")
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const routine = statusEnvelope(t, first).routine
  t.strictSame(routine, {
    name: 'Leave feedback',
    status: 'waiting_for_input',
    pendingInput: [
      { key: 'rating', type: 'integer', required: true, description: 'A rating from 1 to 5.' },
      { key: 'comment', type: 'string', required: false, description: 'What you liked or did not.' }
    ]
  })
  t.notOk('toolName' in (routine as object))
  const done = await client.task('5', { taskId: first.id })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  const completed = statusEnvelope(t, done).routine as unknown as Record<string, unknown>
  t.notOk('toolName' in completed)
  t.notOk('toolName' in done.artifacts[0].parts[0].data, 'no tool name in the confirmation either')
})

t.test('a knowledge question gets a Message with coverage, ai_owned and author agent', async (t) => {
  const client = new Client(t, await gateway(t))
  const result = await client.send('How long do I have to return an order?')
  t.ok(result.message)
  t.equal(result.message.role, 'ROLE_AGENT')
  const envelope = envelopeOf(t, result.message)
  t.equal(envelope.author, 'agent')
  t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
  t.equal(envelope.answerCoverage.availability, 'assessed')
})

t.test('no envelope without the A2A-Extensions header, even for tasks that got one', async (t) => {
  const app = await gateway(t)
  const active = new Client(t, app)
  const plain = new Client(t, app, { active: false })
  const first = await active.task('request a refund')
  const refund = await active.task('orderId=C-3', { taskId: first.id })
  await active.task('yes', { taskId: first.id })
  const booked = await active.task('book a table, date=2026-12-24, partySize=2')

  for (const id of [first.id, booked.id]) {
    const task = await plain.getTask(id)
    t.equal(task.status.message.metadata, undefined, 'no metadata on the status message')
    t.notOk(JSON.stringify(task).includes('"author"'), 'no envelope anywhere')
  }
  t.equal(refund.id, first.id)
  // A walk-in lists one conversation at a time: the refund's, then the booking's.
  const listed = [
    await plain.call('ListTasks', { contextId: first.contextId, includeArtifacts: true }),
    await plain.call('ListTasks', { contextId: booked.contextId, includeArtifacts: true })
  ]
  t.equal(listed[0].result.tasks.length + listed[1].result.tasks.length, 2)
  t.notOk(JSON.stringify(listed.map((list) => list.result)).includes('"author"'))

  // Plain clients still run routines: the reply just carries no envelope.
  const inactive = await plain.task('book a table')
  t.equal(inactive.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(inactive.status.message.metadata, undefined)
  t.strictSame(inactive.status.message.extensions ?? [], [])
})
