/**
 * Typed routine calls through the gateway: a message that lists the extension URI in `extensions` and carries
 * `metadata[URI].call = { toolName, arguments }`, honoured only when the request activated the extension.
 */
import t from 'tap'
import type { AgentDefinition } from '../../../src/gateway/agent-definitions.js'
import { Client, envelopeOf, gateway, statusEnvelope, textOf, URI } from '../../fixtures/conversation-gateway.js'

const BOOK = { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 4 } }

t.test('started: book_table with date and partySize completes at once', async (t) => {
  const client = new Client(t, await gateway(t))
  const task = await client.task(undefined, { call: BOOK, parts: [{ data: BOOK }] })
  t.equal(task.status.state, 'TASK_STATE_COMPLETED')
  const envelope = statusEnvelope(t, task)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'started' })
  t.strictSame(envelope.routine, { toolName: 'book_table', name: 'Book a table', status: 'completed', pendingInput: [] })
  t.strictSame(envelope.ownership, { state: 'ai_owned', suppressed: false })
  t.equal(envelope.author, 'agent')
  t.strictSame(task.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 4 })
  t.strictSame(envelopeOf(t, task.artifacts[0]).invocation, envelope.invocation)
})

t.test('started: request_refund with an orderId waits for approval, then "yes" completes', async (t) => {
  const client = new Client(t, await gateway(t))
  const task = await client.task('refund please', { call: { toolName: 'request_refund', arguments: { orderId: 'A-1042' } } })
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const envelope = statusEnvelope(t, task)
  t.strictSame(envelope.invocation, { toolName: 'request_refund', outcome: 'started' })
  t.strictSame(envelope.routine, { toolName: 'request_refund', name: 'Request a refund', status: 'waiting_for_approval', pendingInput: [] })
  t.match(textOf(task.status.message), /Answer yes or no/)
  const done = await client.task(undefined, { taskId: task.id, parts: [{ data: { approved: true } }] })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.equal(statusEnvelope(t, done).invocation, undefined, 'only the turn that began from a call carries invocation')
})

t.test('started with a value the slot rules refuse: the reason is in the reply and the slot stays pending', async (t) => {
  const client = new Client(t, await gateway(t))
  const task = await client.task(undefined, { call: { toolName: 'book_table', arguments: { date: '   ', partySize: 2 } }, parts: [{ text: 'call' }] })
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const envelope = statusEnvelope(t, task)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'started' })
  t.strictSame(envelope.routine?.pendingInput.map((slot) => slot.key), ['date', 'notes'])
  t.match(textOf(task.status.message), /date/)
})

t.test('reentered: a call for the routine already active fills its slots (by taskId, then by contextId)', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table')
  const partly = await client.task('', { taskId: first.id, call: { toolName: 'book_table', arguments: { date: '2026-12-24' } } })
  t.equal(partly.id, first.id)
  t.equal(partly.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const envelope = statusEnvelope(t, partly)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'reentered' })
  t.strictSame(envelope.routine?.pendingInput.map((slot) => slot.key), ['partySize', 'notes'])

  const done = await client.task('', { contextId: first.contextId, call: { toolName: 'book_table', arguments: { partySize: 3, notes: 'window' } } })
  t.not(done.id, first.id)
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(statusEnvelope(t, done).invocation, { toolName: 'book_table', outcome: 'reentered' })
  t.strictSame(done.artifacts[0].parts[0].data.values, { date: '2026-12-24', partySize: 3, notes: 'window' })
  const left = await client.getTask(first.id)
  t.equal(left.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(left.status.message), `Continued in task ${done.id}.`)
})

t.test('not_started: arguments failing the schema; the reply names what is wrong and pendingInput what to supply', async (t) => {
  const client = new Client(t, await gateway(t))
  const result = await client.send('', { call: { toolName: 'book_table', arguments: { partySize: 'four', table: 7 } } })
  t.ok(result.message, 'a Message: nothing started')
  const text = textOf(result.message)
  t.match(text, /^Book a table: /)
  t.match(text, /partySize must be integer/)
  t.match(text, /date is required/)
  t.match(text, /table is not an argument of this tool/)
  const envelope = envelopeOf(t, result.message)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'not_started' })
  t.strictSame(envelope.routine, {
    toolName: 'book_table',
    name: 'Book a table',
    status: 'waiting_for_input',
    pendingInput: [
      { key: 'date', type: 'string', required: true, description: 'The date of the booking, e.g. 2026-12-24.' },
      { key: 'partySize', type: 'integer', required: true, description: 'How many people the table is for.' },
      { key: 'notes', type: 'string', required: false, description: 'Anything we should know (a high chair, a window seat).' }
    ]
  })
  const fresh = await client.send('What are your opening hours?', { contextId: result.message.contextId })
  t.ok(fresh.message, 'no routine was started')

  const noArguments = await client.send('', { call: { toolName: 'request_refund' } })
  t.match(textOf(noArguments.message), /orderId is required/, 'a call without arguments is a call with {}')
  t.equal(envelopeOf(t, noArguments.message).invocation?.outcome, 'not_started')
})

