/** a2aEndpoint: registration and every non-streaming A2A 1.0 method over HTTP (inject). */
import t from 'tap'
import Fastify from 'fastify'
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { CONVERSE_EXTENSION_URI, InvalidOptionError } from 'a2a-converse'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { resolveEndpointOptions } from '../../../packages/a2a-converse/src/http/endpoint-options.js'
import type { A2AEndpointOptions } from '../../../packages/a2a-converse/src/fastify/a2a-endpoint-options.js'
import { buildApp, logCapture, rpc, userMessage } from '../../fixtures/a2a-app.js'
import { hangingExecutor, inputRequiredExecutor, messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { contextIdOf } from '../../fixtures/context-ids.js'

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
const CTX = contextIdOf('ctx')
const info = (reason: string, metadata: Record<string, string> = {}) => [{ '@type': ERROR_INFO, reason, domain: 'a2a-protocol.org', metadata }]

t.test('registration checks its options and names them', async (t) => {
  const executor = messageExecutor()
  async function register (options: unknown, withConverse = true) {
    const app = Fastify()
    t.teardown(() => app.close())
    if (withConverse) await app.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }] })
    await app.register(a2aEndpoint, options as A2AEndpointOptions)
    return app
  }
  const cases: Array<[unknown, string]> = [
    [{ agents: [] }, 'option "agents" must be a non-empty array'],
    [{ agents: 'demo' }, 'option "agents" must be a non-empty array'],
    [{ agents: [null] }, 'option "agents[0]" must be an object'],
    [{ agents: [{ id: 'other', executor }] }, 'option "agents[0].id" must name an agent declared to the converse plugin'],
    [{ agents: [{ id: 5, executor }] }, 'option "agents[0].id" must name an agent declared to the converse plugin'],
    [{ agents: [{ id: 'demo', executor }, { id: 'demo', executor }] }, 'option "agents[1].id" "demo" is served twice'],
    [{ agents: [{ id: 'demo' }] }, 'option "agents[0].executor" must be an AgentExecutor (execute and cancelTask methods)'],
    [{ agents: [{ id: 'demo', executor: { execute () {} } }] }, 'option "agents[0].executor" must be an AgentExecutor (execute and cancelTask methods)'],
    [{ agents: [{ id: 'demo', executor: null }] }, 'option "agents[0].executor" must be an AgentExecutor (execute and cancelTask methods)'],
    [{ agents: [{ id: 'demo', executor, taskStore: {} }] }, 'option "agents[0].taskStore" must be a TaskStore (load, save and list methods)'],
    [{ agents: [{ id: 'demo', executor, taskStore: null }] }, 'option "agents[0].taskStore" must be a TaskStore (load, save and list methods)'],
    [{ agents: [{ id: 'demo', executor, extendedCard: {} }] }, 'option "agents[0].extendedCard" must be a function of the request'],
    [{ agents: [{ id: 'demo', executor, capabilities: 'all' }] }, 'option "agents[0].capabilities" must be an object'],
    [{ agents: [{ id: 'demo', executor, capabilities: null }] }, 'option "agents[0].capabilities" must be an object'],
    [{ agents: [{ id: 'demo', executor, capabilities: { streaming: 'yes' } }] }, 'option "agents[0].capabilities.streaming" must be a boolean'],
    [{ agents: [{ id: 'demo', executor }], bodyLimit: 0 }, 'option "bodyLimit" must be a positive integer (bytes)'],
    [{ agents: [{ id: 'demo', executor }], bodyLimit: 1.5 }, 'option "bodyLimit" must be a positive integer (bytes)'],
    [{ agents: [{ id: 'demo', executor }], events: {} }, 'option "events" must be a task event hub (a subscribe(taskId, listener) method)'],
    [{ agents: [{ id: 'demo', executor }], events: null }, 'option "events" must be a task event hub (a subscribe(taskId, listener) method)'],
    [{ agents: [{ id: 'demo', executor }], a2aVersions: ['0.3'] }, 'option "a2aVersions" must be [\'1.0\'] or [\'0.3\', \'1.0\'] (1.0 is always served)'],
    [{ agents: [{ id: 'demo', executor }], a2aVersions: ['1.0', '0.2'] }, 'option "a2aVersions" must be [\'1.0\'] or [\'0.3\', \'1.0\'] (1.0 is always served)'],
    [{ agents: [{ id: 'demo', executor }], a2aVersions: '1.0' }, 'option "a2aVersions" must be [\'1.0\'] or [\'0.3\', \'1.0\'] (1.0 is always served)']
  ]
  for (const [options, message] of cases) {
    await t.rejects(register(options), { name: 'InvalidOptionError', message }, message)
  }
  await t.rejects(register({ agents: [{ id: 'demo', executor }] }, false),
    { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: /'a2a-converse' of plugin 'a2a-converse-endpoint'/ },
    'fastify-plugin metadata: the converse plugin is a declared dependency')
  t.throws(() => resolveEndpointOptions({ agents: [{ id: 'demo', executor }] }, undefined),
    new InvalidOptionError('agents', 'need the converse plugin: register it before a2aEndpoint'))
  const backend = { facts: { capabilities: {}, requiredExtensions: [] }, call () {}, stream () {}, toError () {} }
  await t.rejects(register({ agents: [{ id: 'demo', executor, backend }] }),
    { message: 'option "agents[0].backend" takes the place of executor: give one of them' })
  await t.rejects(register({ agents: [{ id: 'demo', backend: { facts: {} } }] }),
    { message: 'option "agents[0].backend" must be an A2ABackend (facts, call, stream and toError)' })
  await t.rejects(register({ agents: [{ id: 'demo', backend: null }] }),
    { message: 'option "agents[0].backend" must be an A2ABackend (facts, call, stream and toError)' })
  t.throws(() => resolveEndpointOptions(null as unknown as A2AEndpointOptions, { agents: new Map() } as never),
    { message: 'option "options" must be an object' })
})

