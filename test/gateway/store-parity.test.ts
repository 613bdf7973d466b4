/**
 * Both stores accept the same requests (issue 10, defect 4): ids up to MAX_ID_LENGTH (128) characters work on
 * memory and on PostgreSQL; what neither holds (a longer id, U+0000) is -32602 naming the field before anything
 * is written. The PostgreSQL half runs when TEST_DATABASE_URL is set. The caller has a key: a walk-in's contextId
 * must be a UUID (test/library/auth/walk-ins.test.ts), a caller's may be any id.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { Client, gateway, operator } from '../fixtures/conversation-gateway.js'
import { ALICE_KEY, API_KEYS } from '../fixtures/auth.js'
import { logLines } from '../fixtures/gateway-helpers.js'
import { testSchema } from '../fixtures/test-schema.js'
import { MAX_MESSAGE_PARTS } from '../../packages/a2a-converse/src/protocol/params.js'

const url = process.env.TEST_DATABASE_URL

async function parity (t: Test, env: Record<string, string>): Promise<void> {
  const logs = logLines()
  const app = await gateway(t, { env: { ...env, A2A_API_KEYS: API_KEYS, LOG_LEVEL: 'info' }, loggerStream: logs.stream })
  const client = new Client(t, app, { credential: ALICE_KEY })

  t.test('a 44-character contextId (session-<uuid>) runs a routine to its end; GetTask agrees', async (t) => {
    const contextId = `session-${randomUUID()}`
    t.equal(contextId.length, 44)
    const first = await client.task('I would like to book a table', { contextId })
    t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal(first.contextId, contextId)
    const done = await client.task('date=2026-12-24, partySize=4', { contextId, taskId: first.id })
    t.equal(done.status.state, 'TASK_STATE_COMPLETED')
    t.equal((await client.getTask(first.id)).status.state, 'TASK_STATE_COMPLETED')
  })

  t.test('ids and a tenant of 128 characters are accepted', async (t) => {
    const contextId = 'c'.repeat(128)
    const reply = await client.call('SendMessage', {
      tenant: 't'.repeat(128),
      message: { messageId: 'm'.repeat(128), contextId, role: 'ROLE_USER', parts: [{ text: 'book a table' }] }
    })
    t.equal(reply.result?.task?.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal(reply.result.task.contextId, contextId)
  })

  t.test('a longer id or tenant, or U+0000 in one, is -32602 naming the field; nothing is written', async (t) => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string, string]> = [
      ['contextId of 129', {}, { contextId: 'x'.repeat(129) }, 'message.contextId', 'must be at most 128 characters'],
      ['NUL in contextId', {}, { contextId: 'parity-\u0000-nul' }, 'message.contextId', 'must not contain U+0000'],
      ['taskId of 129', {}, { contextId: 'parity-task', taskId: 'x'.repeat(129) }, 'message.taskId', 'must be at most 128 characters'],
      ['messageId of 129', {}, { contextId: 'parity-message', messageId: 'x'.repeat(129) }, 'message.messageId', 'must be at most 128 characters'],
      ['tenant of 256', { tenant: 'x'.repeat(256) }, { contextId: 'parity-tenant' }, 'tenant', 'must be at most 128 characters'],
      ['NUL in a referenceTaskId', {}, { contextId: 'parity-ref', referenceTaskIds: ['a\u0000'] }, 'message.referenceTaskIds[0]', 'must not contain U+0000']
    ]
    for (const [name, params, message, field, description] of cases) {
      const reply = await client.call('SendMessage', {
        ...params,
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }], ...message }
      })
      t.equal(reply.error?.code, -32602, name)
      t.strictSame(reply.error?.data[0].fieldViolations, [{ field, description }], `${name}: names ${field}`)
      const contextId = message.contextId as string
      const view = await operator(app, 'GET', `demo/conversations/${encodeURIComponent(`alice/${contextId}`)}`)
      // 400 where the operator API refuses the id itself (the same limits), 404 for an unknown conversation.
      t.ok([400, 404].includes(view.statusCode), `${name}: no conversation was written (${view.statusCode})`)
    }
    const get = await client.call('GetTask', { id: 'x'.repeat(129) })
    t.strictSame(get.error?.data[0].fieldViolations, [{ field: 'id', description: 'must be at most 128 characters' }], 'GetTask too')
  })

  t.test(`a message of ${MAX_MESSAGE_PARTS} parts is taken; one more part is -32602 naming message.parts, nothing written`, async (t) => {
    const parts = (count: number) => Array.from({ length: count }, (_, index) => ({ text: index === 0 ? 'book a table' : `part ${index}` }))
    const taken = await client.call('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: parts(MAX_MESSAGE_PARTS) } })
    t.equal(taken.result?.task?.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal((await client.getTask(taken.result.task.id)).history[0].parts.length, MAX_MESSAGE_PARTS, 'every part kept')
    const contextId = randomUUID()
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const reply = await client.call(method, { message: { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: parts(MAX_MESSAGE_PARTS + 1) } })
      t.equal(reply.error?.code, -32602, method)
      t.strictSame(reply.error?.data[0].fieldViolations, [{ field: 'message.parts', description: `must have at most ${MAX_MESSAGE_PARTS} items` }], method)
    }
    const view = await operator(app, 'GET', `demo/conversations/${encodeURIComponent(`alice/${contextId}`)}`)
    t.equal(view.statusCode, 404, 'no conversation was written')
  })

  t.test('nothing was logged at error (no "value too long")', async (t) => {
    t.same(logs.lines.filter((line) => line.level >= 50), [])
  })
}

t.test('memory', async (t) => parity(t, {}))

if (url === undefined) {
  t.test('PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL', async (t) => parity(t, { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }))
}
