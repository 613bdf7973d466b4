/**
 * The ownership layer in front of an upstream backend on its own (packages/a2a-converse/src/backends/proxy/owned-upstream-backend.ts), over a
 * scripted upstream: walk-ins and callers apart, one store read whether a task exists or not, ListTasks built from
 * the records (pages, filters, artifacts, tasks gone upstream, bounded concurrency), store failures.
 */
import t from 'tap'
import type { A2ABackend, BackendContext } from '../../../../packages/a2a-converse/src/protocol/backend.js'
import { A2AReplyError } from '../../../../packages/a2a-converse/src/backends/local/local-backend.js'
import type { CheckedRequest } from '../../../../packages/a2a-converse/src/protocol/check-request.js'
import { STORE_UNAVAILABLE_MESSAGE } from '../../../../packages/a2a-converse/src/backends/local/dispatch-errors.js'
import { internalError, taskNotCancelable, taskNotFound } from '../../../../packages/a2a-converse/src/protocol/errors.js'
import { ownedUpstreamBackend } from '../../../../packages/a2a-converse/src/backends/proxy/owned-upstream-backend.js'
import { FETCH_CONCURRENCY } from '../../../../packages/a2a-converse/src/backends/proxy/owned-task-list.js'
import { StoreUnavailableError } from '../../../../packages/a2a-converse/src/stores/errors.js'
import { MemoryUpstreamOwnershipStore } from '../../../../packages/a2a-converse/src/stores/memory-upstream-ownership-store.js'

type Json = Record<string, any>

function context (caller?: string): BackendContext {
  return {
    agentId: 'shop',
    requestedExtensions: [],
    activated: [],
    version: '1.0',
    headers: {},
    signal: new AbortController().signal,
    ...(caller === undefined ? {} : { caller: { id: caller } })
  }
}

function request (method: string, params: Json): CheckedRequest {
  return { id: 1, method: method as CheckedRequest['method'], params }
}

/** An upstream that answers SendMessage with a new task (or a message for "msg"), GetTask from its tasks. */
function scriptedUpstream () {
  const tasks = new Map<string, Json>()
  const calls: CheckedRequest[] = []
  let running = 0
  let peak = 0
  let next = 0
  const upstream: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    async call (request) {
      calls.push(request)
      running++
      peak = Math.max(peak, running)
      await new Promise((resolve) => setImmediate(resolve))
      running--
      const params = request.params as Json
      if (request.method === 'SendMessage') {
        if (params.message.parts[0].text === 'msg') return { message: { messageId: 'm', contextId: params.message.contextId ?? 'c-msg', role: 'ROLE_AGENT', parts: [] } }
        if (params.message.parts[0].text === 'odd') return null
        if (params.message.parts[0].text === 'empty') return {}
        if (params.message.parts[0].text === 'msg-task') return { message: { messageId: 'm', taskId: 'mt1', contextId: 'mc1', role: 'ROLE_AGENT', parts: [] } }
        const id = `t${++next}`
        const task = {
          id,
          contextId: params.message.contextId ?? `c${next}`,
          status: { state: params.message.parts[0].text, timestamp: new Date(Date.UTC(2026, 0, next)).toISOString() },
          artifacts: [{ artifactId: 'a' }]
        }
        tasks.set(id, task)
        return { task }
      }
      if (request.method === 'GetTask') {
        if (params.id === 'boom') throw new A2AReplyError(taskNotCancelable())
        const task = tasks.get(params.id)
        if (task === undefined) throw new A2AReplyError(taskNotFound(params.id))
        return { ...task, historyLength: params.historyLength }
      }
      return { forwarded: request.method }
    },
    async * stream (request) {
      calls.push(request)
      yield { task: { id: 'st1', contextId: 'sc1', status: { state: 'TASK_STATE_WORKING' } } }
      yield { statusUpdate: { taskId: 'st1', contextId: 'sc1', status: { state: 'TASK_STATE_COMPLETED' } } }
    },
    toError: (error) => error instanceof A2AReplyError ? error.error : internalError('upstream')
  }
  return { upstream, tasks, calls, peak: () => peak }
}

async function errorOf (promise: Promise<unknown>): Promise<Json> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  if (!(error instanceof A2AReplyError)) throw new Error(`expected an A2AReplyError, got ${String(error)}`)
  return error.error as Json
}

async function drain (iterator: AsyncIterator<unknown>): Promise<unknown[]> {
  const results: unknown[] = []
  for (;;) {
    const next = await iterator.next()
    if (next.done === true) return results
    results.push(next.value)
  }
}

const send = (text: string, extra: Json = {}) => request('SendMessage', { message: { messageId: 'x', role: 'ROLE_USER', parts: [{ text }], ...extra } })