t.test('capabilities: option, card, defaults, contradictions', async (t) => {
  const executor = messageExecutor()
  async function card (cardCapabilities: Record<string, unknown> | undefined, capabilities?: Record<string, unknown>) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(converse, { agents: [{ id: 'demo', card: { name: 'D', description: 'd', capabilities: cardCapabilities } }] })
    const { agents: [agent] } = resolveEndpointOptions({ agents: [{ id: 'demo', executor, capabilities }] }, app.converse)
    return agent.card.capabilities
  }
  t.match(await card(undefined), { streaming: true, pushNotifications: false }, 'defaults: streaming on, push off')
  t.match(await card({ streaming: false, pushNotifications: true }), { streaming: false, pushNotifications: true }, 'the card decides')
  t.match(await card({}, { streaming: false, pushNotifications: true }), { streaming: false, pushNotifications: true }, 'the option decides')
  t.match(await card({ streaming: true }, { streaming: true }), { streaming: true })
  await t.rejects(card({ streaming: true }, { streaming: false }),
    { message: 'option "agents[0].capabilities.streaming" contradicts the card\'s capabilities.streaming' })
  await t.rejects(card({ pushNotifications: false }, { pushNotifications: true }),
    { message: 'option "agents[0].capabilities.pushNotifications" contradicts the card\'s capabilities.pushNotifications' })
})

t.test('an unknown agent id is a 404 with a JSON body', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const res = await rpc(app, 'SendMessage', { message: userMessage('hi') }, { agent: 'nobody' })
  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], /^application\/json/)
  t.strictSame(res.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' })
  const bad = await app.inject({ method: 'POST', url: '/a2a/nobody', headers: { 'content-type': 'application/json' }, payload: '{bad' })
  t.equal(bad.statusCode, 404, 'checked before the body is parsed')
})

t.test('SendMessage answered with a Message: decorated with the extension, stripped without it', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const plain = await rpc(app, 'SendMessage', { message: userMessage('hello') }, { id: 'req-1' })
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['a2a-extensions'], undefined, 'nothing activated, nothing echoed')
  const body = plain.json()
  t.equal(body.jsonrpc, '2.0')
  t.equal(body.id, 'req-1')
  t.match(body.result.message, { role: 'ROLE_AGENT', parts: [{ text: 'echo: hello' }] })
  t.type(body.result.message.contextId, 'string')
  t.notOk(body.result.message.extensions, 'no envelope')
  t.notOk(body.result.message.metadata?.[CONVERSE_EXTENSION_URI])

  const active = await rpc(app, 'SendMessage', { message: userMessage('hello') }, { headers: { 'a2a-extensions': CONVERSE_EXTENSION_URI } })
  t.equal(active.headers['a2a-extensions'], CONVERSE_EXTENSION_URI)
  const message = active.json().result.message
  t.strictSame(message.extensions, [CONVERSE_EXTENSION_URI])
  t.match(message.metadata[CONVERSE_EXTENSION_URI], { author: 'agent', answerCoverage: { availability: 'assessed', coverage: 'answered' } })
})

