/**
 * Parallel answers to one waiting task (issue 10, defect 1): 50 clients answer the same book_table task at once,
 * each naming its taskId. Exactly one turn completes the routine; every other request gets -32004 (the task is
 * over); every request is answered; GetTask shows what the completing client was told. Blocking (SendMessage) and
 * streaming (SendStreamingMessage) answers; memory, one gateway on PostgreSQL, and two gateways on one PostgreSQL
 * database with the answers spread over both (the PostgreSQL halves when TEST_DATABASE_URL is set).
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Client, gateway } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'
import { SlowBoundedTaskStore, SlowConversationStore } from '../fixtures/conversation-slow-stores.js'

const url = process.env.TEST_DATABASE_URL
const CLIENTS = 50

type Json = any

function answer (waiting: Json, n: number): Json {
  return {
    messageId: `answer-${n}`,
    contextId: waiting.contextId,
    taskId: waiting.id,
    role: 'ROLE_USER',
    parts: [{ text: `date=2026-12-24, partySize=${n + 1}` }]
  }
}

/** The JSON-RPC frames of an SSE body, or the one JSON-RPC reply of an error known before the stream. */
function framesOf (body: string): Json[] {
  if (body.startsWith('{')) return [JSON.parse(body)]
  return body.split('\n\n').map((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join(''))
    .filter((data) => data !== '').map((data) => JSON.parse(data))
}

/** The state a stream frame puts its task in, if any. */
function stateOf (frame: Json): string | undefined {
  return frame.result?.task?.status?.state ?? frame.result?.statusUpdate?.status?.state
}

/** One waiting task, then what GetTask must show after the answers: COMPLETED with the one booking. */
async function waitingTask (t: Test, client: Client): Promise<Json> {
  const waiting = await client.task('I would like to book a table')
  t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
  return waiting
}

async function checkStored (t: Test, clients: Client[], taskId: string, completedMessageId: string): Promise<void> {
  for (const client of clients) {
    const stored = await client.getTask(taskId)
    t.equal(stored.status.state, 'TASK_STATE_COMPLETED', 'GetTask shows what the completing client was told')
    t.equal(stored.artifacts.length, 1, 'one booking confirmation')
    t.equal(stored.status.message.messageId, completedMessageId, 'the completing turn\'s status message')
  }
}

async function fiftyAnswers (t: Test, apps: FastifyInstance[]): Promise<void> {
  const clients = apps.map((app) => new Client(t, app))
  const waiting = await waitingTask(t, clients[0])
  const replies: Json[] = await Promise.all(Array.from({ length: CLIENTS }, async (_, n) =>
    await clients[n % clients.length].call('SendMessage', { message: answer(waiting, n) })))
  const completed = replies.filter((reply) => reply.result?.task?.status?.state === 'TASK_STATE_COMPLETED')
  const refused = replies.filter((reply) => reply.error?.code === -32004)
  t.equal(completed.length, 1, 'exactly one turn completes the routine')
  t.equal(refused.length, CLIENTS - 1, 'every other answer: -32004, the task is over')
  await checkStored(t, clients, waiting.id, completed[0].result.task.status.message.messageId)
}

async function fiftyStreamedAnswers (t: Test, apps: FastifyInstance[]): Promise<void> {
  const clients = apps.map((app) => new Client(t, app))
  const waiting = await waitingTask(t, clients[0])
  const streams: Json[][] = await Promise.all(Array.from({ length: CLIENTS }, async (_, n) => {
    const client = clients[n % clients.length]
    const res = await client.app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: client.headers(),
      payload: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'SendStreamingMessage', params: { message: answer(waiting, n) } })
    })
    t.equal(res.statusCode, 200)
    const frames = framesOf(res.body)
    client.check(frames)
    return frames
  }))
  const completed = streams.filter((frames) => frames.some((frame) => stateOf(frame) === 'TASK_STATE_COMPLETED'))
  const refused = streams.filter((frames) => frames.length === 1 && frames[0].error?.code === -32004)
  t.equal(completed.length, 1, 'exactly one streamed turn completes the routine')
  t.equal(refused.length, CLIENTS - 1, 'every other stream: one -32004 reply (before a stream), the task is over')
  const last = completed[0].filter((frame) => stateOf(frame) === 'TASK_STATE_COMPLETED').at(-1)
  await checkStored(t, clients, waiting.id, (last.result.task ?? last.result.statusUpdate).status.message.messageId)
}

async function suite (t: Test, apps: () => Promise<FastifyInstance[]>): Promise<void> {
  t.test('SendMessage', async (t) => fiftyAnswers(t, await apps()))
  t.test('SendStreamingMessage', async (t) => fiftyStreamedAnswers(t, await apps()))
}

// The memory stores with a database's latency (random, per call): the fifty answers interleave, so the task's turn
// lock and the finished-stays-finished save are what keep one booking (removing both fails this).
t.test('memory', async (t) => suite(t, async () => [await gateway(t, { conversations: new SlowConversationStore(), taskStores: { demo: new SlowBoundedTaskStore() } })]))

if (url === undefined) {
  t.test('PostgreSQL, one instance', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
  t.test('PostgreSQL, two instances on one database', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL, one instance', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    await suite(t, async () => [await gateway(t, { env })])
  })
  t.test('PostgreSQL, two instances on one database', async (t) => {
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }
    await suite(t, async () => [await gateway(t, { env }), await gateway(t, { env })])
  })
}
