import t from 'tap'
import { TaskListeners } from '../../../packages/a2a-converse/src/events/task-listeners.js'
import { MemoryTaskEventHub } from '../../../packages/a2a-converse/src/events/task-event-hub.js'

t.test('listeners per task: order, removal, delivery errors', async (t) => {
  const listeners = new TaskListeners()
  const seen: string[] = []
  const removeA = listeners.add('t1', (event) => { seen.push(`a:${String(event.n)}`) })
  listeners.add('t1', () => { throw new Error('boom') })
  listeners.add('t1', (event) => { seen.push(`c:${String(event.n)}`) })
  listeners.add('t2', () => { seen.push('t2') })
  t.equal(listeners.size, 2)
  t.ok(listeners.has('t1'))
  t.notOk(listeners.has('t3'))

  const errors: unknown[] = []
  listeners.deliver('t1', { n: 1 }, (error) => { errors.push(error) })
  t.same(seen, ['a:1', 'c:1'], 'a throwing listener does not stop the others')
  t.match(errors, [{ message: 'boom' }], 'it is reported')
  t.throws(() => listeners.deliver('t1', { n: 2 }), { message: 'boom' }, 'without onError the error propagates')
  listeners.deliver('t3', { n: 3 })

  removeA()
  removeA()
  t.ok(listeners.has('t1'), 'other listeners keep the task')
  listeners.clear()
  t.equal(listeners.size, 0)
})

t.test('the last listener takes the task entry with it', async (t) => {
  const hub = new MemoryTaskEventHub()
  const events: unknown[] = []
  const off = hub.subscribe('t', (event) => { events.push(event) })
  await hub.publish('t', { statusUpdate: {} })
  t.same(events, [{ statusUpdate: {} }])
  off()
  t.equal(hub.size, 0)
  await hub.publish('t', { statusUpdate: {} })
  t.equal(events.length, 1)
  await hub.close()
})

t.test('the agent-level channel: conversation events per agent, apart from task events', async (t) => {
  const hub = new MemoryTaskEventHub()
  const seen: unknown[] = []
  const taskSeen: unknown[] = []
  const off = hub.subscribeConversations('demo', (event) => { seen.push(event) })
  hub.subscribe('demo', (event) => { taskSeen.push(event) })
  await hub.publishConversation('demo', { conversation: { contextId: 'c1' } })
  await hub.publishConversation('other', { conversation: { contextId: 'c2' } })
  t.same(seen, [{ conversation: { contextId: 'c1' } }], 'the agent\'s events only')
  t.same(taskSeen, [], 'a task subscriber of the same id hears nothing')
  off()
  await hub.publishConversation('demo', { conversation: { contextId: 'c3' } })
  t.equal(seen.length, 1, 'unsubscribed')
  hub.subscribeConversations('demo', (event) => { seen.push(event) })
  await hub.close()
  await hub.publishConversation('demo', { conversation: { contextId: 'c4' } })
  t.equal(seen.length, 1, 'close drops the subscribers')
})
