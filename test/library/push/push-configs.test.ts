/**
 * The four push-config methods and inline configs through the gateway: the official @a2a-js/sdk client setting
 * configs, the HTTP+JSON binding, configs owned by their caller (another caller's task is -32001), the URL policy
 * refusing internal and plain-http webhooks without the allow-list (-32602 naming the field, nothing run), and
 * MAX_PUSH_CONFIGS_PER_CALLER.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { SendMessageRequest, TaskPushNotificationConfig, type Task } from '@a2a-js/sdk'
import { ALICE_KEY, API_KEYS, BOB_KEY, call, sdkClient } from '../../fixtures/auth.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { webhookReceiver } from '../../fixtures/webhook-receiver.js'

const V1 = { 'a2a-version': '1.0', 'content-type': 'application/json' }

function bookTable (contextId = randomUUID()) {
  return { message: { messageId: randomUUID(), role: 'ROLE_USER', contextId, parts: [{ text: 'book a table' }] } }
}

t.test('the official SDK client sets, reads, lists and deletes configs; deliveries follow', async (t) => {
  const receiver = await webhookReceiver(t)
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true' })
  const client = await sdkClient(base, ALICE_KEY)
  t.equal((await client.getAgentCard()).capabilities?.pushNotifications, true, 'the card says the agent delivers')
  const sent = await client.sendMessage(SendMessageRequest.fromJSON(bookTable())) as Task
  const created = await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({
    taskId: sent.id, url: receiver.url, token: 'sdk-token', authentication: { scheme: 'Bearer', credentials: 'sdk-secret' }
  }))
  t.ok(created.id !== '', 'the gateway assigns an id')
  t.match(await client.getTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: created.id }), { url: receiver.url, token: 'sdk-token' })
  t.equal((await client.listTaskPushNotificationConfig({ tenant: '', taskId: sent.id, pageSize: 0, pageToken: '' })).configs.length, 1)
  await client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: sent.id, parts: [{ text: 'date=2026-12-24' }] } }))
  const [first] = await receiver.waitFor(1)
  t.equal(first.headers.authorization, 'Bearer sdk-secret')
  t.equal(first.headers['x-a2a-notification-token'], 'sdk-token')
  t.equal(first.headers['x-api-key'], undefined)
  t.notOk(JSON.stringify(first.headers).includes(ALICE_KEY), 'the caller\'s own credential is never forwarded')
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: created.id })
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: created.id })
  t.strictSame((await client.listTaskPushNotificationConfig({ tenant: '', taskId: sent.id, pageSize: 0, pageToken: '' })).configs, [], 'deleted, idempotently')
})

t.test('configs belong to their caller; HTTP+JSON serves the same methods', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, MAX_PUSH_CONFIGS_PER_CALLER: '2' })
  const task = (await call(base, 'SendMessage', bookTable(), ALICE_KEY)).body.result.task
  const config = { taskId: task.id, url: 'https://hooks.example.com/a2a' }
  const created = (await call(base, 'CreateTaskPushNotificationConfig', config, ALICE_KEY)).body.result
  for (const [method, params] of [
    ['CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://bob.example.com/steal' }],
    ['GetTaskPushNotificationConfig', { taskId: task.id, id: created.id }],
    ['ListTaskPushNotificationConfigs', { taskId: task.id }],
    ['DeleteTaskPushNotificationConfig', { taskId: task.id, id: created.id }]
  ] as const) {
    const answer = (await call(base, method, params, BOB_KEY)).body
    t.equal(answer.error?.code, -32001, `${method} on another caller's task: unknown to this one`)
  }
  t.equal((await call(base, 'ListTaskPushNotificationConfigs', { taskId: task.id }, ALICE_KEY)).body.result.configs.length, 1, 'still there')

  const rest = `${base}/a2a/demo/rest/tasks/${task.id}/pushNotificationConfigs`
  const alice = { ...V1, authorization: `Bearer ${ALICE_KEY}` }
  const posted = await fetch(rest, { method: 'POST', headers: alice, body: JSON.stringify({ url: 'https://hooks.example.com/rest' }) })
  t.equal(posted.status, 201)
  const restConfig = await posted.json() as { id: string }
  t.equal((await fetch(`${rest}/${restConfig.id}`, { headers: alice })).status, 200)
  const capped = await fetch(rest, { method: 'POST', headers: alice, body: JSON.stringify({ url: 'https://hooks.example.com/third' }) })
  t.equal(capped.status, 429, 'MAX_PUSH_CONFIGS_PER_CALLER: RESOURCE_EXHAUSTED')
  t.match(await capped.json(), { error: { details: [{ metadata: { cap: 'MAX_PUSH_CONFIGS_PER_CALLER' } }] } })
  const refused = await fetch(rest, { method: 'POST', headers: alice, body: JSON.stringify({ url: 'https://10.1.2.3/hook' }) })
  t.equal(refused.status, 400)
  t.equal((await fetch(`${rest}/${restConfig.id}`, { method: 'DELETE', headers: alice })).status, 204)
  t.equal((await fetch(`${rest}/${restConfig.id}`, { headers: { ...V1, authorization: `Bearer ${BOB_KEY}` } })).status, 404)
})

t.test('without the allow-list: internal and plain-http webhooks are refused, -32602 naming the field', async (t) => {
  const receiver = await webhookReceiver(t)
  const { base } = await startGateway(t)
  const task = (await call(base, 'SendMessage', bookTable())).body.result.task
  for (const url of [
    receiver.url, 'https://127.0.0.1/hook', 'https://10.0.0.8/hook', 'https://192.168.1.1/', 'https://172.16.0.1/',
    'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/', 'https://0.0.0.0/', 'https://224.0.0.1/',
    'https://[::1]/', 'https://[fd00:ec2::254]/', 'https://[fe80::1]/', 'https://[::ffff:127.0.0.1]/', 'https://localhost/hook',
    'https://user:pass@hooks.example.com/', 'ftp://hooks.example.com/'
  ]) {
    const answer = (await call(base, 'CreateTaskPushNotificationConfig', { taskId: task.id, url })).body
    t.equal(answer.error?.code, -32602, url)
    t.equal(answer.error?.data?.[0]?.fieldViolations?.[0]?.field, 'url', url)
  }
  const inline = (await call(base, 'SendMessage', { ...bookTable(), configuration: { taskPushNotificationConfig: { url: receiver.url } } })).body
  t.equal(inline.error?.code, -32602)
  t.equal(inline.error.data[0].fieldViolations[0].field, 'configuration.taskPushNotificationConfig.url')
  const streamed = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: V1,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { ...bookTable(), configuration: { taskPushNotificationConfig: { url: 'https://[::1]/' } } } })
  })
  t.match(await streamed.json(), { error: { code: -32602 } }, 'a stream is refused before it opens')
  t.equal(receiver.received.length, 0, 'nothing was posted')
  t.equal((await call(base, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://hooks.example.com/ok' })).body.result.url,
    'https://hooks.example.com/ok', 'a public https URL is accepted')
})