t.test('SendMessage answered with a Task', async (t) => {
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const res = await rpc(app, 'SendMessage', { message: userMessage('q') })
  const task = res.json().result.task
  t.match(task, { status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'answer', parts: [{ text: 'done: q' }] }] })
  t.equal(task.history.length, 1)
  const noHistory = await rpc(app, 'SendMessage', { message: userMessage('q'), configuration: { historyLength: 0 } })
  t.notOk(noHistory.json().result.task.history, 'historyLength 0 omits history')
  const ids = await rpc(app, 'SendMessage', { message: userMessage('q', { contextId: contextIdOf('ctx-mine') }) })
  t.equal(ids.json().result.task.contextId, contextIdOf('ctx-mine'), 'a client contextId (a UUID: a walk-in) is kept')
})

t.test('multi-turn: INPUT_REQUIRED, follow-up, terminal task, unknown task, contextId mismatch', async (t) => {
  const app = await buildApp(inputRequiredExecutor())
  t.teardown(() => app.close())
  const first = (await rpc(app, 'SendMessage', { message: userMessage('refund') })).json().result.task
  t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(first.status.message.parts[0].text, 'Which order?')

  const mismatch = (await rpc(app, 'SendMessage', { message: userMessage('A-1', { taskId: first.id, contextId: contextIdOf('other') }) })).json()
  t.equal(mismatch.error.code, -32602)
  t.strictSame(mismatch.error.data[0].fieldViolations[0].field, 'message.contextId')

  const second = (await rpc(app, 'SendMessage', { message: userMessage('A-1', { taskId: first.id }) })).json().result.task
  t.equal(second.id, first.id)
  t.equal(second.contextId, first.contextId)
  t.equal(second.status.state, 'TASK_STATE_COMPLETED')

  const terminal = (await rpc(app, 'SendMessage', { message: userMessage('again', { taskId: first.id }) }, { id: 5 })).json()
  t.equal(terminal.id, 5)
  t.equal(terminal.error.code, -32004)
  t.strictSame(terminal.error.data, info('UNSUPPORTED_OPERATION', { taskId: first.id }))

  const unknown = (await rpc(app, 'SendMessage', { message: userMessage('x', { taskId: 'no-such-task' }) })).json()
  t.equal(unknown.error.code, -32001)
  t.strictSame(unknown.error.data, info('TASK_NOT_FOUND', { taskId: 'no-such-task' }))
})

t.test('GetTask', async (t) => {
  const app = await buildApp(inputRequiredExecutor())
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('refund') })).json().result.task
  await rpc(app, 'SendMessage', { message: userMessage('A-1', { taskId: task.id }) })
  const got = (await rpc(app, 'GetTask', { id: task.id })).json().result
  t.equal(got.id, task.id)
  t.equal(got.status.state, 'TASK_STATE_COMPLETED')
  t.strictSame(got.history.map((m: { role: string, parts: Array<{ text: string }> }) => `${m.role}:${m.parts[0].text}`),
    ['ROLE_USER:refund', 'ROLE_AGENT:Which order?', 'ROLE_USER:A-1', 'ROLE_AGENT:order A-1 found'])
  t.match((await rpc(app, 'GetTask', { id: task.id, historyLength: 1 })).json().result.history, [{ parts: [{ text: 'order A-1 found' }] }])
  t.notOk((await rpc(app, 'GetTask', { id: task.id, historyLength: 0 })).json().result.history)
  const unknown = (await rpc(app, 'GetTask', { id: 'nope' })).json()
  t.equal(unknown.error.code, -32001)
  t.strictSame(unknown.error.data, info('TASK_NOT_FOUND', { taskId: 'nope' }))
})

