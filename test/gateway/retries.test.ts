/**
 * Retries do not repeat side effects (issue 10, defect 2) and get the first reply back (issue 23, "Retries"): the
 * same message (same messageId, same conversation) sent three times books once, and every copy — one after
 * another or at once, on one instance or on two sharing PostgreSQL — is answered with the first reply: the same
 * Message byte for byte, or the task holding the first reply as it stands (GetTask's view). Blocking and streaming.
 * A messageId sent again with other content is -32602 naming `message.messageId`. The PostgreSQL half runs when
 * TEST_DATABASE_URL is set.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Client, gateway, textOf, URI } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'
import { SlowBoundedTaskStore, SlowConversationStore } from '../fixtures/conversation-slow-stores.js'

const url = process.env.TEST_DATABASE_URL

type Json = any

function booking (contextId: string, messageId: string): Json {
  const call = { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 4 } }
  return { messageId, contextId, role: 'ROLE_USER', parts: [{ data: call }], extensions: [URI], metadata: { [URI]: { call } } }
}

function question (contextId: string, messageId = randomUUID()): Json {
  return { messageId, contextId, role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
}

/** The JSON-RPC frames of an SSE body, or the one JSON-RPC reply of an error known before the stream. */
function framesOf (body: string): Json[] {
  if (body.startsWith('{')) return [JSON.parse(body)]
  return body.split('\n\n').map((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join(''))
    .filter((data) => data !== '').map((data) => JSON.parse(data))
}

/** SendStreamingMessage on one app, read to its end: the `result` of each frame (or the error frame). */
async function streamed (t: Test, client: Client, message: Json): Promise<Json[]> {
  const res = await client.app.inject({
    method: 'POST',
    url: '/a2a/demo',
    headers: client.headers(),
    payload: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'SendStreamingMessage', params: { message } })
  })
  t.equal(res.statusCode, 200)
  const frames = framesOf(res.body)
  client.check(frames)
  return frames.map((frame) => frame.error === undefined ? frame.result : { error: frame.error })
}

/** The result's JSON as it came off the wire (key order included): byte-for-byte comparisons. */
const bytes = (value: Json): string => JSON.stringify(value)

/** Sends the same booking three times through the clients given (in turn, or at once); checks one booking. */
async function threeCopies (t: Test, clients: Client[], together: boolean): Promise<void> {
  const contextId = randomUUID()
  const messageId = randomUUID()
  const send = async (index: number): Promise<Json> => {
    const reply = await clients[index % clients.length].call('SendMessage', { message: booking(contextId, messageId) })
    t.equal(reply.error, undefined, `copy ${index + 1}: no error`)
    return reply.result
  }
  const results: Json[] = together
    ? await Promise.all([0, 1, 2].map(send))
    : [await send(0), await send(1), await send(2)]
  t.ok(results.every((result) => result.task !== undefined), 'every copy is answered with the task')
  const [task] = results.map((result) => result.task)
  t.equal(task.status.state, 'TASK_STATE_COMPLETED')
  t.equal(new Set(results.map((result) => result.task.id)).size, 1, 'exactly one copy ran: one task')
  const listed = await clients[0].call('ListTasks', { contextId, includeArtifacts: true })
  t.equal(listed.result.totalSize, 1, 'one task in the conversation')
  t.equal(listed.result.tasks[0].artifacts.length, 1, 'one booking confirmation')
  const stored = await clients[clients.length - 1].getTask(task.id)
  t.equal(stored.status.state, 'TASK_STATE_COMPLETED', 'GetTask shows what the first copy was told')
  for (const [index, result] of results.entries()) {
    t.equal(bytes(result.task), bytes(stored), `copy ${index + 1}: the task as GetTask shows it, byte for byte`)
  }
  if (!together) t.equal(bytes(results[1]), bytes(results[0]), 'the retry\'s reply is the first reply, byte for byte')
}

