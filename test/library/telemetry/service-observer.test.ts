/**
 * The A2A service's observer (the gateway's metrics hook it) with a backend the test drives: a stream is opened and
 * closed exactly once however it ends — read to its end, left by the door, or never read because the client left
 * while it opened; a backend that fails on an unreachable store is said so.
 */
import t from 'tap'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { createA2AService, type A2AResult } from '../../../packages/a2a-converse/src/a2a/service.js'
import { createConverseExtension } from '../../../packages/a2a-converse/src/core/converse-extension.js'
import { internalError } from '../../../packages/a2a-converse/src/protocol/errors.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'
import type { CallObserver, CallRecord } from '../../../packages/a2a-converse/src/telemetry/observer.js'

const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] }
const STATUS = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }

function recorder () {
  const events: string[] = []
  const records: CallRecord[] = []
  const observer: CallObserver = {
    callEnded: (record) => { records.push(record); events.push(`ended ${record.method}`) },
    streamOpened: (agentId, binding) => { events.push(`opened ${agentId} ${binding}`) },
    streamClosed: (agentId, binding) => { events.push(`closed ${agentId} ${binding}`) }
  }
  return { events, records, observer }
}

function serviceOver (backend: Partial<A2ABackend>, observer: CallObserver) {
  const full: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async () => ({}),
    stream: async function * () {},
    toError: () => internalError(),
    ...backend
  }
  const extension = createConverseExtension({ agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }] })
  return createA2AService({ extension, backends: new Map([['demo', full]]), observer })
}

const streamCall = (signal: AbortSignal) => ({
  agentId: 'demo', binding: 'jsonrpc', method: 'SendStreamingMessage', params: { message }, headers: { 'a2a-version': '1.0' }, signal
})

async function drain (result: A2AResult): Promise<void> {
  if (result.kind !== 'stream') throw new Error(`not a stream: ${result.kind}`)
  const seen: unknown[] = []
  for await (const item of result.events) seen.push(item)
}

t.test('a stream read to its end: opened, closed, then its call ended once', async (t) => {
  const { events, records, observer } = recorder()
  const service = serviceOver({ stream: async function * () { yield STATUS; yield STATUS } }, observer)
  await drain(await service.call(streamCall(new AbortController().signal)))
  t.strictSame(events, ['opened demo jsonrpc', 'closed demo jsonrpc', 'ended SendStreamingMessage'])
  t.match(records[0], { errorCode: undefined, answer: { taskId: 't', contextId: 'c', taskState: 'TASK_STATE_WORKING' } })
})

t.test('the client left while the stream opened: closed at once, though nothing reads it', async (t) => {
  const { events, observer } = recorder()
  const controller = new AbortController()
  const service = serviceOver({
    stream: async function * () {
      controller.abort()
      yield STATUS
    }
  }, observer)
  const result = await service.call(streamCall(controller.signal))
  t.equal(result.kind, 'stream')
  t.strictSame(events, ['opened demo jsonrpc', 'closed demo jsonrpc', 'ended SendStreamingMessage'])
  await drain(result)
  t.equal(events.length, 3, 'reading it afterwards counts nothing more')
})

t.test('a door that stops reading: closed once, by return() or by the abort', async (t) => {
  const { events, observer } = recorder()
  const service = serviceOver({ stream: async function * () { for (;;) yield STATUS } }, observer)
  const controller = new AbortController()
  const result = await service.call(streamCall(controller.signal))
  if (result.kind !== 'stream') throw new Error('not a stream')
  const iterator = result.events[Symbol.asyncIterator]()
  await iterator.next()
  await iterator.return?.()
  controller.abort()
  t.strictSame(events, ['opened demo jsonrpc', 'closed demo jsonrpc', 'ended SendStreamingMessage'])
})

t.test('a store that cannot be reached: the call is marked, in a value call and mid-stream', async (t) => {
  const { records, observer } = recorder()
  const service = serviceOver({
    call: async () => { throw new StoreUnavailableError() },
    stream: async function * () {
      yield STATUS
      throw new StoreUnavailableError()
    }
  }, observer)
  await service.call({ agentId: 'demo', method: 'GetTask', params: { id: 't' }, headers: { 'a2a-version': '1.0' }, signal: new AbortController().signal })
  await drain(await service.call(streamCall(new AbortController().signal)))
  t.match(records, [
    { method: 'GetTask', binding: 'direct', errorCode: -32603, storeUnavailable: true },
    { method: 'SendStreamingMessage', binding: 'jsonrpc', errorCode: -32603, storeUnavailable: true }
  ])
})