t.test('ListTasks', async (t) => {
  // A walk-in lists the tasks of one conversation (test/library/auth/walk-ins.test.ts): all of them are in CTX.
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const empty = (await rpc(app, 'ListTasks', { contextId: CTX })).json().result
  t.strictSame(empty, { tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 }, 'every member present, even on an empty page')
  for (const text of ['a', 'b', 'c']) await rpc(app, 'SendMessage', { message: userMessage(text, { contextId: CTX }) })
  const page = (await rpc(app, 'ListTasks', { contextId: CTX, pageSize: 2 })).json().result
  t.equal(page.tasks.length, 2)
  t.equal(page.totalSize, 3)
  t.equal(page.pageSize, 2)
  t.not(page.nextPageToken, '')
  t.notOk(page.tasks.some((task: Record<string, unknown>) => 'artifacts' in task), 'no artifacts key without includeArtifacts')
  const rest = (await rpc(app, 'ListTasks', { contextId: CTX, pageSize: 2, pageToken: page.nextPageToken })).json().result
  t.equal(rest.tasks.length, 1)
  t.equal(rest.nextPageToken, '')
  const withArtifacts = (await rpc(app, 'ListTasks', { includeArtifacts: true, status: 'TASK_STATE_COMPLETED', contextId: CTX })).json().result
  t.equal(withArtifacts.tasks.length, 3)
  t.ok(withArtifacts.tasks.every((task: { artifacts?: unknown[] }) => task.artifacts?.length === 1))
  t.equal((await rpc(app, 'ListTasks', { contextId: CTX, status: 'TASK_STATE_WORKING' })).json().result.tasks.length, 0)
  t.equal((await rpc(app, 'ListTasks', { contextId: CTX, statusTimestampAfter: '2000-01-01T00:00:00Z' })).json().result.tasks.length, 3)
  const badToken = (await rpc(app, 'ListTasks', { contextId: CTX, pageToken: 'bm90LWEtY3Vyc29y' })).json()
  t.equal(badToken.error.code, -32602, 'a token that is no cursor is an invalid param (from the SDK)')
  t.equal(badToken.error.data[0].fieldViolations[0].field, 'params')
})

t.test('CancelTask', async (t) => {
  const executor = hangingExecutor()
  const app = await buildApp(executor)
  t.teardown(() => app.close())
  const working = (await rpc(app, 'SendMessage', { message: userMessage('long'), configuration: { returnImmediately: true } })).json().result.task
  t.equal(working.status.state, 'TASK_STATE_SUBMITTED', 'returnImmediately answers at the first task event')
  await executor.started
  const canceled = (await rpc(app, 'CancelTask', { id: working.id })).json().result
  t.equal(canceled.id, working.id)
  t.equal(canceled.status.state, 'TASK_STATE_CANCELED')
  t.strictSame(executor.canceled, [working.id])
  const again = (await rpc(app, 'CancelTask', { id: working.id })).json().result
  t.equal(again.status.state, 'TASK_STATE_CANCELED', 'canceling a canceled task answers the task')
  const unknown = (await rpc(app, 'CancelTask', { id: 'nope' })).json()
  t.equal(unknown.error.code, -32001)

  const done = await buildApp(taskExecutor())
  t.teardown(() => done.close())
  const completed = (await rpc(done, 'SendMessage', { message: userMessage('q') })).json().result.task
  const notCancelable = (await rpc(done, 'CancelTask', { id: completed.id })).json()
  t.equal(notCancelable.error.code, -32002)
  t.strictSame(notCancelable.error.data, info('TASK_NOT_CANCELABLE', { taskId: completed.id }))
})

t.test('push-notification config methods: -32003 unless declared', async (t) => {
  const app = await buildApp(taskExecutor())
  t.teardown(() => app.close())
  const params = { taskId: 't', id: 'c', url: 'https://hook.example.com' }
  for (const method of ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig']) {
    const res = (await rpc(app, method, params)).json()
    t.equal(res.error.code, -32003, method)
    t.strictSame(res.error.data, info('PUSH_NOTIFICATION_NOT_SUPPORTED'), method)
  }
  const inline = (await rpc(app, 'SendMessage', { message: userMessage('q'), configuration: { taskPushNotificationConfig: { url: 'http://127.0.0.1:9/' } } })).json()
  t.ok(inline.result.task, 'an inline config to an agent without push notifications is ignored (the SDK\'s rule)')
})

