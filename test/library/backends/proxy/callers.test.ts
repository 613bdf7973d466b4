/**
 * Proxy mode keeps callers apart as local agents do (issue 23, findings 1 and 2): two callers, alice and bob, with
 * API keys, in front of one real upstream (test/fixtures/upstream-agent.ts), through both doors (the Fastify
 * gateway, the Express router over the same runtime) on memory and PostgreSQL. Another caller's task is -32001 on
 * every method, byte for byte the answer for a task that does not exist, and nothing of it goes upstream; another
 * caller's contextId is refused; ListTasks lists the caller's own. The takeover inbox is the caller's: a person's
 * replies reach only the caller whose conversation was taken over.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { GetTaskRequest } from '@a2a-js/sdk'
import { createAuthenticator } from '../../../../packages/a2a-converse/src/auth/authenticator.js'
import { converseRouter } from 'a2a-converse/express'
import { openPostgresState } from '../../../../src/gateway/postgres-state.js'
import { buildAgentRuntime } from '../../../../src/gateway/runtime.js'
import { memoryState, type GatewayState } from '../../../../src/gateway/state.js'
import { ALICE_KEY, API_KEYS, BOB_KEY, call, sdkClient } from '../../../fixtures/auth.js'
import { DOORS, type DoorName } from '../../../fixtures/doors.js'
import { rpc, startGateway, userMessage } from '../../../fixtures/gateway-helpers.js'
import { testSchema } from '../../../fixtures/test-schema.js'
import { startUpstream, type RunningUpstream } from '../../../fixtures/upstream-agent.js'

type Json = Record<string, any>
const url = process.env.TEST_DATABASE_URL
const OPERATOR_KEY = 'operator-key-for-the-proxy-callers-test'
const STORES = ['memory', 'postgresql'] as const
type StoreName = typeof STORES[number]
const quiet = { warn () {}, error () {}, info () {} }

/** The Fastify gateway with both keys (auth required), the operator API on. */
async function fastifyGateway (t: Test, store: StoreName, upstream: RunningUpstream): Promise<string> {
  const env: Record<string, string> = { A2A_API_KEYS: API_KEYS, OPERATOR_API_KEY: OPERATOR_KEY }
  if (store === 'postgresql') Object.assign(env, { DATABASE_URL: url as string, DATABASE_SCHEMA: testSchema(t, url as string) })
  return (await startGateway(t, env, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })).base
}

/** The Express router over the same runtime and state, the same authenticator. */
async function expressRouter (t: Test, store: StoreName, upstream: RunningUpstream): Promise<string> {
  const state: GatewayState = store === 'memory'
    ? memoryState()
    : await openPostgresState({ connectionString: url as string, schema: testSchema(t, url as string), logger: quiet })
  const runtime = await buildAgentRuntime({
    definitions: [{ id: 'shop', upstream: { url: upstream.base } }],
    conversations: state.conversations,
    events: state.events,
    // On memory the runtime's own records (its default); on PostgreSQL the shared ones.
    upstreamOwnership: store === 'memory' ? undefined : state.upstreamOwnership,
    taskStoreFor: state.taskStoreFor
  })
  const router = converseRouter({
    agents: runtime.agents.map((agent) => ({ ...agent, turnLock: state.taskTurnLockFor(agent.id) })),
    events: state.events,
    authenticator: createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: BOB_KEY }] }),
    logger: quiet
  })
  const app = express()
  app.use(router)
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(async () => {
    await router.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await runtime.close()
    await state.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function serve (t: Test, door: DoorName, store: StoreName, upstream: RunningUpstream): Promise<string> {
  return door === 'fastify' ? await fastifyGateway(t, store, upstream) : await expressRouter(t, store, upstream)
}

/** A streaming method's frames (SSE), as sent. */
async function frames (base: string, method: string, params: Json, key: string): Promise<Json[]> {
  const response = await fetch(`${base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}` },
    body: rpc(method, params, 1)
  })
  const text = await response.text()
  // An error known before the stream is a plain JSON-RPC reply: one "frame".
  if ((response.headers.get('content-type') ?? '').startsWith('application/json')) return [JSON.parse(text) as Json]
  return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Json)
}

