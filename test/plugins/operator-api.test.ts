/** The operator API (human takeover) through the gateway: auth, 404/400/409 with JSON bodies, the conversation view. */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { InvalidOptionError } from '../../packages/a2a-converse/src/core/errors.js'
import operatorApi from '../../plugins/operator-api.js'
import type { Inbox } from '../../packages/a2a-converse/src/runtime/inbox.js'
import { MAX_CONVERSATION_KEY_LENGTH } from '../../packages/a2a-converse/src/stores/conversation-store.js'
import { Client, gateway, OPERATOR_KEY, operator } from '../fixtures/conversation-gateway.js'
import { StoreUnavailableError } from '../../packages/a2a-converse/src/stores/errors.js'

/** A gateway with one conversation (a routine waiting for input); its contextId and the waiting task. */
async function withConversation (t: Test) {
  const app = await gateway(t)
  const client = new Client(t, app)
  const task = await client.task('book a table, date=2026-12-24')
  return { app, client, contextId: task.contextId as string, task }
}

const ROUTES = (contextId: string) => [
  ['GET', `demo/conversations/${contextId}`],
  ['POST', `demo/conversations/${contextId}/takeover`],
  ['POST', `demo/conversations/${contextId}/release`],
  ['POST', `demo/conversations/${contextId}/messages`]
] as const

t.test('401 without a key, with a wrong key or another scheme: JSON body and WWW-Authenticate', async (t) => {
  const { app, contextId } = await withConversation(t)
  const wrong: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer wrong-key-0123456789' },
    { authorization: `Bearer ${OPERATOR_KEY}x` },
    { authorization: `Bearer ${OPERATOR_KEY.slice(0, -1)}` },
    { authorization: `Basic ${Buffer.from(`operator:${OPERATOR_KEY}`).toString('base64')}` },
    { authorization: OPERATOR_KEY },
    { authorization: 'Bearer ' }
  ]
  for (const [method, path] of ROUTES(contextId)) {
    for (const headers of wrong) {
      const res = await operator(app, method, path, method === 'POST' && path.endsWith('messages') ? { text: 'hi' } : undefined, headers)
      t.equal(res.statusCode, 401, `${method} ${path} ${JSON.stringify(headers)}`)
      t.equal(res.headers['www-authenticate'], 'Bearer')
      t.match(res.headers['content-type'], /^application\/json/)
      t.strictSame(res.json(), { statusCode: 401, error: 'Unauthorized', message: 'a valid operator bearer token is required' })
    }
  }
  const view = await operator(app, 'GET', `demo/conversations/${contextId}`)
  t.equal(view.json().ownership, 'ai_owned', 'nothing changed')
})

t.test('the key guards only the operator routes', async (t) => {
  const { app } = await withConversation(t)
  t.equal((await app.inject('/health/live')).statusCode, 200)
  t.equal((await app.inject('/.well-known/agent-card.json')).statusCode, 200)
})

t.test('no OPERATOR_API_KEY: the routes do not exist', async (t) => {
  const app = await gateway(t, { env: { OPERATOR_API_KEY: undefined } })
  const client = new Client(t, app)
  const task = await client.task('book a table')
  for (const [method, path] of ROUTES(task.contextId)) {
    const res = await operator(app, method, path, method === 'POST' ? { text: 'hi' } : undefined)
    t.equal(res.statusCode, 404, `${method} ${path}`)
    t.equal(res.json().statusCode, 404)
    t.equal(res.headers['www-authenticate'], undefined)
  }
})

t.test('unknown agent and unknown conversation: 404 with a JSON body', async (t) => {
  const { app, contextId } = await withConversation(t)
  for (const [method, path] of ROUTES(contextId)) {
    const body = method === 'POST' && path.endsWith('messages') ? { text: 'hi' } : undefined
    const agent = await operator(app, method, path.replace(/^demo/, 'nobody'), body)
    t.equal(agent.statusCode, 404, `${method} unknown agent`)
    t.strictSame(agent.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' })
    const conversation = await operator(app, method, path.replace(contextId, 'no-such-context'), body)
    t.equal(conversation.statusCode, 404, `${method} unknown conversation`)
    t.strictSame(conversation.json(), { statusCode: 404, error: 'Not Found', message: 'unknown conversation "no-such-context"' })
  }
})

t.test('malformed bodies and parameters: 400 with a JSON body', async (t) => {
  const { app, contextId } = await withConversation(t)
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const path = `demo/conversations/${contextId}/messages`
  const bodies: unknown[] = [{}, { text: '' }, { text: 42 }, { text: 'hi', extra: true }, { text: 'x'.repeat(20001) }, '{"text":', '[]']
  for (const body of bodies) {
    const res = await operator(app, 'POST', path, body)
    t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 40))
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', message: String })
  }
  const noBody = await operator(app, 'POST', path)
  t.equal(noBody.statusCode, 400)
  t.match(noBody.json(), { statusCode: 400 })

  const longContext = await operator(app, 'GET', `demo/conversations/${'c'.repeat(MAX_CONVERSATION_KEY_LENGTH + 1)}`)
  t.equal(longContext.statusCode, 400, 'longer than any conversation key (a caller id and a contextId: no conversation can have one)')
  const nulContext = await operator(app, 'GET', 'demo/conversations/a%00b')
  t.equal(nulContext.statusCode, 400, 'a contextId with U+0000')
  const longAgent = await operator(app, 'GET', `${'a'.repeat(129)}/conversations/${contextId}`)
  t.equal(longAgent.statusCode, 400)
  t.match(longAgent.json(), { statusCode: 400, error: 'Bad Request' })

  const view = (await operator(app, 'GET', `demo/conversations/${contextId}`)).json()
  t.notOk(view.turns.some((turn: { role: string }) => turn.role === 'human'), 'nothing was recorded')
})

