import t from 'tap'
import { relayTaskEvents } from '../../src/jsonrpc/task-event-relay.js'
import { statusEvent, TestEventHub } from '../fixtures/task-events.js'

const task = (id: string, state?: string) => ({ task: { id, ...(state === undefined ? {} : { status: { state } }) } })

async function * from (...results: unknown[]) { yield * results }

async function collect (source: AsyncGenerator<unknown, void, undefined>, max = 20) {
  const out: unknown[] = []
  for await (const item of source) {
    out.push(item)
    if (out.length === max) break
  }
  return out
}

t.test('a Message stream passes through untouched', async (t) => {
  const hub = new TestEventHub()
  const message = { message: { messageId: 'm' } }
  t.strictSame(await collect(relayTaskEvents(from(message), hub).source), [message])
  t.equal(hub.listeners.size, 0)
})

t.test('a task stream that ends terminal or INPUT_REQUIRED ends with the SDK stream', async (t) => {
  for (const state of ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED', 'TASK_STATE_INPUT_REQUIRED']) {
    const hub = new TestEventHub()
    const results = [task('t', 'TASK_STATE_SUBMITTED'), statusEvent('t', state)]
    t.strictSame(await collect(relayTaskEvents(from(...results), hub).source), results, state)
    t.equal(hub.listeners.size, 0, `${state}: unsubscribed`)
  }
  const hub = new TestEventHub()
  t.strictSame(await collect(relayTaskEvents(from(task('t', 'TASK_STATE_COMPLETED')), hub).source), [task('t', 'TASK_STATE_COMPLETED')])
})

t.test('a task left WORKING: held events first, then live ones, until a final state', async (t) => {
  const hub = new TestEventHub()
  async function * sdk () {
    yield task('t', 'TASK_STATE_SUBMITTED')
    hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING', 'held while the SDK stream ran'))
    yield { statusUpdate: { taskId: 't' } }
    yield statusEvent('t', 'TASK_STATE_WORKING')
  }
  const relay = relayTaskEvents(sdk(), hub)
  const seen: unknown[] = []
  const done = (async () => { for await (const item of relay.source) seen.push(item) })()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(seen.length, 4, 'SDK results, then the held event')
  t.match(seen[3], statusEvent('t', 'TASK_STATE_WORKING', 'held while the SDK stream ran'))
  hub.publish('t', { artifactUpdate: { taskId: 't', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } } })
  hub.publish('other', statusEvent('other', 'TASK_STATE_COMPLETED'))
  hub.publish('t', statusEvent('t', 'TASK_STATE_COMPLETED', 'bye'))
  hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING', 'after the end'))
  await done
  t.equal(seen.length, 6)
  t.match(seen[5], statusEvent('t', 'TASK_STATE_COMPLETED', 'bye'))
  t.equal(hub.listeners.size, 0)
})

t.test('SubscribeToTask: subscribed from the start with the known task id', async (t) => {
  const hub = new TestEventHub()
  let resume!: () => void
  async function * sdk () {
    yield task('t', 'TASK_STATE_WORKING')
    await new Promise<void>((resolve) => { resume = resolve })
  }
  const relay = relayTaskEvents(sdk(), hub, 't')
  const iterator = relay.source
  t.match((await iterator.next()).value, task('t'))
  t.equal(hub.count('t'), 1)
  const pending = iterator.next()
  hub.publish('t', statusEvent('t', 'TASK_STATE_INPUT_REQUIRED'))
  resume()
  t.match((await pending).value, statusEvent('t', 'TASK_STATE_INPUT_REQUIRED'))
  t.strictSame(await iterator.next(), { done: true, value: undefined })
  t.equal(hub.count('t'), 0)
})

t.test('a task without a known state stays open for events', async (t) => {
  const hub = new TestEventHub()
  const relay = relayTaskEvents(from(task('t')), hub)
  const first = await relay.source.next()
  t.match(first.value, task('t'))
  const pending = relay.source.next()
  await new Promise((resolve) => setImmediate(resolve))
  hub.publish('t', statusEvent('t', 'TASK_STATE_CANCELED'))
  t.match((await pending).value, statusEvent('t', 'TASK_STATE_CANCELED'))
  t.equal((await relay.source.next()).done, true)
})

t.test('release() ends the wait at once and unsubscribes', async (t) => {
  const hub = new TestEventHub()
  const relay = relayTaskEvents(from(task('t', 'TASK_STATE_WORKING')), hub)
  await relay.source.next()
  const pending = relay.source.next()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(hub.count('t'), 1)
  relay.release()
  relay.release()
  t.equal(hub.count('t'), 0)
  t.strictSame(await pending, { done: true, value: undefined })

  const early = relayTaskEvents(from(task('u', 'TASK_STATE_WORKING')), hub, 'u')
  early.release()
  t.strictSame(await collect(early.source), [task('u', 'TASK_STATE_WORKING')], 'released before it started: the SDK results only')
  t.equal(hub.listeners.size, 0)
})

t.test('an SDK stream error propagates and unsubscribes', async (t) => {
  const hub = new TestEventHub()
  async function * sdk () {
    yield task('t', 'TASK_STATE_WORKING')
    throw new Error('boom')
  }
  await t.rejects(collect(relayTaskEvents(sdk(), hub, 't').source), { message: 'boom' })
  t.equal(hub.listeners.size, 0)
})

t.test('a terminal event from elsewhere while the SDK stream waits: the SDK stream is stopped, the event delivered', async (t) => {
  const hub = new TestEventHub()
  let stop!: () => void
  let stops = 0
  // The SDK's SubscribeToTask on an INPUT_REQUIRED task: the snapshot, then a wait on a bus that stays quiet.
  async function * sdk () {
    yield task('t', 'TASK_STATE_INPUT_REQUIRED')
    await new Promise<void>((resolve) => { stop = resolve })
  }
  const relay = relayTaskEvents(sdk(), hub, 't', () => { stops++; stop() })
  t.match((await relay.source.next()).value, task('t', 'TASK_STATE_INPUT_REQUIRED'))
  const pending = relay.source.next()
  await new Promise((resolve) => setImmediate(resolve))
  hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING', 'not an end: held'))
  t.equal(stops, 0, 'a state that does not end the task leaves the SDK stream running')
  hub.publish('t', statusEvent('t', 'TASK_STATE_CANCELED', 'continued elsewhere'))
  t.equal(stops, 1, 'the end of the task stops the SDK stream')
  t.match((await pending).value, statusEvent('t', 'TASK_STATE_WORKING', 'not an end: held'))
  t.match((await relay.source.next()).value, statusEvent('t', 'TASK_STATE_CANCELED', 'continued elsewhere'))
  t.equal((await relay.source.next()).done, true)
  t.equal(hub.count('t'), 0, 'unsubscribed')

  const after = relayTaskEvents(from(task('u', 'TASK_STATE_COMPLETED')), hub, 'u', () => { stops++ })
  t.strictSame(await collect(after.source), [task('u', 'TASK_STATE_COMPLETED')])
  hub.publish('u', statusEvent('u', 'TASK_STATE_CANCELED'))
  t.equal(stops, 1, 'nothing to stop once the SDK stream is over')
})
