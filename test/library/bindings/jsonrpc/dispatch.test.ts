import t from 'tap'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { A2ADispatcher } from '../../../../packages/a2a-converse/src/backends/local/dispatch.js'
import { STORE_UNAVAILABLE_MESSAGE } from '../../../../packages/a2a-converse/src/backends/local/dispatch-errors.js'
import { messageExecutor, taskExecutor } from '../../../fixtures/a2a-executors.js'
import { ConversationMovedError, StoreUnavailableError } from '../../../../packages/a2a-converse/src/stores/errors.js'

const card = { name: 'Bare', description: 'no capabilities at all' }
const send = (text: string, extra: Record<string, unknown> = {}) =>
  ({ id: 1, method: 'SendMessage' as const, params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] }, ...extra } })

t.test('a card without capabilities: nothing optional is served', async (t) => {
  const dispatcher = new A2ADispatcher({ card, executor: messageExecutor() })
  t.strictSame(dispatcher.facts, {
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    requiredExtensions: []
  })
  const withExtensions = new A2ADispatcher({
    card: { ...card, capabilities: { streaming: true, extensions: [{ uri: 'https://a/v1', required: true }, { uri: 'https://b/v1' }, { required: true }] } },
    executor: messageExecutor()
  })
  t.strictSame(withExtensions.facts.requiredExtensions, ['https://a/v1'])
  t.equal(withExtensions.facts.capabilities.streaming, true)
})

t.test('context: tenant from params, headers optional', async (t) => {
  const dispatcher = new A2ADispatcher({ card, executor: taskExecutor() })
  const plain = dispatcher.createContext(send('a'), { requestedExtensions: ['https://x/v1'], version: '1.0' })
  t.equal(plain.tenant, undefined)
  t.strictSame(plain.requestedExtensions, ['https://x/v1'])
  t.equal(plain.requestedVersion, '1.0')
  t.strictSame(plain.state.get('headers'), {})
  t.equal(dispatcher.createContext(send('b', { tenant: '' }), { requestedExtensions: [], version: '1.0' }).tenant, undefined)

  const acme = dispatcher.createContext(send('c', { tenant: 'acme' }), { requestedExtensions: [], version: '1.0', headers: { a: 'b' } })
  t.equal(acme.tenant, 'acme')
  t.strictSame(acme.state.get('headers'), { a: 'b' })
  const created = await dispatcher.call(send('c', { tenant: 'acme' }), acme) as { result: { task: { id: string } } }
  const id = created.result.task.id
  const other = await dispatcher.call({ id: 2, method: 'GetTask', params: { id } }, new ServerCallContext())
  t.match(other, { error: { code: -32001 } }, 'tasks are scoped by tenant')
  const same = await dispatcher.call({ id: 3, method: 'GetTask', params: { id, tenant: 'acme' } },
    dispatcher.createContext({ id: 3, method: 'GetTask', params: { id, tenant: 'acme' } }, { requestedExtensions: [], version: '1.0' }))
  t.match(same, { result: { id } })
})

t.test('ListTasks emits every member even when a store leaves them at their defaults', async (t) => {
  const store = Object.assign(new InMemoryTaskStore(), {
    async list () { return { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 } }
  })
  const dispatcher = new A2ADispatcher({ card, executor: taskExecutor(), taskStore: store })
  t.strictSame(await dispatcher.call({ id: 1, method: 'ListTasks', params: {} }, new ServerCallContext()),
    { jsonrpc: '2.0', id: 1, result: { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 } })
})

t.test('streaming methods are not answered by call()', async (t) => {
  const dispatcher = new A2ADispatcher({ card, executor: taskExecutor() })
  const logged: unknown[] = []
  const response = await dispatcher.call({ id: 1, method: 'SubscribeToTask', params: { id: 't' } }, new ServerCallContext(),
    { log: { error: (object) => { logged.push(object) } } })
  t.strictSame(response, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error while handling SubscribeToTask' } })
  t.match(logged, [{ method: 'SubscribeToTask', err: { message: 'SubscribeToTask is not answered by the dispatcher' } }])
  t.strictSame(await dispatcher.call({ id: 2, method: 'SendStreamingMessage', params: send('x').params }, new ServerCallContext()),
    { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'Internal error while handling SendStreamingMessage' } }, 'no logger: still answered')
})

t.test('an unreachable state store: -32603 saying so, without the driver detail; the detail is logged', async (t) => {
  const failing = new InMemoryTaskStore()
  const unreachable = new StoreUnavailableError(new Error('connect ECONNREFUSED 10.1.2.3:5432'))
  failing.load = async () => { throw unreachable }
  const dispatcher = new A2ADispatcher({ card, executor: taskExecutor(), taskStore: failing })
  const logged: unknown[] = []
  const response = await dispatcher.call({ id: 7, method: 'GetTask', params: { id: 't-1' } }, new ServerCallContext(),
    { log: { error: (entry: unknown) => { logged.push(entry) } } })
  t.strictSame(response, { jsonrpc: '2.0', id: 7, error: { code: -32603, message: STORE_UNAVAILABLE_MESSAGE } })
  t.equal(logged.length, 1)
  t.match(logged[0], { err: unreachable, method: 'GetTask' })
})

t.test('a turn whose conversation moved while it ran: -32603 saying so (nothing was stored), not logged as a failure', async (t) => {
  const failing = new InMemoryTaskStore()
  failing.load = async () => { throw new ConversationMovedError() }
  const dispatcher = new A2ADispatcher({ card, executor: taskExecutor(), taskStore: failing })
  const logged: unknown[] = []
  const response = await dispatcher.call({ id: 8, method: 'GetTask', params: { id: 't-1' } }, new ServerCallContext(),
    { log: { error: (entry: unknown) => { logged.push(entry) } } })
  t.strictSame(response, { jsonrpc: '2.0', id: 8, error: { code: -32603, message: new ConversationMovedError().message } })
  t.equal(logged.length, 0)
})
