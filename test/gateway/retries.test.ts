/**
 * Retries do not repeat side effects (issue 10, defect 2): the same message (same messageId, same context) sent
 * three times books once. The first copy runs; every repeat — one after another or at once, on one instance or
 * on two sharing PostgreSQL — gets a Message saying it was already received, whose referenceTaskIds name the task
 * holding the first result. The PostgreSQL half runs when TEST_DATABASE_URL is set.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Client, envelopeOf, gateway, textOf, URI } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

type Json = any

function booking (contextId: string, messageId: string): Json {
  const call = { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 4 } }
  return { messageId, contextId, role: 'ROLE_USER', parts: [{ data: call }], extensions: [URI], metadata: { [URI]: { call } } }
}

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
  const tasks = results.filter((result) => result.task !== undefined).map((result) => result.task)
  t.equal(tasks.length, 1, 'exactly one copy ran')
  const [task] = tasks
  t.equal(task.status.state, 'TASK_STATE_COMPLETED')
  for (const result of results.filter((entry) => entry.message !== undefined)) {
    t.match(textOf(result.message), `Message ${messageId} was already received and answered in task ${task.id}.`)
    t.strictSame(result.message.referenceTaskIds, [task.id], 'names the task holding the first result')
    t.equal(envelopeOf(t, result.message).invocation, undefined, 'no invocation: nothing was invoked again')
  }
  const listed = await clients[0].call('ListTasks', { contextId, includeArtifacts: true })
  t.equal(listed.result.totalSize, 1, 'one task in the conversation')
  t.equal(listed.result.tasks[0].artifacts.length, 1, 'one booking confirmation')
  const stored = await clients[clients.length - 1].getTask(task.id)
  t.equal(stored.status.state, 'TASK_STATE_COMPLETED', 'GetTask shows what the first copy was told')
}

async function suite (t: Test, apps: FastifyInstance[]): Promise<void> {
  const clients = apps.map((app) => new Client(t, app))
  t.test('three copies one after another', async (t) => threeCopies(t, clients, false))
  t.test('three copies at once', async (t) => threeCopies(t, clients, true))
  t.test('a repeated messageId whose first reply was a Message is not answered again either', async (t) => {
    const contextId = randomUUID()
    const message = { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
    const first = await clients[0].call('SendMessage', { message })
    t.ok(first.result.message, 'a knowledge answer')
    const again = await clients[clients.length - 1].call('SendMessage', { message })
    t.equal(textOf(again.result.message), `Message ${message.messageId} was already received and answered.`)
    t.equal(again.result.message.referenceTaskIds, undefined, 'no task to name (ProtoJSON omits the empty list)')
    const otherContext = await clients[0].call('SendMessage', { message: { ...message, contextId: randomUUID() } })
    t.notMatch(textOf(otherContext.result.message), /already received/, 'messageIds are per conversation')
  })
}

t.test('memory, one instance', async (t) => suite(t, [await gateway(t)]))

if (url === undefined) {
  t.test('PostgreSQL, two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL, two instances on one database', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    const a = await gateway(t, { env })
    const b = await gateway(t, { env })
    await suite(t, [a, b])
  })
}