t.test('walk-ins and callers: each reaches its own tasks by id, never the other\'s', async (t) => {
  const { upstream } = scriptedUpstream()
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership: new MemoryUpstreamOwnershipStore() })
  t.equal(backend.facts, upstream.facts)
  const walkIn = (await backend.call(send('TASK_STATE_WORKING'), context()) as Json).task
  const alice = (await backend.call(send('TASK_STATE_WORKING'), context('alice')) as Json).task
  t.equal((await backend.call(request('GetTask', { id: walkIn.id }), context()) as Json).id, walkIn.id, 'a walk-in reaches a walk-in task by its id')
  t.equal((await errorOf(backend.call(request('GetTask', { id: alice.id }), context()))).code, -32001, 'never a caller\'s')
  t.equal((await errorOf(backend.call(request('CancelTask', { id: walkIn.id }), context('alice')))).code, -32001, 'a caller never a walk-in\'s')
  t.equal((await errorOf(backend.call(send('x', { contextId: walkIn.contextId }), context('alice')))).code, -32602, 'nor its context')
  t.same(await backend.call(request('GetExtendedAgentCard', {}), context()), { forwarded: 'GetExtendedAgentCard' }, 'other methods go upstream')
})

t.test('another caller\'s task and a task never recorded: one store read each, the same error', async (t) => {
  const { upstream } = scriptedUpstream()
  const ownership = new MemoryUpstreamOwnershipStore()
  let reads = 0
  const taskOwner = ownership.taskOwner.bind(ownership)
  ownership.taskOwner = async (agentId, taskId) => { reads++; return await taskOwner(agentId, taskId) }
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership })
  const alice = (await backend.call(send('TASK_STATE_WORKING'), context('alice')) as Json).task
  reads = 0
  const theirs = await errorOf(backend.call(request('GetTask', { id: alice.id }), context('bob')))
  const readsTheirs = reads
  reads = 0
  const none = await errorOf(backend.call(request('GetTask', { id: 'zz' }), context('bob')))
  t.equal(readsTheirs, 1)
  t.equal(reads, 1, 'the same number of store reads')
  t.same(JSON.parse(JSON.stringify(theirs).replaceAll(alice.id, '<id>')), JSON.parse(JSON.stringify(none).replaceAll('zz', '<id>')))
})

t.test('a reply without a task records its context; a result that is no object records nothing', async (t) => {
  const { upstream } = scriptedUpstream()
  const ownership = new MemoryUpstreamOwnershipStore()
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership })
  await backend.call(send('msg'), context('alice'))
  t.equal(await ownership.claimContext('shop', 'bob', 'c-msg'), 'alice', 'the message\'s context is alice\'s')
  t.equal(await backend.call(send('odd'), context('alice')), null)
  t.same(await backend.call(send('empty'), context('alice')), {}, 'a result naming nothing')
  const artifactFirst = ownedUpstreamBackend({
    agentId: 'shop',
    ownership,
    upstream: { ...upstream, async * stream () { yield { artifactUpdate: { taskId: 'at1', contextId: 'ac1' } } } }
  })
  await drain(artifactFirst.stream({ ...send('x'), method: 'SendStreamingMessage' }, context('alice')))
  t.equal(await ownership.taskOwner('shop', 'at1'), 'alice', 'a stream whose first result is an artifact update')
  const statusFirst = ownedUpstreamBackend({
    agentId: 'shop',
    ownership,
    upstream: { ...upstream, async * stream () { yield { statusUpdate: { taskId: 'su1', contextId: 'sc9' } } } }
  })
  await drain(statusFirst.stream({ ...send('x'), method: 'SendStreamingMessage' }, context('alice')))
  t.equal(await ownership.taskOwner('shop', 'su1'), 'alice', 'a stream whose first result is a status update')
  await backend.call(send('msg-task'), context('alice'))
  t.equal(await ownership.taskOwner('shop', 'mt1'), 'alice', 'a message naming its task')
  t.same((await backend.call(request('ListTasks', { contextId: '' }), context('nobody')) as Json).tasks, [], 'an empty contextId filter is none')
  await backend.call(send('msg', { contextId: '' }), context('alice'))
  t.pass('an empty contextId is none')
})

t.test('streams: SubscribeToTask checked, a turn\'s first result recorded before it is seen', async (t) => {
  const { upstream } = scriptedUpstream()
  const ownership = new MemoryUpstreamOwnershipStore()
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership })
  const iterator = backend.stream({ ...send('hello'), method: 'SendStreamingMessage' }, context('alice'))
  await iterator.next()
  t.equal(await ownership.taskOwner('shop', 'st1'), 'alice', 'recorded before the first result is handed on')
  t.equal((await drain(iterator)).length, 1)
  t.equal((await drain(backend.stream(request('SubscribeToTask', { id: 'st1' }), context('alice')))).length, 2, 'alice subscribes')
  t.equal((await errorOf(drain(backend.stream(request('SubscribeToTask', { id: 'st1' }), context('bob'))))).code, -32001, 'bob does not')
})