t.test('push-notification config methods when declared', async (t) => {
  const app = await buildApp(taskExecutor(), { capabilities: { pushNotifications: true } })
  t.teardown(() => app.close())
  const task = (await rpc(app, 'SendMessage', { message: userMessage('q') })).json().result.task
  const refused = (await rpc(app, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'http://127.0.0.1:9/hook' })).json().error
  t.equal(refused.code, -32602, 'the default URL policy: no plain http, no loopback')
  t.equal(refused.data[0].fieldViolations[0].field, 'url')
  const config = { taskId: task.id, id: 'cfg-1', url: 'https://hook.example.com/hook', authentication: { scheme: 'Bearer', credentials: 'secret' } }
  const created = (await rpc(app, 'CreateTaskPushNotificationConfig', config)).json().result
  t.match(created, config)
  t.match((await rpc(app, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'cfg-1' })).json().result, config)
  const listed = (await rpc(app, 'ListTaskPushNotificationConfigs', { taskId: task.id })).json().result
  t.equal(listed.configs.length, 1)
  t.equal(listed.nextPageToken, '')
  t.strictSame((await rpc(app, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'cfg-1' })).json().result, {})
  t.strictSame((await rpc(app, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'cfg-1' })).json().result, {}, 'idempotent')
  t.strictSame((await rpc(app, 'ListTaskPushNotificationConfigs', { taskId: task.id })).json().result, { configs: [], nextPageToken: '' })
  t.equal((await rpc(app, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'cfg-1' })).json().error.code, -32001)
  t.equal((await rpc(app, 'CreateTaskPushNotificationConfig', { ...config, taskId: 'nope' })).json().error.code, -32001)
})

t.test('GetExtendedAgentCard', async (t) => {
  const off = await buildApp(messageExecutor())
  t.teardown(() => off.close())
  const undeclared = (await rpc(off, 'GetExtendedAgentCard')).json()
  t.equal(undeclared.error.code, -32004)

  const unconfigured = await buildApp(messageExecutor(), { card: { capabilities: { extendedAgentCard: true } } })
  t.teardown(() => unconfigured.close())
  const missing = (await rpc(unconfigured, 'GetExtendedAgentCard', {})).json()
  t.equal(missing.error.code, -32007)
  t.strictSame(missing.error.data, info('EXTENDED_AGENT_CARD_NOT_CONFIGURED'))

  const on = await buildApp(messageExecutor(), {
    card: { capabilities: { extendedAgentCard: true } },
    extendedCard: async (request) => ({ ...request.server.converse.cardFor('demo', request), description: 'more' })
  })
  t.teardown(() => on.close())
  const card = (await rpc(on, 'GetExtendedAgentCard')).json().result
  t.equal(card.description, 'more')
  t.equal(card.supportedInterfaces[0].url, 'http://localhost:80/a2a/demo')
})

t.test('required extensions: -32008 unless activated', async (t) => {
  const REQUIRED = 'https://example.com/ext/required/v1'
  const app = await buildApp(messageExecutor(), { card: { capabilities: { extensions: [{ uri: REQUIRED, required: true }] } } })
  t.teardown(() => app.close())
  const missing = (await rpc(app, 'SendMessage', { message: userMessage('x') })).json()
  t.equal(missing.error.code, -32008)
  t.strictSame(missing.error.data, info('EXTENSION_SUPPORT_REQUIRED', { missingExtensions: REQUIRED }))
  const ok = await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': `${REQUIRED}, ${CONVERSE_EXTENSION_URI}` } })
  t.equal(ok.json().result.message.parts[0].text, 'echo: x')
  t.equal(ok.headers['a2a-extensions'], `${REQUIRED}, ${CONVERSE_EXTENSION_URI}`)
})

