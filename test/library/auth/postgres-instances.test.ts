/**
 * Identities across two gateway instances sharing one PostgreSQL database (API keys and JWTs): a caller's task
 * made on one instance is its own on the other (found, continued, listed), another caller's is -32001 on both, and
 * the same contextId from two callers is two conversations wherever each turn lands.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { ALICE_KEY, API_KEYS, AUDIENCE, BOB_KEY, call, identityProvider, ISSUER } from '../../fixtures/auth.js'
import { startGateway, userMessage } from '../../fixtures/gateway-helpers.js'
import { testSchema } from '../../fixtures/test-schema.js'

type Json = Record<string, any>
const url = process.env.TEST_DATABASE_URL
const OPERATOR_KEY = 'operator-key-for-the-identity-pg-test'

if (url === undefined) {
  t.test('identities on two instances and PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  const provider = await identityProvider(t)
  const schema = testSchema(t, url)
  const env = {
    DATABASE_URL: url,
    DATABASE_SCHEMA: schema,
    A2A_API_KEYS: API_KEYS,
    A2A_JWT_JWKS_URL: provider.jwksUrl,
    A2A_JWT_ISSUER: ISSUER,
    A2A_JWT_AUDIENCE: AUDIENCE,
    OPERATOR_API_KEY: OPERATOR_KEY
  }
  const [{ base: A }, { base: B }] = await Promise.all([startGateway(t, env), startGateway(t, env)])

  const send = async (base: string, credential: string, text: string, extra: Json = {}) => {
    const { body } = await call(base, 'SendMessage', { message: userMessage(text, extra) }, credential)
    if (body.error !== undefined) throw new Error(JSON.stringify(body.error))
    return body.result
  }

  t.test('a task made on A: its caller finds, lists and continues it on B; another caller cannot, on either', async (t) => {
    const task = (await send(A, ALICE_KEY, 'book a table')).task
    t.equal((await call(B, 'GetTask', { id: task.id }, ALICE_KEY)).body.result.id, task.id, 'Alice reads it on B')
    for (const base of [A, B]) {
      t.equal((await call(base, 'GetTask', { id: task.id }, BOB_KEY)).body.error?.code, -32001, 'Bob cannot')
      const listed = (await call(base, 'ListTasks', { pageSize: 100 }, BOB_KEY)).body.result.tasks
      t.notOk(listed.some((entry: Json) => entry.id === task.id), 'nor list it')
      t.equal((await call(base, 'CancelTask', { id: task.id }, BOB_KEY)).body.error?.code, -32001, 'nor cancel it')
    }
    const token = await provider.token('alice')
    t.equal((await call(B, 'GetTask', { id: task.id }, token)).body.result.id, task.id,
      'a token whose subject is alice is the same caller as the key issued to alice')
    const next = (await send(B, ALICE_KEY, 'date=2026-12-24', { taskId: task.id })).task
    t.equal(next.id, task.id)
    t.same(next.status.state, 'TASK_STATE_INPUT_REQUIRED', 'B continues the routine Alice started on A')
    t.ok((await call(A, 'ListTasks', { pageSize: 100 }, ALICE_KEY)).body.result.tasks.some((entry: Json) => entry.id === task.id))
  })

  t.test('one contextId from two callers on two instances: two conversations', async (t) => {
    const contextId = randomUUID()
    const carol = await provider.token('carol')
    const dave = await provider.token('dave')
    const started = (await send(A, carol, 'book a table', { contextId })).task
    t.equal(started.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const daves = await send(B, dave, 'What are your opening hours?', { contextId })
    t.equal(daves.message.contextId, contextId, 'Dave is answered in his own conversation, with his contextId')
    const carolsNext = (await send(B, carol, 'date=2026-12-24', { taskId: started.id, contextId })).task
    t.equal(carolsNext.status.state, 'TASK_STATE_INPUT_REQUIRED', "Carol's routine is untouched by Dave's turn")
    const list = await (await fetch(`${A}/api/v1/agents/demo/conversations?limit=100`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } })).json() as Json
    const both = list.conversations.filter((entry: Json) => entry.caller?.contextId === contextId)
    t.same(both.map((entry: Json) => entry.caller.id).sort(), ['carol', 'dave'], 'the operator sees both, each with its caller')
    const view = await (await fetch(`${B}/api/v1/agents/demo/conversations/${encodeURIComponent(`carol/${contextId}`)}`, {
      headers: { authorization: `Bearer ${OPERATOR_KEY}` }
    })).json() as Json
    t.same(view.caller, { id: 'carol', contextId })
    t.equal(view.turns.filter((turn: Json) => turn.role === 'user').length, 2, "Carol's two turns, none of Dave's")
  })
}
