/**
 * Push notifications for a proxied agent, delivered by the gateway from what it relays (docs/push.md, "Proxy
 * mode"): a real upstream (test/fixtures/upstream-agent.ts, whose own card says no push), a real webhook receiver on
 * loopback (PUSH_ALLOWED_HOSTS=127.0.0.1, PUSH_ALLOW_HTTP=true), two authenticated callers; run on memory and on
 * PostgreSQL (the outbox) by push-*.test.ts.
 */
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { ALICE_KEY, API_KEYS, BOB_KEY } from '../../../fixtures/auth.js'
import { startGateway, URI } from '../../../fixtures/gateway-helpers.js'
import { readSse } from '../../../fixtures/sse-reader.js'
import { startUpstream } from '../../../fixtures/upstream-agent.js'
import { webhookReceiver } from '../../../fixtures/webhook-receiver.js'

type Json = Record<string, any>
export type StateEnv = (t: Test) => Promise<Record<string, string>>

const LOOPBACK = { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', PUSH_RETRY_BASE_MS: '20', PUSH_RETRY_MAX_DELAY_MS: '300' }
const OPERATOR_KEY = 'operator-key-for-the-proxy-push-test'
const operator = { authorization: `Bearer ${OPERATOR_KEY}` }
const operatorJson = { ...operator, 'content-type': 'application/json' }

function message (text: string, extra: Json = {}): Json {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra }
}

function stateOf (body: Json): string | undefined {
  return body.statusUpdate?.status?.state
}

async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** A proxied gateway (agent "shop") in front of a real upstream, the operator API on, alice and bob as callers. */
async function proxied (t: Test, stateEnv: StateEnv, env: Record<string, string> = LOOPBACK, takeover = true) {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, ...(takeover ? { OPERATOR_API_KEY: OPERATOR_KEY } : {}), ...env, ...await stateEnv(t) },
    { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  const rpc = async (method: string, params: Json, key = ALICE_KEY, converse = true): Promise<Json> => {
    const response = await fetch(`${base}/a2a/shop`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}`, ...(converse ? { 'a2a-extensions': URI } : {})
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
    })
    return await response.json() as Json
  }
  const stream = (method: string, params: Json, key = ALICE_KEY, signal?: AbortSignal) => fetch(`${base}/a2a/shop`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}`, 'a2a-extensions': URI },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
  })
  return { upstream, base, rpc, stream }
}

