/**
 * Push notifications delivered to a real webhook receiver (Fastify on loopback; PUSH_ALLOWED_HOSTS=127.0.0.1 and
 * PUSH_ALLOW_HTTP=true, as the receivers are plain http on this host), on memory, embedded and PostgreSQL state: the
 * routine and human takeover story in order with the config's Authorization; 500 then 200 (retried); 400 (not
 * retried); a redirect (not followed); the receiver down then back; each POST in the trace of the turn or the operator
 * request that recorded it.
 */
import type { Test } from 'tap'
import { randomBytes, randomUUID } from 'node:crypto'
import { SpanKind } from '@opentelemetry/api'
import { AUTH, Client, envelopeOf, envelopesIn, gateway, operator, textOf } from '../../fixtures/conversation-gateway.js'
import { logLines } from '../../fixtures/gateway-helpers.js'
import { registerSdk } from '../../fixtures/tracing-sdk.js'
import { webhookReceiver } from '../../fixtures/webhook-receiver.js'

const LOOPBACK = { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', PUSH_RETRY_BASE_MS: '20', PUSH_RETRY_MAX_DELAY_MS: '300' }

function stateOf (body: any): string | undefined {
  return body.statusUpdate?.status?.state
}

async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

export type StateEnv = (t: Test) => Promise<Record<string, string>>

export function deliveryCases (t: Test, stateEnv: StateEnv): void {
  t.test('routine and human takeover: every update delivered in order, with the Authorization and the token', async (t) => {
    const receiver = await webhookReceiver(t)
    const app = await gateway(t, { env: { ...LOOPBACK, ...await stateEnv(t) } })
    const client = new Client(t, app)
    const routine = await client.task('book a table')
    t.equal(routine.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the routine waits for input')
    const created = await client.call('CreateTaskPushNotificationConfig', {
      taskId: routine.id, url: receiver.url, token: 'routine-token', authentication: { scheme: 'Bearer', credentials: 'hook-secret' }
    })
    t.equal(created.error, undefined)
    t.match(created.result, { taskId: routine.id, url: receiver.url, token: 'routine-token', authentication: { scheme: 'Bearer', credentials: 'hook-secret' } })
    t.type(created.result.id, 'string')

    const contextId = routine.contextId
    t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)
    const held = await client.task('Can a person help me?', { taskId: routine.id })
    t.equal(held.status.state, 'TASK_STATE_WORKING', 'the turn waits for a person')
    const replied = await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Hello, this is Sam.' })
    t.equal(replied.statusCode, 201)
    t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/release`)).statusCode, 200)

    const received = await receiver.waitFor(3)
    await sleep(200)
    const states = receiver.received.map((entry) => stateOf(entry.body))
    t.strictSame(states, ['TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'], 'the suppressed turn, the reply, the release')
    for (const entry of received) {
      t.equal(entry.headers['content-type'], 'application/a2a+json')
      t.equal(entry.headers.authorization, 'Bearer hook-secret')
      t.equal(entry.headers['x-a2a-notification-token'], 'routine-token')
      t.match(entry.headers['a2a-notification-id'], /^[0-9a-f-]{36}$/)
      t.equal(entry.body.statusUpdate.taskId, routine.id)
      t.equal(entry.body.statusUpdate.contextId, contextId)
    }
    envelopesIn(t, receiver.received.map((entry) => entry.body))
    const human = receiver.received[1].body.statusUpdate.status.message
    t.equal(textOf(human), 'Hello, this is Sam.')
    t.equal(envelopeOf(t, human).author, 'human', 'the config was created with the extension active: the envelope comes along')
    t.equal(new Set(receiver.received.map((entry) => entry.headers['a2a-notification-id'])).size, 3, 'one id per notification')
    t.strictSame((await client.call('ListTaskPushNotificationConfigs', { taskId: routine.id })).result, { configs: [], nextPageToken: '' },
      'the configs end with their task')
  })

  t.test('an inline config in SendMessage, without the extension: no envelope; 500 then 200 is retried, 400 is not', async (t) => {
    const receiver = await webhookReceiver(t)
    receiver.plan.push(500, 503)
    const logs = logLines()
    const app = await gateway(t, { env: { ...LOOPBACK, LOG_LEVEL: 'warn', ...await stateEnv(t) }, loggerStream: logs.stream })
    const client = new Client(t, app, { active: false })
    const first = await client.call('SendMessage', {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] },
      configuration: { taskPushNotificationConfig: { url: receiver.url, authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' } } }
    })
    const task = first.result.task
    t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const [delivered] = await receiver.waitFor(4)
    const ids = receiver.received.map((entry) => entry.headers['a2a-notification-id'])
    t.equal(new Set(ids.slice(0, 3)).size, 1, 'the same id on every attempt: 500, 503, then 200')
    t.not(ids[3], ids[0])
    t.equal(delivered.headers.authorization, 'Basic dXNlcjpwYXNz')
    t.equal(delivered.headers['x-a2a-notification-token'], undefined, 'no token given, none sent')
    t.strictSame(receiver.received.map((entry) => stateOf(entry.body)),
      ['TASK_STATE_SUBMITTED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_INPUT_REQUIRED'], 'the task\'s first save, then the question')
    t.equal(envelopesIn(t, receiver.received.map((entry) => entry.body)).length, 0, 'no envelope for a config made without the extension')
    t.equal(JSON.stringify(receiver.received[3].body).includes('docs.radioso.ai'), false)

    receiver.plan.push(400)
    const cancel = await client.call('CancelTask', { id: task.id })
    t.equal(cancel.result.status.state, 'TASK_STATE_CANCELED')
    await receiver.waitFor(5)
    await sleep(300)
    t.equal(receiver.received.length, 5, 'a 400 is not retried')
    t.equal(stateOf(receiver.received[4].body), 'TASK_STATE_CANCELED')
    const gaveUp = logs.lines.find((line) => line.msg === 'push notification given up')
    t.match(gaveUp, { taskId: task.id, webhookHost: `127.0.0.1:${receiver.port}`, reason: 'HTTP 400' })
    t.equal(JSON.stringify(logs.lines).includes('dXNlcjpwYXNz'), false, 'the credentials are never logged')
  })

  t.test('a redirect is not followed; the receiver down, then back: delivered, in order', async (t) => {
    const receiver = await webhookReceiver(t)
    const target = await webhookReceiver(t)
    receiver.answer = async (_request, reply) => await reply.code(307).header('location', target.url).send()
    const app = await gateway(t, { env: { ...LOOPBACK, PUSH_MAX_ATTEMPTS: '30', ...await stateEnv(t) } })
    const client = new Client(t, app)
    const routine = await client.task('book a table')
    await client.call('CreateTaskPushNotificationConfig', { taskId: routine.id, url: receiver.url })
    await client.task('date=2026-12-24', { taskId: routine.id })
    await receiver.waitFor(1)
    await sleep(300)
    t.equal(receiver.received.length, 1, 'a 3xx is an answer: not retried')
    t.equal(target.received.length, 0, 'and its Location is not followed')

    receiver.answer = undefined
    await receiver.close()
    const taskId = routine.id
    const more = await client.task('partySize=2', { taskId })
    t.ok(['TASK_STATE_COMPLETED', 'TASK_STATE_INPUT_REQUIRED'].includes(more.status.state))
    await sleep(1000)
    await receiver.listen()
    const [after] = await receiver.waitFor(2)
    await sleep(300)
    t.ok(after !== undefined)
    const states = receiver.received.slice(1).map((entry) => stateOf(entry.body) ?? 'artifact')
    t.ok(states.length >= 1, 'what came while it was down is delivered once it is back')
    t.equal(states[states.length - 1], more.status.state, 'in order: the last update last')
  })

  t.test('each POST continues the trace of the turn that recorded the update (from the outbox too)', async (t) => {
    // An SDK as the gateway app registers it: no context manager, every parent passed explicitly.
    const exporter = registerSdk(t, undefined, { withoutContextManager: true })
    const receiver = await webhookReceiver(t)
    const env = await stateEnv(t)
    const app = await gateway(t, { env: { ...LOOPBACK, ...env } })
    const traceId = randomBytes(16).toString('hex')
    const response = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }] }, configuration: { taskPushNotificationConfig: { url: receiver.url } } }
      })
    })
    t.equal(response.statusCode, 200)
    const [first] = await receiver.waitFor(1)
    t.match(first.headers.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the caller\'s trace, sampled')
    const spans = (): ReturnType<typeof exporter.getFinishedSpans> => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)
    for (let waited = 0; !spans().some((span) => span.name === 'push.webhook POST') && waited < 5000; waited += 20) await sleep(20)
    const post = spans().find((span) => span.name === 'push.webhook POST')
    const turn = spans().find((span) => span.name === 'converse.backend SendMessage')
    t.equal(post?.parentSpanContext?.spanId, turn?.spanContext().spanId, 'the POST is a child of the turn\'s backend span')
    t.equal(first.headers.traceparent, `00-${traceId}-${post?.spanContext().spanId as string}-01`, 'and carries its own span')
    // The conversation store's calls are spans where they are transactions (PostgreSQL, embedded), not in memory.
    const conversation = spans().filter((span) => span.name.startsWith('converse.store conversation.'))
    if (env.STATE === 'embedded' || env.DATABASE_URL !== undefined) {
      t.same(conversation.map((span) => span.name), ['converse.store conversation.update'],
        'the task\'s slot taken, then the one update, which counts the caller\'s conversations itself (issue 43)')
      t.ok(conversation.every((span) => span.parentSpanContext?.spanId === turn?.spanContext().spanId), 'children of the turn\'s backend span')
    } else {
      t.same(conversation, [], 'the memory store\'s calls are not spans')
    }
  })

  t.test('an operator\'s reply and release: its store calls are spans under its request\'s, its POSTs continue its trace', async (t) => {
    const exporter = registerSdk(t, undefined, { withoutContextManager: true })
    const receiver = await webhookReceiver(t)
    const env = await stateEnv(t)
    const traced = env.STATE === 'embedded' || env.DATABASE_URL !== undefined
    const app = await gateway(t, { env: { ...LOOPBACK, ...env } })
    const client = new Client(t, app)
    const routine = await client.task('book a table')
    await client.call('CreateTaskPushNotificationConfig', { taskId: routine.id, url: receiver.url })
    const contextId = routine.contextId
    t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)
    t.equal((await client.task('Can a person help me?', { taskId: routine.id })).status.state, 'TASK_STATE_WORKING')
    await receiver.waitFor(1)
    /** An operator request in a trace of its own: its trace id. */
    const act = async (action: string, body?: unknown): Promise<string> => {
      const traceId = randomBytes(16).toString('hex')
      const res = await operator(app, 'POST', `demo/conversations/${contextId}/${action}`, body, { ...AUTH, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` })
      t.equal(res.statusCode, action === 'messages' ? 201 : 200, action)
      return traceId
    }
    const replyTrace = await act('messages', { text: 'Hello, this is Sam.' })
    const releaseTrace = await act('release')
    const [, replied, released] = await receiver.waitFor(3)
    t.match(replied.headers.traceparent, new RegExp(`^00-${replyTrace}-[0-9a-f]{16}-01$`), 'the reply\'s POST: the operator\'s trace')
    t.match(released.headers.traceparent, new RegExp(`^00-${releaseTrace}-[0-9a-f]{16}-01$`), 'the release\'s POST: the operator\'s trace')

    const spansOf = (traceId: string): ReturnType<typeof exporter.getFinishedSpans> => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)
    for (let waited = 0; spansOf(releaseTrace).filter((span) => span.name === 'push.webhook POST').length === 0 && waited < 5000; waited += 20) await sleep(20)
    // The conversation store's calls where they are transactions; the task store's (every store), the turn lock's wait.
    const conversation = (...operations: string[]): string[] => traced ? operations.map((operation) => `converse.store conversation.${operation}`) : []
    // Beside the task loads (how many depends on the store: the writer's, the push diff's, the checks'), in order: the
    // conversation's calls, the turn lock's wait, the task's save, the POST.
    const names = [...conversation('exists', 'get', 'update'), 'converse.turn_lock wait', 'converse.store save', 'push.webhook POST']
    for (const traceId of [replyTrace, releaseTrace]) {
      const spans = spansOf(traceId)
      const server = spans.find((span) => span.kind === SpanKind.SERVER)
      const beneath = spans.filter((span) => span !== server).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      t.same(beneath.map((span) => span.name).filter((name) => name !== 'converse.store load'), names, `beneath ${String(server?.name)}`)
      t.ok(beneath.filter((span) => span.name === 'converse.store load').length >= 3, 'the held task looked up, checked before and after its write')
      t.ok(beneath.every((span) => span.parentSpanContext?.spanId === server?.spanContext().spanId), 'each the operator request\'s child')
      const post = beneath.find((span) => span.name === 'push.webhook POST')
      t.equal((traceId === replyTrace ? replied : released).headers.traceparent, `00-${traceId}-${post?.spanContext().spanId as string}-01`, 'the POST carries its own span')
      t.notOk(beneath.some((span) => span.attributes['a2a.context.id'] !== undefined), 'no context id (the operator addresses the store\'s key)')
    }
  })
}
