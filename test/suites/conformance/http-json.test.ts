/**
 * Conformance, both doors: the HTTP+JSON binding (A2A 1.0 §11) under <mount>/a2a/<id>/rest — the official
 * @a2a-js/sdk client picking it from the card (its REST transport only), then each route, status and error body as
 * they come off the wire: the AIP-193 body with the §5.4 status, plain replies for errors before a stream, SSE
 * frames of StreamResponse objects, the version and extension service parameters as on JSON-RPC.
 */
import t from 'tap'
import { SendMessageRequest, type Task } from '@a2a-js/sdk'
import {
  ClientFactory, DefaultAgentCardResolver, RestTransportFactory, ServiceParameters, withA2AExtensions
} from '@a2a-js/sdk/client'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { hangingExecutor, inputRequiredExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { DOORS, serveDoor, URI, userMessage, type Door, type DoorAgent } from '../../fixtures/doors.js'
import { contextIdOf } from '../../fixtures/context-ids.js'
import { readSse } from '../../fixtures/sse-reader.js'

const provider = staticEnvelopeProvider(ENVELOPE as never)
const card = { name: 'Demo', description: 'A test agent', capabilities: { streaming: true } }
const info = (reason: string, metadata: Record<string, string> = {}) =>
  [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org', metadata }]

interface RestReply { status: number, headers: Headers, text: string, json: any }

/** One HTTP+JSON request under the agent's interface URL, read whole. */
async function rest (door: Door, method: string, path: string, options: { body?: unknown, raw?: string, headers?: Record<string, string>, agent?: string } = {}): Promise<RestReply> {
  const headers: Record<string, string> = { 'a2a-version': '1.0', ...options.headers }
  let body: string | undefined = options.raw
  if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${door.base}/a2a/${options.agent ?? 'demo'}/rest${path}`, { method, headers, body })
  const text = await response.text()
  let json: unknown
  try { json = JSON.parse(text) } catch { json = undefined }
  return { status: response.status, headers: response.headers, text, json }
}

function recordingFetch () {
  const exchanges: Array<{ url: string, method: string, response: Response }> = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    exchanges.push({ url: String(input), method: init?.method ?? 'GET', response })
    return response
  }
  return { exchanges, fetchImpl }
}

/** A task store that cannot be reached (its driver's detail must not reach the client). */
function brokenStore (): TaskStore {
  return Object.assign(new InMemoryTaskStore(), { async load (): Promise<undefined> { throw new Error('database is down at 10.0.0.7') } })
}

/** A backend that serves push configs (canned), so the 201 / 204 routes are seen. */
function pushBackend (): A2ABackend {
  return {
    facts: { capabilities: { streaming: false, pushNotifications: true, extendedAgentCard: true }, requiredExtensions: [] },
    async call (request) {
      switch (request.method) {
        case 'CreateTaskPushNotificationConfig': return { ...request.params, id: 'cfg-1' }
        case 'GetTaskPushNotificationConfig':
          // A value no JSON serializer takes: the door's own failure path.
          if (request.params.id === 'unserializable') return { taskId: request.params.taskId, id: 1n }
          return { taskId: request.params.taskId, id: request.params.id, url: 'https://hook.example/a' }
        case 'ListTaskPushNotificationConfigs': return { configs: [], nextPageToken: '', seen: request.params }
        case 'GetExtendedAgentCard': return { name: 'Extended', seen: request.params }
        default: return { seen: request.params }
      }
    },
    stream: () => ({ next: async () => ({ done: true, value: undefined }) }),
    toError: () => ({ code: -32603, message: 'Internal error' })
  }
}

for (const name of DOORS) {
  t.test(`${name}: the official SDK client picks HTTP+JSON from the card and runs every task method over it`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: taskExecutor() }], provider })
    const { exchanges, fetchImpl } = recordingFetch()
    // The REST transport only: the factory must find the HTTP+JSON interface in the card.
    const factory = new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) })
    const client = await factory.createFromUrl(door.base)
    const resolved = await client.getAgentCard()
    t.strictSame(resolved.supportedInterfaces.map((entry) => [entry.url, entry.protocolBinding, entry.protocolVersion]), [
      [`${door.base}/a2a/demo`, 'JSONRPC', '1.0'],
      [`${door.base}/a2a/demo/rest`, 'HTTP+JSON', '1.0'],
      [`${door.base}/a2a/demo`, 'JSONRPC', '0.3'],
      [`${door.base}/a2a/demo/rest`, 'HTTP+JSON', '0.3']
    ])
    const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }
    const decorated = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('x') }), withConverse) as Task
    t.equal(exchanges.at(-1)?.url, `${door.base}/a2a/demo/rest/message:send`)
    t.equal(exchanges.at(-1)?.response.headers.get('a2a-extensions'), URI, 'the echo header, as on JSON-RPC')
    t.match(exchanges.at(-1)?.response.headers.get('content-type'), /^application\/json/, '§11.1: application/json')
    t.match(decorated.artifacts[0].metadata?.[URI], { answerCoverage: ENVELOPE.answerCoverage })
    const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('plain') })) as Task
    t.equal(plain.artifacts[0].metadata?.[URI], undefined, 'stripped without activation')
    const kinds: string[] = []
    for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('s') }), withConverse)) {
      if (event.payload !== undefined) kinds.push(event.payload.$case)
    }
    t.strictSame(kinds, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
    t.equal(exchanges.at(-1)?.response.headers.get('a2a-extensions'), URI, 'on the stream\'s headers too')
    const got = await client.getTask({ tenant: '', id: decorated.id, historyLength: 0 })
    t.equal(got.id, decorated.id)
    t.equal(got.history.length, 0, 'historyLength from the query')
    const listed = await client.listTasks({ tenant: '', contextId: decorated.contextId, pageSize: 10 } as never)
    t.strictSame(listed.tasks.map((task) => task.id), [decorated.id])
    await t.rejects(client.getTask({ tenant: '', id: 'nope', historyLength: undefined }), /Task not found/)
    await t.rejects(client.cancelTask({ tenant: '', id: decorated.id, metadata: undefined }), /cannot be canceled|not cancelable/i)
    await t.rejects(client.resubscribeTask({ tenant: '', id: decorated.id }).next(), /terminal state/, 'an error before the stream: a plain reply')
  })

  t.test(`${name}: cancel and subscribe a running task over HTTP+JSON`, async (t) => {
    const executor = hangingExecutor()
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor }] })
    const contextId = contextIdOf(`rest-cancel-${name}`)
    const stream = fetch(`${door.base}/a2a/demo/rest/message:stream`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: JSON.stringify({ message: userMessage('wait', { contextId }) })
    })
    await executor.started
    const listed = await rest(door, 'GET', `/tasks?contextId=${contextId}&includeArtifacts=false&historyLength=1`)
    t.equal(listed.status, 200)
    const taskId = listed.json.tasks[0].id
    const controller = new AbortController()
    const subscription = await fetch(`${door.base}/a2a/demo/rest/tasks/${taskId}:subscribe`, { headers: { 'a2a-version': '1.0' }, signal: controller.signal })
    t.equal(subscription.headers.get('content-type'), 'text/event-stream', 'GET :subscribe (the proto\'s rule)')
    const sse = readSse(subscription)
    sse.ended.catch(() => {})
    const first = await sse.waitFor(() => true)
    t.match(first, { task: { id: taskId } }, 'data: a StreamResponse, no JSON-RPC envelope')
    t.equal(first.jsonrpc, undefined)
    const canceled = await rest(door, 'POST', `/tasks/${encodeURIComponent(taskId)}:cancel`, { headers: { 'content-type': 'application/json' } })
    t.equal(canceled.status, 200)
    t.equal(canceled.json.status.state, 'TASK_STATE_CANCELED')
    controller.abort()
    await (await stream).text()
  })

  t.test(`${name}: errors: the §5.4 status and an AIP-193 body`, async (t) => {
    const door = await serveDoor(t, name, {
      agents: [
        { id: 'demo', card, executor: taskExecutor() },
        { id: 'quiet', card: { name: 'Q', description: 'q', capabilities: { streaming: false } }, executor: inputRequiredExecutor() },
        { id: 'broken', card, executor: taskExecutor(), taskStore: brokenStore() }
      ],
      bodyLimit: 2048
    })
    const unknown = await rest(door, 'GET', '/tasks/nope')
    t.equal(unknown.status, 404)
    t.equal(unknown.headers.get('content-type'), 'application/json; charset=utf-8', 'an error: the door writes the JSON media type, as for JSON-RPC')
    t.strictSame(unknown.json, { error: { code: 404, status: 'NOT_FOUND', message: 'Task not found: nope', details: info('TASK_NOT_FOUND', { taskId: 'nope' }) } })
    const sent = await rest(door, 'POST', '/message:send', { body: { message: userMessage('q') } })
    t.equal(sent.headers.get('content-type'), 'application/json; charset=utf-8', 'a result: the same media type')
    const done = sent.json.task
    t.equal(done.status.state, 'TASK_STATE_COMPLETED')
    t.match(await rest(door, 'POST', `/tasks/${done.id}:cancel`), { status: 409, json: { error: { code: 409, status: 'FAILED_PRECONDITION', details: info('TASK_NOT_CANCELABLE', { taskId: done.id }) } } })
    for (const verb of ['GET', 'POST']) {
      const terminal = await rest(door, verb, `/tasks/${done.id}:subscribe`)
      t.match([terminal.status, terminal.headers.get('content-type'), terminal.json], [400, 'application/json; charset=utf-8', { error: { code: 400, status: 'UNIMPLEMENTED', details: [{ reason: 'UNSUPPORTED_OPERATION' }] } }],
        `${verb} :subscribe on a finished task: a plain error`)
    }
    const noVersion = await rest(door, 'POST', '/message:send', { body: { message: userMessage('q') }, headers: { 'a2a-version': '' } })
    t.match(noVersion, { status: 400, json: { error: { status: 'UNIMPLEMENTED', details: info('VERSION_NOT_SUPPORTED', { requestedVersion: '0.3', supportedVersions: '1.0' }) } } })
    const viaQuery = await fetch(`${door.base}/a2a/demo/rest/tasks/${done.id}?A2A-Version=1.0`)
    t.equal(viaQuery.status, 200, 'A2A-Version as a query parameter')
    const invalid = await rest(door, 'GET', `/tasks/${done.id}?historyLength=abc`)
    t.match(invalid, { status: 400, json: { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Invalid parameters', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'historyLength' }] }] } } })
    const walkIn = await rest(door, 'GET', '/tasks')
    t.match(walkIn, { status: 400, json: { error: { details: [{ fieldViolations: [{ field: 'contextId' }] }] } } }, 'a walk-in\'s ListTasks names a contextId')
    const missing = await rest(door, 'POST', '/message:send')
    t.match(missing, { status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'Invalid parameters' } } })
    t.match(await rest(door, 'POST', '/message:send', { raw: '{"message":' }), { status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload' } } })
    t.match(await rest(door, 'POST', '/message:send', { raw: 'x', headers: { 'content-type': 'text/plain' } }),
      { status: 415, json: { error: { code: 415, status: 'INVALID_ARGUMENT', details: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] } } })
    t.match(await rest(door, 'POST', '/message:send', { raw: JSON.stringify({ message: userMessage('x'.repeat(4000)) }) }), { status: 413, json: { error: { code: 413 } } })
    t.match(await rest(door, 'POST', '/message:send', { raw: '{}', headers: { 'content-type': 'application/a2a+json' } }), { status: 400, json: { error: { message: 'Invalid parameters' } } },
      'application/a2a+json is read (and checked)')
    t.match(await rest(door, 'POST', '/tasks/t-1/pushNotificationConfigs', { body: { url: 'https://hook.example/a' } }),
      { status: 400, json: { error: { status: 'UNIMPLEMENTED', details: info('PUSH_NOTIFICATION_NOT_SUPPORTED') } } }, 'push: not supported before the params are read')
    t.match(await rest(door, 'GET', '/extendedAgentCard'), { status: 400, json: { error: { details: [{ reason: 'UNSUPPORTED_OPERATION' }] } } })
    t.match(await rest(door, 'POST', '/message:stream', { body: { message: userMessage('q') }, agent: 'quiet' }), { status: 400, json: { error: { details: [{ reason: 'UNSUPPORTED_OPERATION' }] } } })
    const broken = await rest(door, 'GET', '/tasks/t-1', { agent: 'broken' })
    t.equal(broken.status, 500)
    t.notMatch(broken.text, /10\.0\.0\.7/)
    t.match(broken.json, { error: { code: 500, status: 'INTERNAL' } })
    t.match(await rest(door, 'GET', '/nowhere'), { status: 404, json: { error: { code: 404, status: 'NOT_FOUND' } } })
    t.match(await rest(door, 'GET', '/message:send'), { status: 405, json: { error: { code: 405 } } })
    t.equal((await rest(door, 'GET', '/message:send')).headers.get('allow'), 'POST')
    t.equal((await rest(door, 'GET', '/tasks/%E0%A4%A')).status, 400, 'a path that cannot be decoded (Fastify\'s router refuses it first)')
    t.match(await rest(door, 'PATCH', '/tasks/t-1'), { status: 405 }, 'a verb no route has')
    t.match(await rest(door, 'GET', '/tasks/x', { agent: 'ghost' }), { status: 404, json: { statusCode: 404, message: 'unknown agent "ghost"' } })
  })

  t.test(`${name}: every route of the table, tenants and the 201 / 204 statuses (a backend serving push configs)`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card: { name: 'P', description: 'p' }, backend: pushBackend() } as DoorAgent] })
    const created = await rest(door, 'POST', '/tasks/t-1/pushNotificationConfigs', { body: { url: 'https://hook.example/a', taskId: 'other' } })
    t.match(created, { status: 201, json: { taskId: 't-1', id: 'cfg-1', url: 'https://hook.example/a' } }, 'the path\'s task id wins')
    t.match(await rest(door, 'GET', '/tasks/t-1/pushNotificationConfigs/cfg-1'), { status: 200, json: { taskId: 't-1', id: 'cfg-1' } })
    t.match(await rest(door, 'GET', '/tasks/t-1/pushNotificationConfigs?pageSize=5&pageToken=p'), { status: 200, json: { seen: { taskId: 't-1', pageSize: 5, pageToken: 'p' } } })
    const deleted = await rest(door, 'DELETE', '/tasks/t-1/pushNotificationConfigs/cfg-1', { headers: { 'content-type': 'application/json' } })
    t.equal(deleted.status, 204)
    t.equal(deleted.text, '')
    t.match(await rest(door, 'GET', '/extendedAgentCard'), { status: 200, json: { name: 'Extended', seen: {} } })
    t.match(await rest(door, 'GET', '/acme/extendedAgentCard'), { status: 200, json: { seen: { tenant: 'acme' } } }, 'a {tenant} prefix')
    t.match(await rest(door, 'GET', '/acme/tasks/t-1/pushNotificationConfigs/cfg-1'), { status: 200 })
    const unserializable = await rest(door, 'GET', '/tasks/t-1/pushNotificationConfigs/unserializable')
    t.match(unserializable, { status: 500, json: { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } } }, 'a reply that cannot be written: 500, the binding\'s body')
    for (const [verb, path, allow] of [['PUT', '/tasks/t-1:cancel', 'POST'], ['DELETE', '/tasks/t-1:subscribe', 'GET, POST'], ['DELETE', '/tasks/t-1/pushNotificationConfigs', 'GET, POST'],
      ['POST', '/tasks/t-1/pushNotificationConfigs/c', 'DELETE, GET'], ['GET', '/tasks/t-1/x', undefined], ['GET', '/tasks/t-1/pushNotificationConfigs/c/d', undefined],
      ['GET', '/other/t-1/pushNotificationConfigs/c', undefined], ['GET', '/other/t-1', undefined], ['DELETE', '/tasks', 'GET'], ['GET', '/acme/other', undefined]] as const) {
      const reply = await rest(door, verb, path)
      t.equal(reply.status, allow === undefined ? 404 : 405, `${verb} ${path}`)
      if (allow !== undefined) t.equal(reply.headers.get('allow'), allow)
    }
  })
}

for (const name of DOORS) {
  t.test(`${name}: a client that leaves before its JSON reply aborts what the backend waits for`, async (t) => {
    let called!: () => void
    const waiting = new Promise<void>((resolve) => { called = resolve })
    let aborted!: () => void
    const abortSeen = new Promise<void>((resolve) => { aborted = resolve })
    const backend: A2ABackend = {
      ...pushBackend(),
      async call (_request, context) {
        called()
        return await new Promise((resolve) => {
          context.signal.addEventListener('abort', () => { aborted(); resolve({}) }, { once: true })
        })
      }
    }
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card: { name: 'P', description: 'p' }, backend } as DoorAgent] })
    const controller = new AbortController()
    const pending = fetch(`${door.base}/a2a/demo/rest/extendedAgentCard`, { headers: { 'a2a-version': '1.0' }, signal: controller.signal })
    pending.catch(() => {})
    await waiting
    controller.abort()
    await abortSeen
    t.pass('the backend saw the request\'s signal abort')
  })
}