t.test('a reply before takeover (or after release) is 409', async (t) => {
  const { app, contextId } = await withConversation(t)
  const path = `demo/conversations/${contextId}/messages`
  const before = await operator(app, 'POST', path, { text: 'hello' })
  t.equal(before.statusCode, 409)
  t.strictSame(before.json(), { statusCode: 409, error: 'Conflict', message: 'take the conversation over before replying' })
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  t.equal((await operator(app, 'POST', path, { text: 'hello' })).statusCode, 201)
  await operator(app, 'POST', `demo/conversations/${contextId}/release`)
  t.equal((await operator(app, 'POST', path, { text: 'hello again' })).statusCode, 409)
})

t.test('GET shows ownership, the routine and the recent turns', async (t) => {
  const { app, client, contextId, task } = await withConversation(t)
  const res = await operator(app, 'GET', `demo/conversations/${contextId}`)
  t.equal(res.statusCode, 200)
  const view = res.json()
  t.equal(view.agentId, 'demo')
  t.equal(view.contextId, contextId)
  t.equal(view.ownership, 'ai_owned')
  t.strictSame(view.routine, {
    toolName: 'book_table',
    name: 'Book a table',
    status: 'waiting_for_input',
    pendingInput: [
      { key: 'partySize', type: 'integer', required: true, description: 'How many people the table is for.' },
      { key: 'notes', type: 'string', required: false, description: 'Anything we should know (a high chair, a window seat).' }
    ]
  })
  t.match(view.turns, [
    { role: 'user', text: 'book a table, date=2026-12-24', taskId: task.id, messageId: String, id: String, at: String },
    { role: 'agent', text: 'Which date, and for how many people?', taskId: task.id }
  ])

  const taken = (await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).json()
  t.equal(taken.ownership, 'human_owned')
  t.strictSame(taken.routine, view.routine)

  for (let index = 0; index < 20; index++) await client.task(`question ${index}`, { contextId })
  const recent = (await operator(app, 'GET', `demo/conversations/${contextId}`)).json()
  t.equal(recent.turns.length, 20, 'the most recent 20 turns')
  t.strictSame(recent.turns.at(-1), { ...recent.turns.at(-1), role: 'user', text: 'question 19' })
  t.equal(recent.turns.filter((turn: { role: string }) => turn.role === 'agent').length, 0, 'suppressed turns have no agent turn')
})

t.test('the plugin refuses a short key', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const inbox = {} as Inbox
  await t.rejects(async () => { await app.register(operatorApi, { apiKey: 'short', agentIds: ['demo'], inbox }) }, InvalidOptionError)
})

t.test('the state store unreachable: 503 with a JSON body, no driver detail; other errors as Fastify answers them', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const unreachable = new StoreUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:5432'))
  const inbox = {
    view: async () => { throw unreachable },
    takeover: async () => { throw new Error('something else') }
  } as unknown as Inbox
  await app.register(operatorApi, { apiKey: 'operator-key-0123456789', agentIds: ['demo'], inbox })
  const headers = { authorization: 'Bearer operator-key-0123456789' }
  const down = await app.inject({ url: '/api/v1/agents/demo/conversations/c-1', headers })
  t.equal(down.statusCode, 503)
  t.same(down.json(), { statusCode: 503, error: 'Service Unavailable', message: 'the state store is unreachable; try again later' })
  t.notMatch(down.body, '10.0.0.7')
  const other = await app.inject({ method: 'POST', url: '/api/v1/agents/demo/conversations/c-1/takeover', headers })
  t.equal(other.statusCode, 500)
  t.equal(other.json().statusCode, 500)
})

t.test('replies while no task waits: up to maxInbox (50) wait and all reach the next task; the 51st is 409, not dropped', async (t) => {
  const { app, client, contextId } = await withConversation(t)
  await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)
  const path = `demo/conversations/${contextId}/messages`
  for (let index = 1; index <= 50; index++) {
    const res = await operator(app, 'POST', path, { text: `reply ${index}` })
    if (res.statusCode !== 201 || res.json().delivered !== false) t.fail(`reply ${index}: ${res.statusCode}`)
  }
  const refused = await operator(app, 'POST', path, { text: 'reply 51' })
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { statusCode: 409, error: 'Conflict', message: /most undelivered replies/ })
  const next = await client.task('is anyone there?', { contextId })
  const stored = await client.getTask(next.id)
  const human = stored.history.filter((message: any) => message.metadata?.['https://docs.radioso.ai/reference/a2a-converse-extension/v1']?.author === 'human')
  const texts = human.map((message: any) => message.parts[0].text)
  if (stored.status.message.metadata?.['https://docs.radioso.ai/reference/a2a-converse-extension/v1']?.author === 'human') texts.push(stored.status.message.parts[0].text)
  t.strictSame(texts.filter((text: string) => text.startsWith('reply ')), Array.from({ length: 50 }, (_, index) => `reply ${index + 1}`),
    'every accepted reply reached the task, in order; the refused one did not')
  t.equal((await operator(app, 'POST', path, { text: 'reply 52' })).statusCode, 201, 'room again once delivered')
})
