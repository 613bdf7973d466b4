/**
 * Proxy mode end to end: a real upstream (@a2a-js/sdk Express server, test/fixtures/upstream-agent.ts) on a port,
 * the gateway in front of it declared with the minimal agents-file form, driven by the official @a2a-js/sdk client.
 */
import t, { type Test } from 'tap'
import { GetTaskRequest, Message, SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk'
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, ServiceParameters, withA2AExtensions
} from '@a2a-js/sdk/client'
import { startUpstream, TRACE_URI } from '../../../fixtures/upstream-agent.js'
import { logLines, startGateway, URI, userMessage } from '../../../fixtures/gateway-helpers.js'

const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI, TRACE_URI)) }

function textOf (message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

/** fetch that remembers every response, so the test sees the headers the SDK client does not expose. */
function recordingFetch () {
  const responses: Response[] = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    responses.push(response)
    return response
  }
  return { responses, fetchImpl }
}

async function proxied (t: Test) {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  // The minimal form, exactly as the issue writes it (a trailing slash on the base URL).
  const gateway = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: `${upstream.base}/` } }] })
  const { responses, fetchImpl } = recordingFetch()
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl })
  }))
  const client = await factory.createFromUrl(`${gateway.base}/a2a/shop/`)
  return { upstream, gateway, client, responses }
}

t.test('the served card: the upstream\'s, its interfaces pointing at the gateway, the converse entry added', async (t) => {
  const { gateway, client } = await proxied(t)
  const card = await client.getAgentCard()
  t.equal(card.name, 'Shop upstream', 'name and description come from the upstream card')
  t.equal(card.description, 'An A2A agent of its own')
  t.equal(card.version, '2.1.0')
  t.same(card.supportedInterfaces.map((entry) => [entry.url, entry.protocolBinding, entry.protocolVersion]),
    [[`${gateway.base}/a2a/shop`, 'JSONRPC', '1.0'], [`${gateway.base}/a2a/shop/rest`, 'HTTP+JSON', '1.0'],
      [`${gateway.base}/a2a/shop`, 'JSONRPC', '0.3'], [`${gateway.base}/a2a/shop/rest`, 'HTTP+JSON', '0.3']], 'only the gateway\'s interfaces (both bindings, both versions)')
  const uris = card.capabilities?.extensions.map((entry) => entry.uri)
  t.same(uris, [TRACE_URI, URI], 'the upstream\'s own extension kept, the converse entry added')
  const converse = card.capabilities?.extensions.find((entry) => entry.uri === URI)
  t.same(converse?.params?.tools, [], 'no routines declared: no tools')
  t.equal(card.capabilities?.streaming, true)
  t.equal(card.capabilities?.pushNotifications, true, 'the gateway delivers push notifications from what it relays (test/library/backends/proxy/push-cases.ts)')
  t.ok(card.skills.some((skill) => skill.id === 'shop'), 'the upstream\'s skills kept')
})

t.test('SendMessage: forwarded, the envelope with the header and none without; the headers forwarded', async (t) => {
  const { upstream, client, responses } = await proxied(t)
  const reply = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('hello there') }), withConverse) as Message
  t.equal(textOf(reply), 'echo: hello there')
  t.match(reply.metadata?.[URI], { author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } })
  t.strictSame(reply.extensions, [URI])
  t.equal(responses.at(-1)!.headers.get('a2a-extensions'), `${URI}, ${TRACE_URI}`, 'the echo header names what was activated')
  const forwarded = upstream.seen.at(-1)!
  t.equal(forwarded['a2a-version'], '1.0', 'A2A-Version forwarded')
  t.equal(forwarded['a2a-extensions'], TRACE_URI, 'the caller\'s extensions forwarded minus the converse URI')

  const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('no header') })) as Message
  t.equal(textOf(plain), 'echo: no header')
  t.equal(plain.metadata?.[URI], undefined, 'no envelope without the header')
  t.same(plain.extensions, [])
  t.equal(responses.at(-1)!.headers.get('a2a-extensions'), null, 'no echo without the header')
  t.equal(upstream.seen.at(-1)!['a2a-extensions'], undefined, 'nothing to forward')
})

