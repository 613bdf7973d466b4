/**
 * The relayed push layer on its own (packages/a2a-converse/src/backends/proxy/relayed-push-backend.ts), over a scripted upstream and a
 * real memory task store and deliverer (no webhook: the deliverer's queue is what is checked): what a turn, a stream
 * or a read saves into a copy, replies without a task, a copy that cannot be saved (the config it was made for
 * removed, the error answered; a relayed update not saved is logged and the answer goes on), the facts.
 */
import t from 'tap'
import type { TaskStore } from '@a2a-js/sdk/server'
import { InMemoryTaskStore } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext } from '../../../../packages/a2a-converse/src/protocol/backend.js'
import type { CheckedRequest } from '../../../../packages/a2a-converse/src/protocol/check-request.js'
import { relayedPushBackend } from '../../../../packages/a2a-converse/src/backends/proxy/relayed-push-backend.js'
import { upstreamUnavailable, UpstreamError } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-errors.js'
import { createPushNotifications } from '../../../../packages/a2a-converse/src/push/index.js'
import { callerContext } from '../../../../packages/a2a-converse/src/auth/sdk-user.js'

type Json = Record<string, any>

function context (log?: BackendContext['log']): BackendContext {
  return { agentId: 'shop', requestedExtensions: [], activated: [], version: '1.0', headers: {}, signal: new AbortController().signal, caller: { id: 'alice' }, log }
}

function request (method: string, params: Json): CheckedRequest {
  return { id: 1, method: method as CheckedRequest['method'], params }
}

function task (id: string, state: string, artifacts: Json[] = []): Json {
  return { id, contextId: 'c1', status: { state, timestamp: '2026-12-03T10:00:00.000Z' }, artifacts, history: [] }
}

/** An upstream answering from a script: SendMessage / GetTask / CancelTask results and stream events by test. */
function scripted (results: { call?: (request: CheckedRequest) => unknown, events?: unknown[] }): A2ABackend & { forwarded: CheckedRequest[] } {
  const forwarded: CheckedRequest[] = []
  return {
    forwarded,
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    async call (request) {
      forwarded.push(request)
      return results.call?.(request)
    },
    async * stream (request) {
      forwarded.push(request)
      yield * results.events ?? []
    },
    toError (error) { return (error as UpstreamError).error }
  }
}

/** Every result of a stream, in order. */
async function drain (iterator: AsyncIterator<unknown, void, undefined>): Promise<unknown[]> {
  const results: unknown[] = []
  for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) results.push(next.value)
  return results
}

/** A memory task store whose saves fail while `failing` is set. */
function fallible (): TaskStore & { failing: boolean } {
  const inner = new InMemoryTaskStore()
  const store = {
    failing: false,
    load: inner.load.bind(inner),
    list: inner.list.bind(inner),
    async save (saved: Parameters<TaskStore['save']>[0], scope: Parameters<TaskStore['save']>[1]) {
      if (store.failing) throw new Error('the store is down')
      await inner.save(saved, scope)
    }
  }
  return store
}

function setup (upstream: A2ABackend) {
  const push = createPushNotifications({ allowedHosts: ['127.0.0.1'], allowHttp: true })
  const store = fallible()
  const { push: agentPush, taskStore } = push.forAgent('shop', store)
  const queued: unknown[][] = []
  // What the deliverer is given (nothing listens on the hook's port: posting is not this test's).
  push.deliverer.enqueue = (_agentId, _taskId, _configs, updates) => { queued.push([...updates]) }
  const backend = relayedPushBackend({ agentId: 'shop', upstream, copies: taskStore, push: agentPush })
  return { backend, store, configs: agentPush.configs, queued, close: async () => { await backend.close(); await push.close() } }
}

const HOOK = { url: 'http://127.0.0.1:9/hook' }

t.test('the facts: the upstream\'s, push notifications on, the same object while the upstream\'s are', async (t) => {
  const { backend, close } = setup(scripted({}))
  t.teardown(close)
  t.equal(backend.facts.capabilities.pushNotifications, true)
  t.equal(backend.facts.capabilities.streaming, true)
  t.equal(backend.facts, backend.facts)
})

t.test('other methods go upstream untouched', async (t) => {
  const upstream = scripted({ call: () => ({ name: 'card' }) })
  const { backend, close } = setup(upstream)
  t.teardown(close)
  t.strictSame(await backend.call(request('GetExtendedAgentCard', {}), context()), { name: 'card' })
  t.equal(upstream.forwarded[0].method, 'GetExtendedAgentCard')
})

t.test('a streamed turn with an inline config: the first event makes the copy, the others update it', async (t) => {
  const upstream = scripted({
    events: [
      { task: task('t1', 'TASK_STATE_SUBMITTED') },
      { statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } } },
      { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a1', parts: [{ text: 'x' }] }, append: false, lastChunk: true } },
      { statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } } }
    ]
  })
  const { backend, queued, close } = setup(upstream)
  t.teardown(close)
  const params = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'go' }] }, configuration: { taskPushNotificationConfig: HOOK, historyLength: 2 } }
  const events = await drain(backend.stream(request('SendStreamingMessage', params), context()))
  t.equal(events.length, 4, 'every event reaches the caller')
  t.strictSame(upstream.forwarded[0].params.configuration, { historyLength: 2 }, 'the config is not forwarded, the rest of the configuration is')
  t.same(queued.map((updates) => updates.map((update: any) => Object.keys(update)[0])),
    [['statusUpdate'], ['statusUpdate'], ['artifactUpdate'], ['statusUpdate']], 'one save per event: submitted, working, the artifact, completed')
})

