/**
 * The library doors take an authenticator too: the Fastify `a2aEndpoint` (with push notifications on, so the
 * push-config methods' isolation shows) and the Express router, both on real ports. Options naming the option.
 */
import t, { type Test } from 'tap'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Fastify from 'fastify'
import { createAuthenticator } from '../../../packages/a2a-converse/src/auth/authenticator.js'
import { createA2AService } from '../../../packages/a2a-converse/src/a2a/service.js'
import { converseRouter } from 'a2a-converse/express'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { createConverseExtension, InvalidOptionError } from 'a2a-converse'
import { ALICE_KEY, BOB_KEY, call } from '../../fixtures/auth.js'
import { inputRequiredExecutor, messageExecutor } from '../../fixtures/a2a-executors.js'
import { userMessage } from '../../fixtures/a2a-app.js'

type Json = Record<string, any>
const apiKeys = [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: BOB_KEY }]
const card = { name: 'Demo', description: 'A test agent' }

async function fastifyDoor (t: Test): Promise<string> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: [{ id: 'demo', card }] })
  await app.register(a2aEndpoint, {
    authenticator: createAuthenticator({ apiKeys }),
    agents: [{ id: 'demo', executor: inputRequiredExecutor(), capabilities: { pushNotifications: true } }]
  })
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

t.test('push-config methods: another caller\'s task is -32001 for each of the four', async (t) => {
  const base = await fastifyDoor(t)
  const task = (await call(base, 'SendMessage', { message: userMessage('which order?') }, ALICE_KEY)).body.result.task
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const created = await call(base, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://hooks.example.test/a' }, ALICE_KEY)
  const configId = created.body.result.id as string
  t.type(configId, 'string', 'the owner creates a config')

  const bob = async (method: string, params: Json) => (await call(base, method, params, BOB_KEY)).body.error?.code
  t.equal(await bob('CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://hooks.example.test/b' }), -32001, 'Create')
  t.equal(await bob('GetTaskPushNotificationConfig', { taskId: task.id, id: configId }), -32001, 'Get')
  t.equal(await bob('ListTaskPushNotificationConfigs', { taskId: task.id }), -32001, 'List')
  t.equal(await bob('DeleteTaskPushNotificationConfig', { taskId: task.id, id: configId }), -32001, 'Delete')

  const listed = (await call(base, 'ListTaskPushNotificationConfigs', { taskId: task.id }, ALICE_KEY)).body.result
  t.same(listed.configs.map((config: Json) => config.url), ['https://hooks.example.test/a'], "the owner's config is untouched, and only hers")
  t.same((await call(base, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: configId }, ALICE_KEY)).body.result, {})
})

t.test('the Express router authenticates with the same authenticator and scopes tasks per caller', async (t) => {
  const app = express()
  app.use(express.json())
  app.use(converseRouter({
    agents: [{ id: 'demo', card, executor: inputRequiredExecutor() }, { id: 'open', card, executor: messageExecutor(), access: 'walk-in' }],
    authenticator: createAuthenticator({ apiKeys })
  }))
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const refused = await call(base, 'ListTasks', {})
  t.equal(refused.status, 401)
  t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="a2a"')
  t.equal(refused.body.error.code, -32000)
  const task = (await call(base, 'SendMessage', { message: userMessage('which order?') }, ALICE_KEY)).body.result.task
  t.equal((await call(base, 'GetTask', { id: task.id }, BOB_KEY)).body.error.code, -32001)
  t.equal((await call(base, 'GetTask', { id: task.id }, ALICE_KEY)).body.result.id, task.id)
  t.equal((await call(base, 'ListTasks', {}, undefined, 'open')).status, 200, 'a walk-in agent next to it')
})

t.test('the service tells a door who may go on: a walk-in agent anyone, an unknown agent nobody (404)', async (t) => {
  const extension = createConverseExtension({ agents: [{ id: 'demo', card }] })
  const backends = new Map([['demo', { facts: {}, call: async () => {}, stream: () => ({}), toError: () => ({}) } as never]])
  const service = createA2AService({ extension, backends })
  t.same(await service.authenticate('demo', {}), { kind: 'allowed' })
  t.match(await service.authenticate('nope', {}), { kind: 'refused', status: 404 })
})

t.test('options are checked and errors name the option', async (t) => {
  const authenticator = createAuthenticator({ apiKeys })
  const extension = createConverseExtension({ agents: [{ id: 'demo', card }] })
  const cases: Array<[() => unknown, string]> = [
    [() => converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor() }], authenticator: {} as never }), 'authenticator'],
    [() => converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor(), access: 'authenticated' }] }), 'agents[0].access'],
    [() => converseRouter({ agents: [{ id: 'demo', card, executor: messageExecutor(), access: 'open' as never }], authenticator }), 'agents[0].access'],
    [() => createA2AService({ extension, backends: new Map(), authenticated: new Map([['demo', authenticator]]) }), 'authenticated'],
    [() => createA2AService({
      extension,
      backends: new Map([['demo', { facts: {}, call: async () => {}, stream: () => ({}), toError: () => ({}) } as never]]),
      authenticated: new Map([['demo', {} as never]])
    }), 'authenticated']
  ]
  for (const [build, option] of cases) {
    t.throws(build, InvalidOptionError, option)
    t.throws(build, { option } as never, option)
  }
})