export function proxyPushCases (t: Test, stateEnv: StateEnv): void {
  t.test('the card says the gateway delivers; an inline config on a proxied turn delivers its updates', async (t) => {
    const receiver = await webhookReceiver(t)
    const { base, rpc, upstream } = await proxied(t, stateEnv)
    const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Json
    t.equal(card.capabilities.pushNotifications, true, 'the gateway delivers, whatever the upstream\'s card says')

    const sent = await rpc('SendMessage', {
      message: message('task one'),
      configuration: { taskPushNotificationConfig: { url: receiver.url, token: 'inline-token', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } } }
    }, ALICE_KEY, false)
    t.equal(sent.error, undefined, 'the upstream (no push of its own) never saw the config')
    const task = sent.result.task
    t.equal(task.status.state, 'TASK_STATE_COMPLETED')
    const received = await receiver.waitFor(2)
    await sleep(200)
    t.equal(receiver.received.length, 2)
    t.equal(stateOf(received[0].body), 'TASK_STATE_COMPLETED', 'the task\'s status')
    t.equal(received[1].body.artifactUpdate.artifact.parts[0].text, 'result of task one', 'and its artifact')
    for (const entry of received) {
      t.equal(entry.headers['content-type'], 'application/a2a+json')
      t.equal(entry.headers.authorization, 'Bearer hook-secret')
      t.equal(entry.headers['x-a2a-notification-token'], 'inline-token')
      t.notOk(JSON.stringify(entry.headers).includes(ALICE_KEY), 'the caller\'s credential is never forwarded')
      t.equal(JSON.stringify(entry.body).includes(URI), false, 'no envelope: the request did not activate the extension')
    }
    t.notOk(upstream.seen.some((headers) => JSON.stringify(headers).includes('hook-secret')), 'nothing of the config went upstream')
    t.strictSame((await rpc('ListTaskPushNotificationConfigs', { taskId: task.id })).result, { configs: [], nextPageToken: '' }, 'the configs ended with the task')
  })

  t.test('a streamed turn with an inline config, then a cancel through the gateway', async (t) => {
    const receiver = await webhookReceiver(t)
    const { rpc, stream } = await proxied(t, stateEnv)
    const response = await stream('SendStreamingMessage', {
      message: message('hold on'), configuration: { taskPushNotificationConfig: { url: receiver.url } }
    })
    const sse = readSse(response)
    const first = await sse.waitFor((frame) => frame.result?.task !== undefined)
    const taskId = first.result.task.id
    await sse.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
    await receiver.waitFor(2)
    t.strictSame(receiver.received.map((entry) => stateOf(entry.body)), ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'], 'the first event, then the next')
    const canceled = await rpc('CancelTask', { id: taskId })
    t.equal(canceled.result.status.state, 'TASK_STATE_CANCELED')
    await receiver.waitFor(3)
    t.equal(stateOf(receiver.received[2].body), 'TASK_STATE_CANCELED')
    t.match(receiver.received[2].body.statusUpdate.status, { state: 'TASK_STATE_CANCELED' })
    t.ok(receiver.received.every((entry) => (entry.body.statusUpdate ?? entry.body.artifactUpdate).taskId === taskId))
  })

  t.test('Create, Get, List and Delete through the gateway; another caller sees none and cannot create', async (t) => {
    const receiver = await webhookReceiver(t)
    const { base, rpc } = await proxied(t, stateEnv)
    const asked = (await rpc('SendMessage', { message: message('ask me') })).result.task
    t.equal(asked.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const created = await rpc('CreateTaskPushNotificationConfig', { taskId: asked.id, url: receiver.url, token: 't-1' })
    t.equal(created.error, undefined)
    t.match(created.result, { taskId: asked.id, url: receiver.url, token: 't-1' })
    t.type(created.result.id, 'string')
    t.match((await rpc('GetTaskPushNotificationConfig', { taskId: asked.id, id: created.result.id })).result, { id: created.result.id, url: receiver.url })
    t.equal((await rpc('ListTaskPushNotificationConfigs', { taskId: asked.id })).result.configs.length, 1)
    t.equal(receiver.received.length, 0, 'creating a config is no update')

    for (const [method, params] of [
      ['CreateTaskPushNotificationConfig', { taskId: asked.id, url: receiver.url }],
      ['GetTaskPushNotificationConfig', { taskId: asked.id, id: created.result.id }],
      ['ListTaskPushNotificationConfigs', { taskId: asked.id }],
      ['DeleteTaskPushNotificationConfig', { taskId: asked.id, id: created.result.id }]
    ] as const) {
      const answer = await rpc(method, params, BOB_KEY)
      t.equal(answer.error?.code, -32001, `${method} on another caller's task: unknown to that caller`)
      t.equal(answer.error?.message, `Task not found: ${asked.id}`)
    }
    t.equal((await rpc('ListTaskPushNotificationConfigs', { taskId: asked.id })).result.configs.length, 1, 'still there')

    // The follow-up turn completes the task upstream: its update reaches the webhook, with the envelope (the config
    // was made with the extension active).
    const done = await rpc('SendMessage', { message: message('large', { taskId: asked.id }) })
    t.equal(done.result.task.status.state, 'TASK_STATE_COMPLETED')
    const [completed] = await receiver.waitFor(1)
    t.equal(stateOf(completed.body), 'TASK_STATE_COMPLETED')
    t.equal(completed.headers['x-a2a-notification-token'], 't-1')
    t.match(completed.body.statusUpdate.status.message.metadata[URI], { author: 'agent' }, 'the envelope, as a reply to that request would carry')

    // HTTP+JSON on another open task; without a copy: List none, Get -32001, Delete nothing to do.
    const other = (await rpc('SendMessage', { message: message('ask again') })).result.task
    t.strictSame((await rpc('ListTaskPushNotificationConfigs', { taskId: other.id })).result, { configs: [], nextPageToken: '' })
    t.equal((await rpc('GetTaskPushNotificationConfig', { taskId: other.id, id: 'nope' })).error?.code, -32001)
    t.strictSame((await rpc('DeleteTaskPushNotificationConfig', { taskId: other.id, id: 'nope' })).result, {})
    const rest = `${base}/a2a/shop/rest/tasks/${other.id}/pushNotificationConfigs`
    const alice = { 'a2a-version': '1.0', 'content-type': 'application/json', authorization: `Bearer ${ALICE_KEY}` }
    const posted = await fetch(rest, { method: 'POST', headers: alice, body: JSON.stringify({ url: receiver.url }) })
    t.equal(posted.status, 201)
    const restConfig = await posted.json() as Json
    t.equal((await fetch(`${rest}/${restConfig.id}`, { headers: alice })).status, 200)
    t.equal((await fetch(`${rest}/${restConfig.id}`, { headers: { ...alice, authorization: `Bearer ${BOB_KEY}` } })).status, 404, 'another caller: not found')
    t.equal((await fetch(`${rest}/${restConfig.id}`, { method: 'DELETE', headers: alice })).status, 204)
    t.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: 'never-handed-out', url: receiver.url })).error?.code, -32001, 'an unknown task')
  })

  t.test('without the operator API (no takeover layer): configs and deliveries alike', async (t) => {
    const receiver = await webhookReceiver(t)
    const { rpc } = await proxied(t, stateEnv, LOOPBACK, false)
    const asked = (await rpc('SendMessage', { message: message('ask me') })).result.task
    t.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: asked.id, url: receiver.url })).error, undefined)
    t.equal((await rpc('ListTaskPushNotificationConfigs', { taskId: asked.id }, BOB_KEY)).error?.code, -32001)
    t.equal((await rpc('GetTaskPushNotificationConfig', { taskId: asked.id, id: 'none' })).error?.code, -32001, 'an unknown config id')
    await rpc('SendMessage', { message: message('medium', { taskId: asked.id }) })
    const [done] = await receiver.waitFor(1)
    t.equal(stateOf(done.body), 'TASK_STATE_COMPLETED')
  })

  t.test('copies count against MAX_OPEN_TASKS_PER_CALLER in a tally of their own', async (t) => {
    const receiver = await webhookReceiver(t)
    const { rpc } = await proxied(t, stateEnv, { ...LOOPBACK, MAX_OPEN_TASKS_PER_CALLER: '1' })
    const first = (await rpc('SendMessage', { message: message('ask one') })).result.task
    const second = (await rpc('SendMessage', { message: message('ask two') })).result.task
    t.ok(second.id !== undefined, 'upstream tasks themselves are not counted')
    t.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: first.id, url: receiver.url })).error, undefined)
    const capped = await rpc('CreateTaskPushNotificationConfig', { taskId: second.id, url: receiver.url })
    t.match(capped.error, { code: -32000, data: [{ reason: 'RESOURCE_EXHAUSTED', metadata: { cap: 'MAX_OPEN_TASKS_PER_CALLER' } }] })
    const inline = await rpc('SendMessage', { message: message('ask three'), configuration: { taskPushNotificationConfig: { url: receiver.url } } })
    t.match(inline.error, { code: -32000, data: [{ metadata: { cap: 'MAX_OPEN_TASKS_PER_CALLER' } }] })
    t.equal((await rpc('CreateTaskPushNotificationConfig', { taskId: first.id, url: receiver.url, id: 'second-hook' })).error, undefined,
      'another config on a task already copied is fine')
    t.equal((await rpc('SendMessage', { message: message('ask four') }, BOB_KEY)).error, undefined)
  })

  t.test('without the allow-list: refused, -32602 naming the field, nothing forwarded', async (t) => {
    const receiver = await webhookReceiver(t)
    const { rpc, stream, upstream } = await proxied(t, stateEnv, {})
    const asked = (await rpc('SendMessage', { message: message('ask me') })).result.task
    const refused = await rpc('CreateTaskPushNotificationConfig', { taskId: asked.id, url: receiver.url })
    t.equal(refused.error?.code, -32602)
    t.equal(refused.error.data[0].fieldViolations[0].field, 'url')
    const forwarded = upstream.seen.length
    const inline = await rpc('SendMessage', { message: message('task two'), configuration: { taskPushNotificationConfig: { url: 'https://10.0.0.8/hook' } } })
    t.equal(inline.error?.code, -32602)
    t.equal(inline.error.data[0].fieldViolations[0].field, 'configuration.taskPushNotificationConfig.url')
    const streamed = await stream('SendStreamingMessage', { message: message('task three'), configuration: { taskPushNotificationConfig: { url: 'https://[::1]/' } } })
    t.match(await streamed.json(), { error: { code: -32602 } }, 'a stream is refused before it opens')
    t.equal(upstream.seen.length, forwarded, 'the refused turns never went upstream')
    t.equal(receiver.received.length, 0)
  })

  t.test('what the upstream does on its own reaches the webhook: the gateway follows a configured task upstream', async (t) => {
    const receiver = await webhookReceiver(t)
    const { rpc, stream, upstream } = await proxied(t, stateEnv)
    const caller = new AbortController()
    const sse = readSse(await stream('SendStreamingMessage', { message: message('hold the line') }, ALICE_KEY, caller.signal))
    const taskId = (await sse.waitFor((frame) => frame.result?.task !== undefined)).result.task.id
    await sse.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
    caller.abort() // the caller leaves: nobody relays the task any more
    t.equal((await rpc('CreateTaskPushNotificationConfig', { taskId, url: receiver.url })).error, undefined)
    // Wait for the follow to be on the upstream (its SubscribeToTask), then cancel there, not through the gateway.
    const seen = upstream.seen.length
    for (let tries = 0; upstream.seen.length === seen && tries < 100; tries++) await sleep(20)
    const canceled = await fetch(`${upstream.base}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: taskId } })
    })
    t.equal(((await canceled.json()) as Json).result.status.state, 'TASK_STATE_CANCELED')
    const [notified] = await receiver.waitFor(1)
    t.equal(stateOf(notified.body), 'TASK_STATE_CANCELED', 'the upstream\'s own cancel, delivered')
    t.equal(notified.body.statusUpdate.taskId, taskId)
  })

  t.test('a takeover\'s held turn: the person\'s reply reaches the webhook with author: human', async (t) => {
    const receiver = await webhookReceiver(t)
    const { base, rpc, upstream } = await proxied(t, stateEnv)
    const first = (await rpc('SendMessage', { message: message('hello') })).result.message
    const contextId = first.contextId
    const api = `${base}/api/v1/agents/shop/conversations`
    const conversation = `${api}/${encodeURIComponent(`alice/${contextId}`)}`
    t.equal((await fetch(`${conversation}/takeover`, { method: 'POST', headers: operator })).status, 200)
    const forwarded = upstream.seen.length
    const held = (await rpc('SendMessage', {
      message: message('is anyone there?', { contextId }), configuration: { taskPushNotificationConfig: { url: receiver.url, token: 'held' } }
    })).result.task
    t.equal(upstream.seen.length, forwarded, 'held: not forwarded')
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    t.equal((await rpc('ListTaskPushNotificationConfigs', { taskId: held.id })).result.configs.length, 1, 'the held task\'s configs, answered here')
    t.equal((await rpc('ListTaskPushNotificationConfigs', { taskId: held.id }, BOB_KEY)).error?.code, -32001, 'not another caller\'s')
    const replied = await fetch(`${conversation}/messages`, { method: 'POST', headers: operatorJson, body: JSON.stringify({ text: 'Yes, Ana here.' }) })
    t.equal(replied.status, 201)
    t.equal((await fetch(`${conversation}/release`, { method: 'POST', headers: operator })).status, 200)
    await receiver.waitFor(4)
    await sleep(200)
    t.strictSame(receiver.received.map((entry) => stateOf(entry.body)), ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'],
      'the held task\'s first save, the suppressed turn, the person\'s reply, the release')
    const human = receiver.received.find((entry) => entry.body.statusUpdate?.status?.message?.metadata?.[URI]?.author === 'human')
    t.ok(human, 'the person\'s reply carries author: human')
    t.equal(human?.body.statusUpdate.status.message.parts[0].text, 'Yes, Ana here.')
    t.equal(human?.headers['x-a2a-notification-token'], 'held')
  })
}