t.test('SendStreamingMessage: each frame decorated, the echo on the SSE response', async (t) => {
  const { client, responses } = await proxied(t)
  const frames: Array<{ $case: string, value: any }> = []
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('task stream me') }), withConverse)) {
    if (event.payload !== undefined) frames.push(event.payload)
  }
  t.same(frames.map((frame) => frame.$case), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  t.match(responses.at(-1)!.headers.get('content-type'), /^text\/event-stream/)
  t.equal(responses.at(-1)!.headers.get('a2a-extensions'), `${URI}, ${TRACE_URI}`)
  t.match(frames[1].value.status.message.metadata[URI], { author: 'agent', answerCoverage: { availability: 'not_recorded' } })
  t.match(frames[2].value.artifact.metadata[URI], { author: 'agent' })
  t.equal(textOf(frames[2].value.artifact), 'result of task stream me')
  t.equal(frames[3].value.status.state, TaskState.TASK_STATE_COMPLETED)

  const plain: any[] = []
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('task plain') }))) plain.push(event.payload)
  t.equal(plain.length, 4)
  t.equal(plain[1].value.status.message.metadata?.[URI], undefined, 'no envelope on frames without the header')
})

t.test('GetTask, ListTasks, an INPUT_REQUIRED task continued, CancelTask and SubscribeToTask', async (t) => {
  const { client } = await proxied(t)
  const asked = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('ask me') }), withConverse) as Task
  t.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.match(asked.status?.message?.metadata?.[URI], { author: 'agent' })

  const got = await client.getTask(GetTaskRequest.fromJSON({ id: asked.id }), withConverse)
  t.equal(got.id, asked.id)
  t.equal(got.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.match(got.status?.message?.metadata?.[URI], { author: 'agent' }, 'GetTask decorated')
  const gotPlain = await client.getTask(GetTaskRequest.fromJSON({ id: asked.id }))
  t.equal(gotPlain.status?.message?.metadata?.[URI], undefined, 'GetTask stripped without the header')

  const listed = await client.listTasks({ contextId: asked.contextId } as any, withConverse)
  t.same(listed.tasks.map((task) => task.id), [asked.id])
  t.match(listed.tasks[0].status?.message?.metadata?.[URI], { author: 'agent' }, 'ListTasks decorated')

  const done = await client.sendMessage(SendMessageRequest.fromJSON({
    message: userMessage('size M', { taskId: asked.id, contextId: asked.contextId })
  }), withConverse) as Task
  t.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(textOf(done.status?.message), 'done: size M')

  // Not blocking: the task stays WORKING until canceled.
  const held = await client.sendMessage(SendMessageRequest.fromJSON({
    message: userMessage('hold on'), configuration: { returnImmediately: true }
  }), withConverse) as Task
  t.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(held.status?.state as TaskState), 'the task is open')
  const subscribed: any[] = []
  const subscription = (async () => {
    for await (const event of client.resubscribeTask({ id: held.id } as any, withConverse)) subscribed.push(event.payload)
  })()
  // The subscription is open once its first frame (the task) arrived.
  while (subscribed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const canceled = await client.cancelTask({ id: held.id } as any, withConverse)
  t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
  await subscription
  t.equal(subscribed[0].$case, 'task')
  t.equal(subscribed.at(-1).value.status.state, TaskState.TASK_STATE_CANCELED, 'the subscription saw the cancel and ended')
})

t.test('an upstream JSON-RPC error: its code and a generic message by default, all of it with errorDetails "full"; the original logged', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
  const logs = logLines()
  const coded = await startGateway(t, { LOG_LEVEL: 'warn' }, { agents: [{ id: 'shop', upstream: { url: upstream.base } }], loggerStream: logs.stream })
  const full = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: upstream.base, errorDetails: 'full' } }] })
  // A finished task cannot be canceled: the upstream answers -32002 with its own message and data.
  const cancelOnce = async (base: string) => {
    const send = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('task done soon') } })
    const task = (await (await fetch(`${base}/a2a/shop`, { method: 'POST', headers, body: send })).json() as Record<string, any>).result.task
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'CancelTask', params: { id: task.id } })
    const through = await (await fetch(`${base}/a2a/shop`, { method: 'POST', headers, body })).json() as Record<string, any>
    const direct = await (await fetch(`${upstream.base}/rpc`, { method: 'POST', headers, body })).json() as Record<string, any>
    return { through, direct }
  }
  const byCode = await cancelOnce(coded.base)
  t.equal(byCode.direct.error.code, -32002)
  t.not(byCode.direct.error.message, 'Task cannot be canceled', 'the upstream words it its own way')
  t.same(byCode.through, {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32002, message: 'Task cannot be canceled', data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_CANCELABLE', domain: 'a2a-protocol.org', metadata: {} }] }
  }, 'by default: the code, A2A\'s own message and reason, none of the upstream\'s data')
  const logged = logs.lines.find((line) => line.msg === 'upstream agent answered an error')
  t.match(logged, { level: 40, agentId: 'shop', method: 'CancelTask', upstreamError: byCode.direct.error }, 'the original at warn')
  const all = await cancelOnce(full.base)
  t.same(all.through, all.direct, 'errorDetails "full": code, message and data as the upstream wrote them')
})