/** An error with the task id swapped for a placeholder: another caller's task against a missing one. */
function withoutId (error: unknown, id: string): unknown {
  return JSON.parse(JSON.stringify(error).replaceAll(id, '<id>'))
}

for (const store of STORES) {
  for (const door of DOORS) {
    const skip = store === 'postgresql' && url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false
    t.test(`${door} door, ${store}: another caller's upstream task is -32001 on every method, its context refused, ListTasks the caller's own`, { skip }, async (t) => {
      const upstream = await startUpstream()
      t.teardown(() => upstream.close())
      const base = await serve(t, door, store, upstream)
      const as = async (key: string, method: string, params: Json) => (await call(base, method, params, key, 'shop')).body
      if (door === 'fastify') {
        const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Json
        t.ok(card.securitySchemes?.apiKey, 'the card names the gateway\'s scheme: callers authenticate to the gateway')
      }
      const task = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('ask me') })).result.task
      t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED', 'alice has an open upstream task')
      const forwarded = upstream.seen.length

      const missing = randomUUID()
      const unary: Array<[string, (id: string) => Json]> = [
        ['GetTask', (id) => ({ id })],
        ['CancelTask', (id) => ({ id })],
        ['SendMessage', (id) => ({ message: userMessage('size M', { taskId: id }) })]
      ]
      for (const [method, params] of unary) {
        const theirs = await as(BOB_KEY, method, params(task.id))
        const none = await as(BOB_KEY, method, params(missing))
        t.equal(theirs.error?.code, -32001, `${method}: -32001`)
        t.same(withoutId(theirs.error, task.id), withoutId(none.error, missing), `${method}: byte for byte a missing task's answer`)
      }
      const streaming: Array<[string, (id: string) => Json]> = [
        ['SubscribeToTask', (id) => ({ id })],
        ['SendStreamingMessage', (id) => ({ message: userMessage('size M', { taskId: id }) })]
      ]
      for (const [method, params] of streaming) {
        const theirs = await frames(base, method, params(task.id), BOB_KEY)
        const none = await frames(base, method, params(missing), BOB_KEY)
        t.equal(theirs.length, 1, `${method}: one frame`)
        t.equal(theirs[0].error?.code, -32001, `${method}: -32001`)
        t.same(withoutId(theirs, task.id), withoutId(none, missing), `${method}: byte for byte a missing task's answer`)
      }
      for (const method of ['SendMessage', 'SendStreamingMessage']) {
        const params = { message: userMessage('let me in', { contextId: task.contextId }) }
        const error = method === 'SendMessage' ? (await as(BOB_KEY, method, params)).error : (await frames(base, method, params, BOB_KEY))[0].error
        t.match(error, { code: -32602, data: [{ fieldViolations: [{ field: 'message.contextId' }] }] }, `${method}: alice's contextId refused`)
      }
      t.equal(upstream.seen.length, forwarded, 'nothing of it went upstream')

      const bobs = await as(BOB_KEY, 'ListTasks', {})
      t.same([bobs.result.tasks, bobs.result.totalSize], [[], 0], 'bob lists nothing of alice\'s')
      t.same((await as(BOB_KEY, 'ListTasks', { contextId: task.contextId })).result.totalSize, 0, 'not even by her contextId')
      const own = (await as(BOB_KEY, 'SendMessage', { message: userMessage('ask for bob') })).result.task
      const listed = (await as(BOB_KEY, 'ListTasks', {})).result
      t.same([listed.tasks.map((entry: Json) => entry.id), listed.totalSize], [[own.id], 1], 'bob lists his own')

      // The official client, as alice: her task is hers on every method.
      const alice = await sdkClient(`${base}/a2a/shop/`, ALICE_KEY)
      t.equal((await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }))).id, task.id, 'alice reads her task')
      const hers = await alice.listTasks({} as any)
      t.same([hers.tasks.map((entry) => entry.id), hers.totalSize], [[task.id], 1], 'alice lists hers only')
      const bob = await sdkClient(`${base}/a2a/shop/`, BOB_KEY)
      await t.rejects(bob.getTask(GetTaskRequest.fromJSON({ id: task.id })), 'the official client, as bob: not found')
      const done = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('size M', { taskId: task.id, contextId: task.contextId }) })).result.task
      t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'alice continues her task in her context')
      const held = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('hold on'), configuration: { returnImmediately: true } })).result.task
      t.equal((await as(BOB_KEY, 'CancelTask', { id: held.id })).error?.code, -32001, 'bob cannot cancel it')
      t.equal((await as(ALICE_KEY, 'CancelTask', { id: held.id })).result.status.state, 'TASK_STATE_CANCELED', 'alice can')
    })
  }

  t.test(`${store}: the takeover inbox is the caller's: a person's replies reach alice only, the view names her, her held task is hers`, {
    skip: store === 'postgresql' && url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false
  }, async (t) => {
    const upstream = await startUpstream()
    t.teardown(() => upstream.close())
    const base = await fastifyGateway(t, store, upstream)
    const as = async (key: string, method: string, params: Json) => (await call(base, method, params, key, 'shop')).body
    const operator = async (path: string, body?: Json) => {
      const response = await fetch(`${base}/api/v1/agents/shop/conversations${path}`, {
        method: body === undefined && !path.endsWith('takeover') ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      return { status: response.status, body: await response.json() as Json }
    }
    const first = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('I need a refund') })).result.message
    const contextId = first.contextId as string
    const key = encodeURIComponent(`alice/${contextId}`)
    const listed = (await operator('')).body.conversations
    t.same(listed.map((entry: Json) => [entry.contextId, entry.caller]), [[`alice/${contextId}`, { id: 'alice', contextId }]], 'the inbox names the caller')
    t.equal((await operator(`/${key}/takeover`)).status, 200)
    for (const text of ['refund code R-777', 'S-888']) {
      t.match((await operator(`/${key}/messages`, { text })).body, { delivered: false }, `"${text}" waits for alice's next turn`)
    }

    const bobs = await as(BOB_KEY, 'SendMessage', { message: userMessage('any codes for me?', { contextId }) })
    t.equal(bobs.error?.code, -32602, 'bob cannot join alice\'s conversation')
    t.notMatch(JSON.stringify(bobs), /R-777|S-888/, 'and receives none of the replies')
    const bobStream = await frames(base, 'SendStreamingMessage', { message: userMessage('any codes?', { contextId }) }, BOB_KEY)
    t.notMatch(JSON.stringify(bobStream), /R-777|S-888/, 'nor by a stream')

    const held = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('still there?', { contextId }) })).result.task
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    t.match(JSON.stringify(held.history), /R-777[\s\S]*S-888/, 'alice\'s held task carries both replies')
    const got = await as(ALICE_KEY, 'GetTask', { id: held.id })
    t.equal(got.result?.id, held.id, 'alice reads her own held task')
    const again = (await as(ALICE_KEY, 'SendMessage', { message: userMessage('hello?', { taskId: held.id }) })).result?.task
    t.same([again?.id, again?.status.state], [held.id, 'TASK_STATE_WORKING'], 'her held task continued by its id alone')
    t.equal((await as(BOB_KEY, 'SendMessage', { message: userMessage('me too', { taskId: held.id }) })).error?.code, -32001, 'not by bob')
    const theirs = await as(BOB_KEY, 'GetTask', { id: held.id })
    t.same(withoutId(theirs.error, held.id), withoutId((await as(BOB_KEY, 'GetTask', { id: 'no-such-task' })).error, 'no-such-task'), 'bob: -32001, as a missing task')
    const view = (await operator(`/${key}`)).body
    t.same(view.caller, { id: 'alice', contextId }, 'the operator view names the caller')
    const trace = (await operator(`/${key}/trace`)).body
    t.notMatch(JSON.stringify(trace.turns), /any codes/, 'bob\'s messages are not in alice\'s conversation')
    t.same((await operator('')).body.conversations.map((entry: Json) => entry.caller.id), ['alice'], 'no conversation of bob\'s was made of hers')
  })
}
