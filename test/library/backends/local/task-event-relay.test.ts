import t from 'tap'
import { followTask, relayTaskEvents } from '../../../../packages/a2a-converse/src/backends/local/task-event-relay.js'
import { statusEvent, TestEventHub } from '../../../fixtures/task-events.js'

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

  const early = relayTaskEvents(from(task('u', 'TASK_STATE_WORKING')), hub)
  early.release()
  t.strictSame(await collect(early.source), [], 'released before it started: nothing')
  t.equal(hub.listeners.size, 0)
})

/** An SDK stream that yields what it is given, one at a time, and records how far it was read. */
function controlled () {
  const feed: Array<(value: unknown) => void> = []
  let read = 0
  let ended = false
  async function * sdk () {
    try {
      while (true) {
        const value = await new Promise((resolve) => feed.push(resolve))
        if (value === 'end') return
        read++
        yield value
      }
    } finally {
      ended = true
    }
  }
  const push = async (value: unknown) => {
    while (feed.length === 0) await new Promise((resolve) => setImmediate(resolve))
    ;(feed.shift() as (value: unknown) => void)(value)
  }
  return { source: sdk(), push, read: () => read, ended: () => ended }
}

t.test('released while the SDK stream waits: it ends at once, and the SDK stream is read on to its end', async (t) => {
  const hub = new TestEventHub()
  const sdk = controlled()
  const relay = relayTaskEvents(sdk.source, hub)
  const first = relay.source.next()
  await sdk.push(task('t', 'TASK_STATE_WORKING'))
  t.match((await first).value, task('t'))
  const pending = relay.source.next()
  relay.release()
  t.strictSame(await pending, { done: true, value: undefined })
  await sdk.push(statusEvent('t', 'TASK_STATE_WORKING', 'still stored'))
  await sdk.push(statusEvent('t', 'TASK_STATE_COMPLETED'))
  await sdk.push('end')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(sdk.read(), 3, 'every event of the execution went through the SDK stream (which stores them)')
  t.equal(sdk.ended(), true)
})

t.test('a consumer that stops early leaves the SDK stream to be read on, too', async (t) => {
  const sdk = controlled()
  const relay = relayTaskEvents(sdk.source, undefined)
  const first = relay.source.next()
  await sdk.push(task('t', 'TASK_STATE_WORKING'))
  await first
  await relay.source.return()
  await sdk.push(statusEvent('t', 'TASK_STATE_COMPLETED'))
  await sdk.push('end')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(sdk.read(), 2)
  t.equal(sdk.ended(), true)
})

t.test('without a hub the stream is the SDK\'s, ending with it', async (t) => {
  t.strictSame(await collect(relayTaskEvents(from(task('t', 'TASK_STATE_WORKING')), undefined).source), [task('t', 'TASK_STATE_WORKING')])
})

t.test('an SDK stream error propagates and unsubscribes', async (t) => {
  const hub = new TestEventHub()
  async function * sdk () {
    yield task('t', 'TASK_STATE_WORKING')
    throw new Error('boom')
  }
  await t.rejects(collect(relayTaskEvents(sdk(), hub).source), { message: 'boom' })
  t.equal(hub.listeners.size, 0)
})

t.test('a terminal event from elsewhere while the SDK stream waits ends the stream with it', async (t) => {
  const hub = new TestEventHub()
  const sdk = controlled()
  const relay = relayTaskEvents(sdk.source, hub)
  const first = relay.source.next()
  await sdk.push(task('t', 'TASK_STATE_WORKING'))
  t.match((await first).value, task('t', 'TASK_STATE_WORKING'))
  const pending = relay.source.next()
  await new Promise((resolve) => setImmediate(resolve))
  hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING', 'not an end: held'))
  hub.publish('t', statusEvent('t', 'TASK_STATE_CANCELED', 'canceled elsewhere'))
  t.match((await pending).value, statusEvent('t', 'TASK_STATE_WORKING', 'not an end: held'))
  t.match((await relay.source.next()).value, statusEvent('t', 'TASK_STATE_CANCELED', 'canceled elsewhere'))
  t.equal((await relay.source.next()).done, true)
  t.equal(hub.count('t'), 0, 'unsubscribed')
  await sdk.push('end')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(sdk.ended(), true, 'the SDK stream was read to its end')

  const after = relayTaskEvents(from(task('u', 'TASK_STATE_COMPLETED')), hub)
  t.strictSame(await collect(after.source), [task('u', 'TASK_STATE_COMPLETED')])
  hub.publish('u', statusEvent('u', 'TASK_STATE_CANCELED'))
  t.equal(hub.listeners.size, 0, 'nothing listens once the stream is over')
})

t.test('followTask: the snapshot, then every source\'s events until a status update ends the task', async (t) => {
  const hub = new TestEventHub()
  const local = new TestEventHub()
  let loads = 0
  const followed = followTask('t', async () => {
    loads++
    hub.publish('t', statusEvent('t', 'TASK_STATE_WORKING', 'published while loading'))
    return task('t', 'TASK_STATE_INPUT_REQUIRED')
  }, [local, hub])
  t.equal(hub.count('t'), 0, 'nothing runs until the first next()')
  t.match((await followed.source.next()).value, task('t', 'TASK_STATE_INPUT_REQUIRED'), 'the snapshot\'s own state does not end it')
  t.equal(loads, 1)
  t.equal(hub.count('t') + local.count('t'), 2, 'subscribed to every source')
  t.match((await followed.source.next()).value, statusEvent('t', 'TASK_STATE_WORKING', 'published while loading'))
  const pending = followed.source.next()
  local.publish('t', task('t', 'TASK_STATE_COMPLETED'))
  t.match((await pending).value, task('t', 'TASK_STATE_COMPLETED'), 'a task event is passed on and does not end it')
  local.publish('t', { artifactUpdate: { taskId: 't' } })
  hub.publish('t', statusEvent('t', 'TASK_STATE_INPUT_REQUIRED', 'asks again'))
  t.match((await followed.source.next()).value, { artifactUpdate: { taskId: 't' } })
  t.match((await followed.source.next()).value, statusEvent('t', 'TASK_STATE_INPUT_REQUIRED', 'asks again'))
  t.equal((await followed.source.next()).done, true)
  t.equal(hub.count('t') + local.count('t'), 0, 'unsubscribed')
})

t.test('followTask: a failed snapshot is the stream\'s error; release ends it at once', async (t) => {
  const hub = new TestEventHub()
  await t.rejects(collect(followTask('t', async () => { throw new Error('not found') }, [hub]).source), { message: 'not found' })
  t.equal(hub.count('t'), 0)

  const followed = followTask('t', async () => task('t', 'TASK_STATE_WORKING'), [hub])
  await followed.source.next()
  const pending = followed.source.next()
  await new Promise((resolve) => setImmediate(resolve))
  followed.release()
  followed.release()
  t.strictSame(await pending, { done: true, value: undefined })
  t.equal(hub.count('t'), 0)

  const early = followTask('t', async () => task('t', 'TASK_STATE_WORKING'), [hub])
  early.release()
  t.strictSame(await collect(early.source), [])
  t.equal(hub.count('t'), 0)
})