t.test('ListTasks from the records: pages, filters, artifacts, tasks gone upstream, bounded concurrency', async (t) => {
  const { upstream, tasks, calls, peak } = scriptedUpstream()
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership: new MemoryUpstreamOwnershipStore() })
  const made: Json[] = []
  for (let i = 0; i < 20; i++) made.push((await backend.call(send(i % 2 === 0 ? 'TASK_STATE_WORKING' : 'TASK_STATE_COMPLETED'), context('alice')) as Json).task)
  await backend.call(send('TASK_STATE_WORKING'), context('bob'))
  tasks.delete(made[19].id)
  calls.length = 0
  const all = await backend.call(request('ListTasks', { pageSize: 100, historyLength: 2 }), context('alice')) as Json
  t.equal(all.totalSize, 20, 'the caller\'s recorded tasks')
  t.equal(all.tasks.length, 19, 'one gone upstream is not listed')
  t.same(all.tasks.map((task: Json) => task.id), made.slice(0, 19).reverse().map((task) => task.id), 'newest first')
  t.equal(all.nextPageToken, '')
  t.equal(all.pageSize, 100)
  t.ok(all.tasks.every((task: Json) => task.artifacts.length === 0 && task.historyLength === 2), 'no artifacts unless asked; historyLength passed on')
  t.ok(peak() <= FETCH_CONCURRENCY, `at most ${FETCH_CONCURRENCY} GetTask at once (${peak()})`)
  t.ok(calls.every((call) => call.method === 'GetTask'))

  const first = await backend.call(request('ListTasks', { pageSize: 5, includeArtifacts: true }), context('alice')) as Json
  t.equal(first.tasks.length, 4)
  t.same(first.tasks[0].artifacts, [{ artifactId: 'a' }], 'artifacts when asked')
  t.not(first.nextPageToken, '')
  const second = await backend.call(request('ListTasks', { pageToken: first.nextPageToken }), context('alice')) as Json
  t.equal(second.tasks.length, 15, 'the rest, at the default page size')
  t.equal(second.pageSize, 50)
  const working = await backend.call(request('ListTasks', { status: 'TASK_STATE_WORKING', statusTimestampAfter: made[9].status.timestamp }), context('alice')) as Json
  t.same(working.tasks.map((task: Json) => task.id), [made[18], made[16], made[14], made[12], made[10]].map((task) => task.id), 'status and statusTimestampAfter filter the page')
  const unset = await backend.call(request('ListTasks', { status: 'TASK_STATE_UNSPECIFIED', contextId: made[0].contextId, pageToken: '', statusTimestampAfter: '' }), context('alice')) as Json
  t.same(unset.tasks.map((task: Json) => task.id), [made[0].id], 'an unset status is no filter; by contextId')
  const bad = await errorOf(backend.call(request('ListTasks', { pageToken: 'abc' }), context('alice')))
  t.match(bad, { code: -32602, data: [{ fieldViolations: [{ field: 'pageToken' }] }] })
  tasks.set('boom', {})
  await backend.call(send('TASK_STATE_WORKING'), context('carol'))
  const carol = (await backend.call(request('ListTasks', {}), context('carol')) as Json).tasks[0]
  tasks.delete(carol.id)
  const ownership = new MemoryUpstreamOwnershipStore()
  await ownership.recordTask('shop', 'dave', 'boom', undefined)
  const failing = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership })
  t.equal((await errorOf(failing.call(request('ListTasks', {}), context('dave')))).code, -32002, 'another upstream failure fails the listing')
})

t.test('the records unavailable: -32603 saying so, logged; other errors are the upstream\'s', async (t) => {
  const { upstream } = scriptedUpstream()
  const backend = ownedUpstreamBackend({ agentId: 'shop', upstream, ownership: new MemoryUpstreamOwnershipStore() })
  const logged: unknown[] = []
  const log = { error: (object: object) => logged.push(object), warn () {}, info () {} }
  const checked = request('GetTask', { id: 'x' })
  t.same(backend.toError(new StoreUnavailableError(new Error('ECONNREFUSED')), checked, log), internalError(STORE_UNAVAILABLE_MESSAGE))
  t.equal(logged.length, 1)
  t.same(backend.toError(new A2AReplyError(taskNotFound('x')), checked, log), taskNotFound('x'))
  t.same(backend.toError(null, checked), internalError('upstream'))
})
