/**
 * The gRPC binding end to end: the gateway with GRPC_PORT and PUBLIC_GRPC_URL on real ports, the official
 * @a2a-js/sdk client (its ClientFactory picking GRPC from the card) for every method, and a raw grpc-js client of
 * the SDK's service definition for what the SDK client hides: the echo in the response metadata, the status codes
 * and their google.rpc.Status details.
 */
import { settlesWithin } from '../../fixtures/deadline.js'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import * as grpc from '@grpc/grpc-js'
import {
  CancelTaskRequest, GetTaskRequest, ListTasksRequest, Message, SendMessageRequest, SubscribeToTaskRequest, TaskState, type Task
} from '@a2a-js/sdk'
import { ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { TaskNotFoundError } from '@a2a-js/sdk/errors'
import { ALICE_KEY, API_KEYS, BOB_KEY } from '../../fixtures/auth.js'
import { URI } from '../../fixtures/gateway-helpers.js'
import { rawGrpcClient, sdkGrpcClient, startGrpcGateway, statusDetails, toMetadata } from '../../fixtures/grpc.js'

const ACTIVE = { 'a2a-version': '1.0', 'a2a-extensions': URI }
const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }
const withKey = (key: string, active = false) => ({
  serviceParameters: { ...ServiceParameters.create(...(active ? [withA2AExtensions(URI)] : [])), authorization: `Bearer ${key}` }
})

function ask (text: string, contextId = randomUUID()) {
  return SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId } })
}

function textOf (message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

t.test('the card lists the gRPC target with the agent as tenant; send with and without the extension', async (t) => {
  const { base, target } = await startGrpcGateway(t)
  const card = await (await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)).json() as Record<string, any>
  t.same(card.supportedInterfaces.find((entry: any) => entry.protocolBinding === 'GRPC'), { url: target, protocolBinding: 'GRPC', tenant: 'demo', protocolVersion: '1.0' })

  const client = await sdkGrpcClient(base)
  const active = await client.sendMessage(ask('How long do I have to return an order?'), withConverse) as Message
  t.match(textOf(active), /30 days/)
  t.match(active.metadata?.[URI], { author: 'agent', answerCoverage: { coverage: 'answered' } }, 'the envelope, activated')
  const plain = await client.sendMessage(ask('How long do I have to return an order?')) as Message
  t.match(textOf(plain), /30 days/)
  t.equal(plain.metadata?.[URI], undefined, 'no envelope without the extension')

  const raw = rawGrpcClient(t, target)
  const echoed = await raw.unary('sendMessage', { ...ask('How long do I have to return an order?'), tenant: 'demo' }, ACTIVE)
  t.same(echoed.metadata?.get('a2a-extensions'), [URI], 'the echo is in the initial metadata')
  const silent = await raw.unary('sendMessage', { ...ask('How long do I have to return an order?'), tenant: 'demo' }, { 'a2a-version': '1.0' })
  t.same(silent.metadata?.get('a2a-extensions'), [], 'no echo without the extension')
  t.equal(silent.response.payload.value.metadata?.[URI], undefined)
})

t.test('stream, get, list, subscribe and cancel through the SDK client', async (t) => {
  const { base, target } = await startGrpcGateway(t)
  const client = await sdkGrpcClient(base)

  const events = []
  for await (const event of client.sendMessageStream(ask('What is the warranty on a laptop?'), withConverse)) events.push(event)
  t.ok(events.length > 0)
  const answer = events.map((event) => event.payload).find((payload) => payload?.$case === 'message')?.value as Message | undefined
  t.match(answer?.metadata?.[URI], { author: 'agent' }, 'stream events carry the envelope')
  const raw = rawGrpcClient(t, target)
  const rawStream = await raw.stream('sendStreamingMessage', { ...ask('What is the warranty on a laptop?'), tenant: 'demo' }, ACTIVE)
  t.same(rawStream.metadata?.get('a2a-extensions'), [URI], 'a stream echoes the extension in its initial metadata')
  t.equal(rawStream.error, undefined)

  const contextId = randomUUID()
  const opened = await client.sendMessage(ask('I would like to book a table', contextId), withConverse) as Task
  t.equal(opened.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  const got = await client.getTask(GetTaskRequest.fromJSON({ id: opened.id }), withConverse)
  t.equal(got.id, opened.id)
  t.ok(got.status?.message?.metadata?.[URI], 'GetTask decorates when activated')
  const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId }))
  t.same(listed.tasks.map((task) => task.id), [opened.id])

  const controller = new AbortController()
  const subscription = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: opened.id }), { ...withConverse, signal: controller.signal })
  const first = await subscription.next()
  t.equal(first.value?.payload?.$case, 'task', 'SubscribeToTask opens with the task')
  const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: opened.id }))
  t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
  const update = await subscription.next()
  t.equal((update.value?.payload?.value as any)?.status?.state, TaskState.TASK_STATE_CANCELED, 'the subscriber sees the cancel')
  t.equal((await subscription.next()).done, true, 'and its stream ends')

  await t.rejects(client.getTask(GetTaskRequest.fromJSON({ id: 'no-such-task' })), TaskNotFoundError, 'an unknown task is the SDK\'s TaskNotFound')
  const notFound = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: 'no-such-task' }), ACTIVE)
  t.equal(notFound.error?.code, grpc.status.NOT_FOUND)
  t.match(statusDetails(notFound.error!).errorInfo, { reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' })
  t.same(notFound.error?.metadata.get('a2a-extensions'), [URI], 'an error echoes the extension in its trailers')
})