t.test('A2A-Version (§3.6), 1.0 only (a2aVersions [\'1.0\'])', async (t) => {
  const app = await buildApp(messageExecutor(), { a2aVersions: ['1.0'] })
  t.teardown(() => app.close())
  const missing = (await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '' } })).json()
  t.strictSame(missing.error, {
    code: -32009,
    message: 'A2A version 0.3 is not supported',
    data: info('VERSION_NOT_SUPPORTED', { requestedVersion: '0.3', supportedVersions: '1.0' })
  })
  const headerless = await app.inject({
    method: 'POST', url: '/a2a/demo', headers: { 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }
  })
  t.equal(headerless.json().error.code, -32009)
  const legacy = (await rpc(app, 'message/send', { message: userMessage('x') }, { headers: { 'a2a-version': '' } })).json()
  t.equal(legacy.error.code, -32009, 'a 0.3 client learns the version is not served')
  t.equal((await rpc(app, 'message/send', {}, {})).json().error.code, -32601, '0.3 method names under 1.0: method not found')
  t.equal((await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '2.0' } })).json().error.code, -32009)
  t.ok((await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '1.0.3' } })).json().result)
  const query = await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '' }, url: '/a2a/demo?A2A-Version=1.0' })
  t.ok(query.json().result, 'the query parameter is accepted')
})

t.test('A2A-Version (§3.6), 0.3 served too (the default): no version is 0.3, translated', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const v1Name = (await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '' } })).json()
  t.equal(v1Name.error.code, -32601, 'a 1.0 name without its version is no 0.3 method')
  t.match(v1Name.error.message, /send A2A-Version: 1\.0/)
  const legacy = (await rpc(app, 'message/send', { message: { kind: 'message', messageId: 'm03', role: 'user', parts: [{ kind: 'text', text: 'x' }] } }, { headers: { 'a2a-version': '' } })).json()
  t.match(legacy.result, { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'echo: x' }] }, 'a 0.3 message/send, answered in 0.3')
  const explicit = (await rpc(app, 'tasks/get', { id: 'nope' }, { headers: { 'a2a-version': '0.3' } })).json()
  t.equal(explicit.error.code, -32001, 'A2A-Version: 0.3 is 0.3 too')
  t.equal((await rpc(app, 'message/send', {}, {})).json().error.code, -32601, '0.3 method names under 1.0: method not found')
  t.equal((await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '2.0' } })).json().error.code, -32009)
  const query = await rpc(app, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '' }, url: '/a2a/demo?A2A-Version=1.0' })
  t.ok(query.json().result, 'the query parameter is accepted')
})

t.test('internal errors: -32603 with a clear message, logged, no stack', async (t) => {
  const capture = logCapture()
  const broken: TaskStore = Object.assign(new InMemoryTaskStore(), {
    async load (): Promise<undefined> { throw new Error('database is down at 10.0.0.7') }
  })
  const app = await buildApp(taskExecutor(), { taskStore: broken, logger: capture.logger })
  t.teardown(() => app.close())
  const res = await rpc(app, 'GetTask', { id: 't' }, { id: 3 })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error while handling GetTask' } })
  t.notMatch(res.body, /10\.0\.0\.7|at /)
  t.equal(capture.lines.length, 1)
  t.match(capture.lines[0], { msg: 'A2A request handler failed', method: 'GetTask', err: { message: 'database is down at 10.0.0.7' } })
})

t.test('__proto__ and constructor keys in metadata are inert', async (t) => {
  const app = await buildApp(messageExecutor())
  t.teardown(() => app.close())
  const payload = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{' +
    '"metadata":{"__proto__":{"polluted":"params"},"constructor":{"prototype":{"polluted":"params"}}},' +
    '"message":{"messageId":"m-proto","role":"ROLE_USER","parts":[{"text":"x","metadata":{"__proto__":{"polluted":"part"}}}],' +
    '"metadata":{"__proto__":{"polluted":"message"},"constructor":{"prototype":{"polluted":"message"}},"toString":"x"}}}}'
  const res = await app.inject({ method: 'POST', url: '/a2a/demo', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, payload })
  t.equal(res.statusCode, 200)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  t.equal((Object as unknown as Record<string, unknown>).polluted, undefined)
  t.equal(Object.getPrototypeOf({}), Object.prototype)
  // The echo executor returns the request message's metadata: the keys come back as plain data.
  t.match(res.body, /"metadata":\{"__proto__":\{"polluted":"message"\},"constructor":\{"prototype":\{"polluted":"message"\}\},"toString":"x"\}/)
  const metadata = JSON.parse(res.body).result.message.metadata
  t.ok(Object.hasOwn(metadata, '__proto__'))
  t.equal(Object.getPrototypeOf(metadata), Object.prototype)
})