async function suite (t: Test, apps: FastifyInstance[]): Promise<void> {
  const clients = apps.map((app) => new Client(t, app))
  const first = clients[0]
  const last = clients[clients.length - 1]
  t.test('three copies one after another', async (t) => threeCopies(t, clients, false))
  t.test('three copies at once', async (t) => threeCopies(t, clients, true))

  t.test('a retry whose first reply was a Message gets that Message again, byte for byte', async (t) => {
    const message = question(randomUUID())
    const reply = await first.call('SendMessage', { message })
    t.ok(reply.result.message, 'a knowledge answer')
    const again = await last.call('SendMessage', { message })
    t.equal(bytes(again.result), bytes(reply.result), 'the same Message: messageId, parts, envelope')
    const traced = await first.call('SendMessage', { message: { ...message, metadata: { trace: 'attempt-3' }, referenceTaskIds: [] } })
    t.equal(bytes(traced.result), bytes(reply.result), 'other metadata is not content: still the same message')
    const otherContext = await first.call('SendMessage', { message: { ...message, contextId: randomUUID() } })
    t.not(otherContext.result.message.messageId, reply.result.message.messageId, 'messageIds are per conversation')
  })

  t.test('the same messageId with other content is -32602 naming message.messageId; nothing runs', async (t) => {
    const contextId = randomUUID()
    const message = question(contextId)
    await first.call('SendMessage', { message })
    const changed = { ...message, parts: [{ text: 'I would like to book a table' }] }
    for (const client of [first, last]) {
      const reply = await client.call('SendMessage', { message: changed })
      t.equal(reply.error?.code, -32602)
      t.equal(reply.error?.data?.[0]?.fieldViolations?.[0]?.field, 'message.messageId')
      const frames = await streamed(t, client, changed)
      t.equal(frames.length, 1, 'a stream: one error reply, before it starts')
      t.equal(frames[0].error?.code, -32602)
    }
    const call = booking(contextId, randomUUID())
    await first.call('SendMessage', { message: call })
    const otherCall = { ...call, metadata: { [URI]: { call: { ...call.metadata[URI].call, arguments: { date: '2026-12-25', partySize: 2 } } } } }
    const refused = await last.call('SendMessage', { message: otherCall })
    t.equal(refused.error?.code, -32602, 'another typed call under the same messageId is other content')
    const listed = await first.call('ListTasks', { contextId })
    t.equal(listed.result.totalSize, 1, 'only the first booking ran')
  })

  t.test('streaming: a Message is replayed as the same frames; a task as it stands', async (t) => {
    const message = question(randomUUID())
    const frames = await streamed(t, first, message)
    t.equal(frames.length, 1)
    t.ok(frames[0].message, 'a Message stream')
    t.equal(bytes(await streamed(t, last, message)), bytes(frames), 'the same frames, byte for byte')
    const blocking = await first.call('SendMessage', { message })
    t.equal(bytes(blocking.result), bytes(frames[0]), 'a blocking retry of a streamed message: the same Message')

    const contextId = randomUUID()
    const call = booking(contextId, randomUUID())
    const booked = await streamed(t, first, call)
    const taskId = booked[0].task.id
    t.equal(booked.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED')
    const stored = await last.getTask(taskId)
    const replayed = await streamed(t, last, call)
    t.equal(bytes(replayed), bytes([{ task: stored }]), 'one frame: the task as GetTask shows it, byte for byte')
    const again = await first.call('SendMessage', { message: call })
    t.equal(bytes(again.result), bytes({ task: stored }), 'a blocking retry: the same task')
  })

  t.test('a retry of the message that finished a task gets that task, not -32004', async (t) => {
    const waiting = (await first.call('SendMessage', { message: { ...question(randomUUID()), parts: [{ text: 'I would like to book a table' }] } })).result.task
    t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const answer = { messageId: randomUUID(), contextId: waiting.contextId, taskId: waiting.id, role: 'ROLE_USER', parts: [{ text: 'date=2026-12-24, partySize=2' }] }
    const done = await first.call('SendMessage', { message: answer })
    t.equal(done.result.task.status.state, 'TASK_STATE_COMPLETED')
    const again = await last.call('SendMessage', { message: answer })
    t.equal(bytes(again.result), bytes(done.result), 'the completed task, byte for byte')
    const withoutContext = await last.call('SendMessage', { message: { ...answer, contextId: undefined } })
    t.equal(bytes(withoutContext.result), bytes(done.result), 'the conversation is found through the task')
    const shorter = await last.call('SendMessage', { message: answer, configuration: { historyLength: 1 } })
    t.equal(bytes(shorter.result.task.history), bytes(done.result.task.history.slice(-1)), 'the request\'s historyLength applies, as on GetTask')
    const unknown = await last.call('SendMessage', { message: { ...answer, contextId: undefined, taskId: randomUUID() } })
    t.equal(unknown.error?.code, -32001, 'a task that does not exist: no conversation to look in, the SDK\'s -32001')
    const frames = await streamed(t, first, answer)
    t.equal(bytes(frames), bytes([done.result]), 'streaming: one frame, the same task')
    const stored = await first.getTask(waiting.id)
    t.equal(stored.artifacts.length, 1, 'one booking')
    t.equal(stored.history.filter((entry: Json) => entry.messageId === answer.messageId).length, 1, 'the answer is in the history once')
  })

  t.test('a retry of a turn that left the task waiting for input gets it as it stands now', async (t) => {
    const start = { ...question(randomUUID()), parts: [{ text: 'I would like to book a table' }] }
    const waiting = (await first.call('SendMessage', { message: start })).result.task
    const answer = { messageId: randomUUID(), contextId: waiting.contextId, taskId: waiting.id, role: 'ROLE_USER', parts: [{ text: 'date=2026-12-24, partySize=2' }] }
    await first.call('SendMessage', { message: answer })
    const again = await last.call('SendMessage', { message: start })
    t.equal(again.result.task.id, waiting.id, 'the same task')
    t.equal(again.result.task.status.state, 'TASK_STATE_COMPLETED', 'as it stands now')
    t.equal(textOf(again.result.task.status.message), textOf((await first.getTask(waiting.id)).status.message))
  })
}

// The memory stores with a database's latency (random, per call), so that copies sent together interleave.
t.test('memory, one instance', async (t) => suite(t, [await gateway(t, { conversations: new SlowConversationStore(), taskStores: { demo: new SlowBoundedTaskStore() } })]))

if (url === undefined) {
  t.test('PostgreSQL, two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL, two instances on one database', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    const a = await gateway(t, { env })
    const b = await gateway(t, { env })
    await suite(t, [a, b])
    t.test('a copy with other content on an instance whose kept state is behind: -32602 all the same (checked again under the lock)', async (t) => {
      const [first, second] = [new Client(t, a), new Client(t, b)]
      const contextId = randomUUID()
      for (const stream of [false, true]) {
        await second.call('SendMessage', { message: question(contextId) })
        const message = question(contextId)
        await first.call('SendMessage', { message })
        // The second instance keeps the state it wrote: it has not seen this message.
        const changed = { ...message, parts: [{ text: 'I would like to book a table' }] }
        if (stream) {
          const frames = await streamed(t, second, changed)
          t.equal(frames.at(-1).error?.code, -32602, 'a stream: its error frame')
        } else {
          const reply = await second.call('SendMessage', { message: changed })
          t.equal(reply.error?.code, -32602)
          t.equal(reply.error?.data?.[0]?.fieldViolations?.[0]?.field, 'message.messageId')
        }
      }
      const listed = await first.call('ListTasks', { contextId })
      t.equal(listed.result.totalSize, 0, 'nothing ran: no task stored')
      const stored = await first.call('SendMessage', { message: question(contextId) })
      t.ok(stored.result.message, 'the conversation goes on')
    })
  })
}