t.test('a client that cancels a stream frees its slot; closing the gateway ends open streams with UNAVAILABLE', async (t) => {
  const { base, target, app } = await startGrpcGateway(t, { MAX_STREAMS_PER_CALLER: '1' })
  const client = await sdkGrpcClient(base)
  const opened = await client.sendMessage(ask('I would like to book a table')) as Task
  const controller = new AbortController()
  const first = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: opened.id }), { signal: controller.signal })
  t.equal((await first.next()).value?.payload?.$case, 'task')
  const raw = rawGrpcClient(t, target)
  const refused = await raw.stream('subscribeToTask', SubscribeToTaskRequest.fromJSON({ tenant: 'demo', id: opened.id }), ACTIVE)
  t.equal(refused.error?.code, grpc.status.RESOURCE_EXHAUSTED, 'one stream per caller: the second is refused')
  t.same(refused.error?.metadata.get('retry-after'), ['5'])
  controller.abort()
  await t.rejects(first.next())
  // The cancel reaches the server; the slot is free once the service has seen the abort.
  let again: grpc.ClientReadableStream<unknown> | undefined
  for (let attempt = 0; attempt < 50 && again === undefined; attempt++) {
    const call = raw.client.subscribeToTask(SubscribeToTaskRequest.fromJSON({ tenant: 'demo', id: opened.id }), toMetadata(ACTIVE)) as grpc.ClientReadableStream<unknown>
    const outcome = await new Promise<'open' | 'refused'>((resolve) => {
      call.once('data', () => resolve('open'))
      call.once('error', () => resolve('refused'))
    })
    if (outcome === 'open') again = call
    else await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.ok(again, 'after the cancel, a new stream opens')
  const ended = new Promise<grpc.ServiceError>((resolve) => again!.on('error', resolve))
  await app.close()
  t.equal((await settlesWithin(ended, 10_000, 'the open stream ends when the gateway closes')).code, grpc.status.UNAVAILABLE, 'closing ends the open stream with UNAVAILABLE')
})

t.test('authentication, isolation and rate limits are the gateway\'s', async (t) => {
  const { base, target } = await startGrpcGateway(t, { A2A_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '6' })
  const raw = rawGrpcClient(t, target)
  const anonymous = await raw.unary('sendMessage', { ...ask('hello'), tenant: 'demo' }, ACTIVE)
  t.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED)
  t.same(anonymous.error?.metadata.get('www-authenticate'), ['Bearer realm="a2a"'])
  t.match(statusDetails(anonymous.error!).errorInfo, { reason: 'UNAUTHENTICATED', domain: 'a2a-converse' })

  const alice = await sdkGrpcClient(base)
  const task = await alice.sendMessage(ask('I would like to book a table'), withKey(ALICE_KEY)) as Task
  t.equal((await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(ALICE_KEY))).id, task.id)
  await t.rejects(alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(BOB_KEY)), TaskNotFoundError, 'caller B cannot get caller A\'s task')
  const bobs = await alice.listTasks(ListTasksRequest.fromJSON({}), withKey(BOB_KEY))
  t.same(bobs.tasks, [], 'nor list it')

  // Alice has made 3 calls in this window (send, get, list counted under bob); three more, then the limit.
  await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(ALICE_KEY))
  await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(ALICE_KEY))
  await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(ALICE_KEY))
  await alice.getTask(GetTaskRequest.fromJSON({ id: task.id }), withKey(ALICE_KEY))
  const limited = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: task.id }), { ...ACTIVE, authorization: `Bearer ${ALICE_KEY}` })
  t.equal(limited.error?.code, grpc.status.RESOURCE_EXHAUSTED, 'over the limit')
  t.match(statusDetails(limited.error!).errorInfo, { reason: 'RATE_LIMITED', domain: 'a2a-converse' })
  t.ok(Number(limited.error?.metadata.get('retry-after')[0]) >= 1, 'with retry-after')
  const bob = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: task.id }), { ...ACTIVE, authorization: `Bearer ${BOB_KEY}` })
  t.equal(bob.error?.code, grpc.status.NOT_FOUND, 'another caller has a count of its own')
})

