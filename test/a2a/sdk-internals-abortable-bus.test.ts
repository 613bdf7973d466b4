import t from 'tap'
import { Message } from '@a2a-js/sdk'
import {
  AgentEvent, DefaultExecutionEventBusManager, ExecutionEventQueue, ServerCallContext, type ExecutionEventBus
} from '@a2a-js/sdk/server'
import { AbortableBusManager } from '../../src/a2a/sdk-internals.js'

const message = AgentEvent.message(Message.fromJSON({ messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] }))

/** Listener counts of the SDK's DefaultExecutionEventBus (its tracking maps are plain fields). */
function listeners (bus: ExecutionEventBus) {
  const inner = bus as unknown as { eventListeners: Map<unknown, unknown[]>, finishedListeners: Map<unknown, unknown[]> }
  const count = (map: Map<unknown, unknown[]>) => [...map.values()].reduce((sum, list) => sum + list.length, 0)
  return { event: count(inner.eventListeners), finished: count(inner.finishedListeners) }
}

t.test('unwatched contexts get the real bus', async (t) => {
  const manager = new AbortableBusManager()
  const context = new ServerCallContext()
  const bus = manager.createOrGetByTaskId('t', context)
  t.equal(manager.getByTaskId('t', context), bus)
  t.equal(manager.createOrGetByTaskId('t'), bus, 'no context: the same (unscoped) bus as an unscoped request')
  t.equal(manager.getByTaskId('missing', context), undefined)
  manager.abort(context)
  manager.cleanupByTaskId('t', context)
  t.equal(manager.getByTaskId('t', context), undefined)
})

t.test('abort stops the queue created from a watched context, and only it', async (t) => {
  const inner = new DefaultExecutionEventBusManager()
  const manager = new AbortableBusManager(inner)
  const watched = new ServerCallContext()
  const other = new ServerCallContext()
  manager.watch(watched)
  const view = manager.createOrGetByTaskId('t', watched)
  const real = inner.getByTaskId('t', watched) as ExecutionEventBus
  t.not(view, real, 'a view of the real bus')
  t.equal(manager.getByTaskId('t', other), real)

  const stopped = new ExecutionEventQueue(view)
  const kept = new ExecutionEventQueue(manager.getByTaskId('t', other) as ExecutionEventBus)
  const extraFinished = t.capture({ fn: () => {} }, 'fn')
  view.on('finished', extraFinished)
  t.strictSame(listeners(real), { event: 2, finished: 3 })

  const pending = stopped.events().next()
  manager.abort(watched)
  t.strictSame(await pending, { done: true, value: undefined }, 'the waiting iteration ends at once')
  t.strictSame(listeners(real), { event: 1, finished: 2 }, 'the stopped queue removed its listeners')
  t.equal(extraFinished.args().length, 0, 'only the first finished listener (the queue) is called')
  manager.abort(watched)
  manager.abort(new ServerCallContext())

  view.publish(message)
  const next = await kept.events().next()
  t.equal(next.value?.kind, 'message', 'the other stream still gets events')
  kept.stop()
  view.off('finished', extraFinished)
  t.strictSame(listeners(real), { event: 0, finished: 0 })
})

t.test('the view delegates everything', async (t) => {
  const inner = new DefaultExecutionEventBusManager()
  const manager = new AbortableBusManager(inner)
  const context = new ServerCallContext()
  manager.watch(context)
  const view = manager.getByTaskId('t', context) ?? manager.createOrGetByTaskId('t', context)
  const real = inner.getByTaskId('t', context) as ExecutionEventBus
  const seen: string[] = []
  const onEvent = (event: { kind: string }) => { seen.push(`on:${event.kind}`) }
  t.equal(view.on('event', onEvent), view)
  t.equal(view.once('event', (event) => { seen.push(`once:${event.kind}`) }), view)
  t.equal(view.once('finished', () => { seen.push('once:finished') }), view)
  view.publish(message)
  view.publish(message)
  t.equal(view.off('event', onEvent), view)
  view.publish(message)
  view.finished()
  t.strictSame(seen, ['on:message', 'once:message', 'on:message', 'once:finished'])
  view.on('event', onEvent)
  view.on('finished', () => {})
  t.equal(view.removeAllListeners('event'), view)
  t.strictSame(listeners(real), { event: 0, finished: 1 })
  view.removeAllListeners()
  t.strictSame(listeners(real), { event: 0, finished: 0 })
})