t.test('replies without a task: nothing configured, nothing copied', async (t) => {
  const upstream = scripted({ call: () => ({ message: { messageId: 'r1', contextId: 'c1', role: 'ROLE_AGENT', parts: [] } }), events: [{ message: { messageId: 'r2', role: 'ROLE_AGENT', parts: [] } }] })
  const { backend, configs, queued, close } = setup(upstream)
  t.teardown(close)
  const params = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, configuration: { taskPushNotificationConfig: HOOK } }
  await backend.call(request('SendMessage', params), context())
  await drain(backend.stream(request('SendStreamingMessage', params), context()))
  t.equal((configs as unknown as { size: number }).size, 0)
  t.equal(queued.length, 0)
  // A result naming no task id: nothing to save.
  const odd = scripted({ call: () => ({ id: '', contextId: 'c1' }) })
  const other = setup(odd)
  t.teardown(other.close)
  await other.backend.call(request('GetTask', { id: 'x' }), context())
  t.equal(other.queued.length, 0)
})

t.test('SubscribeToTask of a walk-in\'s configured task: its events update the copy', async (t) => {
  const upstream = scripted({
    call: () => task('t5', 'TASK_STATE_WORKING'),
    events: [{ task: task('t5', 'TASK_STATE_WORKING') }, {}, { statusUpdate: { taskId: 't5', contextId: 'c1', status: { state: 'TASK_STATE_CANCELED' } } }]
  })
  const { backend, queued, close } = setup(upstream)
  t.teardown(close)
  const walkIn = { ...context(), caller: undefined }
  await backend.call(request('CreateTaskPushNotificationConfig', { taskId: 't5', ...HOOK }), walkIn)
  await drain(backend.stream(request('SubscribeToTask', { id: 't5' }), walkIn))
  await new Promise((resolve) => setTimeout(resolve, 20)) // the follow (the same script) ends too
  t.same(queued.map((updates) => updates.map((update: any) => update.statusUpdate.status.state)), [['TASK_STATE_CANCELED']], 'an event without a payload is skipped')
  t.equal(backend.followed, 0, 'the task ended: not followed')
})

t.test('a copy that cannot be made: the config it was for is removed and the error answered', async (t) => {
  const upstream = scripted({ call: () => ({ task: task('t2', 'TASK_STATE_INPUT_REQUIRED') }) })
  const { backend, store, configs, close } = setup(upstream)
  t.teardown(close)
  store.failing = true
  const params = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'ask' }] }, configuration: { taskPushNotificationConfig: HOOK } }
  await t.rejects(backend.call(request('SendMessage', params), context()), { message: 'the store is down' })
  t.strictSame(await configs.load('t2', callerContext('alice')), [], 'no config left that nothing would report to')
})

t.test('a relayed update that cannot be saved: logged, the caller still gets the answer', async (t) => {
  let state = 'TASK_STATE_INPUT_REQUIRED'
  const upstream = scripted({ call: (req) => req.method === 'GetTask' ? task('t3', state) : { task: task('t3', state) } })
  const { backend, store, close } = setup(upstream)
  t.teardown(close)
  const created = await backend.call(request('CreateTaskPushNotificationConfig', { taskId: 't3', ...HOOK }), context())
  t.match(created, { taskId: 't3', url: HOOK.url })
  const logged: Json[] = []
  const log = { error: (object: object, message: string) => { logged.push({ ...object, msg: message }) }, warn () {}, info () {} }
  store.failing = true
  state = 'TASK_STATE_COMPLETED'
  t.match(await backend.call(request('GetTask', { id: 't3' }), context(log)), { status: { state: 'TASK_STATE_COMPLETED' } })
  t.match(logged, [{ agentId: 'shop', msg: 'push copy of an upstream task not saved', err: { message: 'the store is down' } }])
})

t.test('errors: an upstream failure is the upstream\'s, a refused URL -32602 naming the field', async (t) => {
  const failure = new UpstreamError(upstreamUnavailable('shop', 'cannot be reached'), 'ECONNREFUSED')
  const upstream = scripted({ call: () => { throw failure } })
  const { backend, close } = setup(upstream)
  t.teardown(close)
  const create = request('CreateTaskPushNotificationConfig', { taskId: 't9', ...HOOK })
  const error = await backend.call(create, context()).catch((caught: unknown) => caught)
  t.equal(backend.toError(error, create).code, -32050, 'the task could not be read upstream to be copied')
  const refused = request('CreateTaskPushNotificationConfig', { taskId: 't9', url: 'https://10.0.0.1/hook' })
  const refusal = await backend.call(refused, context()).catch((caught: unknown) => caught)
  t.match(backend.toError(refusal, refused), { code: -32602, data: [{ fieldViolations: [{ field: 'url' }] }] })
  t.equal(upstream.forwarded.length, 1, 'a refused URL costs no upstream call')
})