t.test('bad input gets a precise status, never INTERNAL', async (t) => {
  const { target } = await startGrpcGateway(t, {}, {})
  const raw = rawGrpcClient(t, target)

  const garbage = await new Promise<grpc.ServiceError>((resolve) => {
    raw.client.makeUnaryRequest('/lf.a2a.v1.A2AService/SendMessage', (bytes: Buffer) => bytes, (bytes: Buffer) => bytes,
      Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), new grpc.Metadata(), (error) => resolve(error as grpc.ServiceError))
  })
  t.equal(garbage.code, grpc.status.INVALID_ARGUMENT, 'bytes that are no SendMessageRequest')
  t.equal(garbage.details, 'Malformed request message')

  const unknown = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'nobody', id: 't' }), ACTIVE)
  t.equal(unknown.error?.code, grpc.status.NOT_FOUND, 'an unknown agent')
  t.match(statusDetails(unknown.error!).errorInfo, { reason: 'AGENT_NOT_FOUND' })
  const noTenant = await raw.unary('getTask', GetTaskRequest.fromJSON({ id: 't' }), ACTIVE)
  t.equal(noTenant.error?.code, grpc.status.INVALID_ARGUMENT, 'no tenant and no default agent')
  t.match(noTenant.error?.details, /No agent addressed/)

  const noMessage = await raw.unary('sendMessage', SendMessageRequest.fromJSON({ tenant: 'demo' }), ACTIVE)
  t.equal(noMessage.error?.code, grpc.status.INVALID_ARGUMENT, 'a missing field')
  t.same(statusDetails(noMessage.error!).typeUrls, ['type.googleapis.com/google.rpc.BadRequest'])
  const noVersion = await raw.unary('getTask', GetTaskRequest.fromJSON({ tenant: 'demo', id: 't' }), {})
  t.equal(noVersion.error?.code, grpc.status.UNIMPLEMENTED, 'no a2a-version: 0.3, not served')
  t.match(statusDetails(noVersion.error!).errorInfo, { reason: 'VERSION_NOT_SUPPORTED' })
  const finished = await raw.stream('subscribeToTask', SubscribeToTaskRequest.fromJSON({ tenant: 'demo', id: 'no-such-task' }), ACTIVE)
  t.equal(finished.error?.code, grpc.status.NOT_FOUND, 'a stream that cannot open is a plain status')
  t.same(finished.messages, [])
  const push = await raw.unary('getTaskPushNotificationConfig', { tenant: 'demo', taskId: 't', id: 'c' }, ACTIVE)
  // The demo agent delivers push notifications (issue 26): a config of a task that is not there is NOT_FOUND.
  t.equal(push.error?.code, grpc.status.NOT_FOUND, 'a push config of an unknown task')
  t.match(statusDetails(push.error!).errorInfo, { reason: 'TASK_NOT_FOUND' })
})

t.test('with A2A_ROOT_ENDPOINT, an empty tenant addresses the default agent (and RATE_LIMIT_MAX=0 counts nothing)', async (t) => {
  const { target, app, grpcPort } = await startGrpcGateway(t, { A2A_ROOT_ENDPOINT: 'true', RATE_LIMIT_MAX: '0' })
  t.equal(app.grpcPort, grpcPort, 'the app knows its gRPC port')
  const raw = rawGrpcClient(t, target)
  const reply = await raw.unary('sendMessage', ask('How long do I have to return an order?'), ACTIVE)
  t.match(textOf(reply.response?.payload?.value), /30 days/)
})
