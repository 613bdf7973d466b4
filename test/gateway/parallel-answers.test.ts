/**
 * Parallel answers to one waiting task (issue 10, defect 1), one instance: 50 clients answer the same book_table
 * task at once, each naming its taskId. Exactly one turn completes the routine; every other request gets -32004
 * (the task is over); every request is answered; GetTask shows what the completing client was told. Memory, and
 * one gateway on PostgreSQL when TEST_DATABASE_URL is set. (Several instances: see docs/guarantees.md.)
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Client, gateway } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL
const CLIENTS = 50

type Json = any

async function fiftyAnswers (t: Test, app: FastifyInstance): Promise<void> {
  const client = new Client(t, app)
  const waiting = await client.task('I would like to book a table')
  t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const answer = (n: number) => ({
    messageId: `answer-${n}`,
    contextId: waiting.contextId,
    taskId: waiting.id,
    role: 'ROLE_USER',
    parts: [{ text: `date=2026-12-24, partySize=${n + 1}` }]
  })
  const replies: Json[] = await Promise.all(Array.from({ length: CLIENTS }, async (_, n) =>
    await client.call('SendMessage', { message: answer(n) })))
  const completed = replies.filter((reply) => reply.result?.task?.status?.state === 'TASK_STATE_COMPLETED')
  const refused = replies.filter((reply) => reply.error?.code === -32004)
  t.equal(completed.length, 1, 'exactly one turn completes the routine')
  t.equal(refused.length, CLIENTS - 1, 'every other answer: -32004, the task is over')
  const stored = await client.getTask(waiting.id)
  t.equal(stored.status.state, 'TASK_STATE_COMPLETED', 'GetTask shows what the completing client was told')
  t.equal(stored.artifacts.length, 1, 'one booking confirmation')
  t.equal(stored.status.message.messageId, completed[0].result.task.status.message.messageId)
}

t.test('memory', async (t) => fiftyAnswers(t, await gateway(t)))

if (url === undefined) {
  t.test('PostgreSQL, one instance', { skip: 'TEST_DATABASE_URL not set' }, async () => {})
} else {
  t.test('PostgreSQL, one instance', async (t) => fiftyAnswers(t, await gateway(t, { env: { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) } })))
}