t.test('not_started while the routine is active: it stays as it was, pendingInput is what it still needs', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table, date=2026-12-24')
  const refused = await client.send('', { taskId: first.id, call: { toolName: 'book_table', arguments: { partySize: 'x' } } })
  t.ok(refused.message)
  t.equal(refused.message.taskId, first.id, 'the reply names the task it was sent to')
  const envelope = envelopeOf(t, refused.message)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'not_started' })
  t.strictSame(envelope.routine?.pendingInput.map((slot) => slot.key), ['partySize', 'notes'])
  const waiting = await client.getTask(first.id)
  t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the task still waits')
  const done = await client.task('4', { taskId: first.id })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
})

t.test('unknown_tool: no exposed routine has that name (non-exposed routines cannot be called by name)', async (t) => {
  const client = new Client(t, await gateway(t))
  for (const toolName of ['fly_to_the_moon', 'Leave feedback']) {
    const result = await client.send('', { call: { toolName, arguments: {} } })
    t.ok(result.message)
    t.equal(textOf(result.message), `There is no routine called "${toolName}".`)
    const envelope = envelopeOf(t, result.message)
    t.strictSame(envelope.invocation, { toolName, outcome: 'unknown_tool' })
    t.equal(envelope.routine, undefined)
  }
})

t.test('declined: a routine declared but disabled by the operator', async (t) => {
  const agents: AgentDefinition[] = [{
    id: 'shop',
    name: 'Shop',
    description: 'A shop with one disabled routine',
    routines: [
      {
        name: 'Book a table',
        toolName: 'book_table',
        description: 'Book a table for a date and party size.',
        exposed: true,
        enabled: false,
        triggers: ['book a table'],
        slots: [{ key: 'date', type: 'string', required: true, description: 'The date.' }]
      }
    ]
  }]
  const client = new Client(t, await gateway(t, { agents }), { agent: 'shop' })
  const result = await client.send('', { call: { toolName: 'book_table', arguments: { date: '2026-12-24' } } })
  t.ok(result.message)
  t.equal(textOf(result.message), 'Book a table: book_table is disabled')
  const envelope = envelopeOf(t, result.message)
  t.strictSame(envelope.invocation, { toolName: 'book_table', outcome: 'declined' })
  t.equal(envelope.routine, undefined)
  const plain = await client.send('book a table')
  t.ok(plain.message, 'a disabled routine is not recognised from text either')
})

t.test('a call for another routine abandons the active one; its task ends CANCELED', async (t) => {
  const client = new Client(t, await gateway(t))
  const first = await client.task('book a table')
  const refund = await client.task('', { contextId: first.contextId, call: { toolName: 'request_refund', arguments: { orderId: 'Z-9' } } })
  t.strictSame(statusEnvelope(t, refund).invocation, { toolName: 'request_refund', outcome: 'started' })
  t.equal(statusEnvelope(t, refund).routine?.status, 'waiting_for_approval')
  const left = await client.getTask(first.id)
  t.equal(left.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(left.status.message), `Continued in task ${refund.id}.`)
})

t.test('a typed call is not honoured when the request did not activate the extension: a plain message', async (t) => {
  const app = await gateway(t)
  const plain = new Client(t, app, { active: false })
  const text = await plain.task("I'd like to book a table", { call: BOOK })
  t.equal(text.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the text started the routine; the arguments were ignored')
  t.equal(text.status.message.metadata, undefined)
  const other = await plain.send('What are your opening hours?', { call: BOOK })
  t.ok(other.message, 'a knowledge answer, no routine')

  const active = new Client(t, app)
  const stored = await active.getTask(text.id)
  t.strictSame(statusEnvelope(t, stored).routine?.pendingInput.map((slot) => slot.key), ['date', 'partySize', 'notes'])
  t.equal(statusEnvelope(t, stored).invocation, undefined)
})

t.test('only a message that lists the URI and holds a call is a typed call; a malformed call is -32602', async (t) => {
  const client = new Client(t, await gateway(t))
  const plain: Array<Record<string, unknown>> = [
    { metadata: { [URI]: { call: BOOK } } }, // URI not listed in extensions
    { extensions: [URI] }, // listed, no metadata
    { extensions: [URI], metadata: { other: true } },
    { extensions: [URI], metadata: { [URI]: { note: 'no call member' } } }
  ]
  for (const extra of plain) {
    const message = { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'What are your opening hours?' }], ...extra }
    const body = await client.call('SendMessage', { message })
    t.ok(body.result.message, `plain: ${JSON.stringify(extra)}`)
    t.equal(envelopeOf(t, body.result.message).invocation, undefined)
  }
  const malformed: Array<[unknown, string]> = [
    [null, 'call'],
    ['book_table', 'call'],
    [{ toolName: 42, arguments: {} }, 'call.toolName'],
    [{ toolName: '', arguments: {} }, 'call.toolName']
  ]
  for (const [call, field] of malformed) {
    const message = { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'x' }], extensions: [URI], metadata: { [URI]: { call } } }
    const body = await client.call('SendMessage', { message })
    t.equal(body.error?.code, -32602, `malformed: ${JSON.stringify(call)}`)
    t.equal(body.error?.data[0].fieldViolations[0].field, `message.metadata[${URI}].${field}`)
  }
})

t.test('a long tool name is cut in the envelope (it stays within the schema)', async (t) => {
  const client = new Client(t, await gateway(t))
  const toolName = 'x'.repeat(300)
  const result = await client.send('', { call: { toolName, arguments: {} } })
  t.equal(envelopeOf(t, result.message).invocation?.toolName, 'x'.repeat(256))
})
