/**
 * The per-task turn lock of one process (MemoryTaskTurnLock over KeyedLock): turns of one task run one at a time,
 * turns of different tasks or scopes do not wait for each other, a wait is bounded (TaskBusyError) and ends with
 * the request's signal, and a turn that gave up never lets a later one overtake an earlier one.
 */
import t from 'tap'
import { ServerCallContext, type User } from '@a2a-js/sdk/server'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'
import { KeyedLock } from '../../../packages/a2a-converse/src/stores/keyed-lock.js'
import {
  DEFAULT_TURN_WAIT_TIMEOUT_MS, MemoryTaskTurnLock, TaskBusyError, taskTurnKey, taskTurnKeyString, waitBound
} from '../../../packages/a2a-converse/src/stores/task-turn-lock.js'

const key = (taskId: string, tenant = '', owner = 'unknown') => ({ tenant, owner, taskId })

t.test('the key: tenant, owner (the task stores\' scope) and task id', async (t) => {
  const user: User = { isAuthenticated: true, userName: 'alice' }
  t.strictSame(taskTurnKey(new ServerCallContext({ tenant: 'acme', user }), 't-1'), { tenant: 'acme', owner: 'alice', taskId: 't-1' })
  t.strictSame(taskTurnKey(new ServerCallContext(), 't-1'), { tenant: '', owner: 'unknown', taskId: 't-1' })
  t.not(taskTurnKeyString(key('b', 'a')), taskTurnKeyString(key('a"', 'b')), 'no separator makes two keys collide')
  t.not(taskTurnKeyString(key('t'), 'agent-a'), taskTurnKeyString(key('t'), 'agent-b'), 'the scope is part of the key')
})

t.test('turns of one task run one at a time, in order; other tasks and owners do not wait', async (t) => {
  const lock = new MemoryTaskTurnLock()
  t.equal(lock.waitTimeoutMs, DEFAULT_TURN_WAIT_TIMEOUT_MS)
  const order: string[] = []
  let running = 0
  let most = 0
  const turn = async (name: string, k = key('t-1')): Promise<void> => {
    const release = await lock.acquire(k)
    running++
    most = Math.max(most, running)
    await new Promise((resolve) => setImmediate(resolve))
    order.push(name)
    running--
    await release()
    await release() // idempotent
  }
  await Promise.all([turn('a'), turn('b'), turn('c')])
  t.equal(most, 1, 'never two turns of one task at once')
  t.strictSame(order, ['a', 'b', 'c'], 'in the order they asked')

  const held = await lock.acquire(key('t-1'))
  await lock.acquire(key('t-2')).then(async (release) => { await release() })
  await lock.acquire(key('t-1', '', 'bob')).then(async (release) => { await release() })
  await lock.acquire(key('t-1', 'other-tenant')).then(async (release) => { await release() })
  t.pass('another task, owner or tenant takes its lock while t-1 is held')
  await held()
})

t.test('a wait is bounded: TaskBusyError after waitTimeoutMs, and nothing ran', async (t) => {
  const lock = new MemoryTaskTurnLock({ waitTimeoutMs: 20 })
  const held = await lock.acquire(key('t-1'))
  const error = await lock.acquire(key('t-1')).then(() => undefined, (error: unknown) => error)
  t.type(error, TaskBusyError)
  t.match(error, { code: 'A2A_CONVERSE_TASK_BUSY', taskId: 't-1', message: /task t-1 is busy with another turn \(waited 20 ms\)/ })
  await held()
  const release = await lock.acquire(key('t-1'))
  t.pass('once released, the next turn takes it')
  await release()
})

t.test('a wait ends with the request\'s signal (already aborted, or aborted while waiting)', async (t) => {
  const lock = new MemoryTaskTurnLock()
  const held = await lock.acquire(key('t-1'))
  const gone = new AbortController()
  const waiting = lock.acquire(key('t-1'), gone.signal)
  gone.abort(new Error('client gone'))
  await t.rejects(waiting, { message: 'client gone' })
  await t.rejects(lock.acquire(key('t-1'), AbortSignal.abort(new Error('gone before'))), { message: 'gone before' })
  await held()
  const release = await lock.acquire(key('t-1'), new AbortController().signal)
  t.pass('a signal that never aborts changes nothing')
  await release()
})

t.test('waitTimeoutMs is validated', async (t) => {
  for (const waitTimeoutMs of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => new MemoryTaskTurnLock({ waitTimeoutMs }), new InvalidOptionError('waitTimeoutMs', 'must be a positive integer (milliseconds)'))
  }
})

t.test('KeyedLock: a holder that gives up keeps its place for the earlier ones; no one overtakes', async (t) => {
  const locks = new KeyedLock()
  const first = await locks.acquire('k')
  let giveUp!: (error: Error) => void
  const abandoned = new Promise<never>((resolve, reject) => { giveUp = reject })
  const second = locks.acquire('k', abandoned)
  const third = locks.acquire('k')
  let thirdHeld = false
  third.then(() => { thirdHeld = true }, () => {})
  giveUp(new Error('gave up'))
  await t.rejects(second, { message: 'gave up' })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(thirdHeld, false, 'the third still waits for the first')
  t.equal(locks.busy('k'), true)
  first()
  const releaseThird = await third
  releaseThird()
  await locks.idle()
  t.equal(locks.busy('k'), false, 'the key is dropped once idle')

  // The last in line gives up: the key stays taken until the holder before it is done.
  const holder = await locks.acquire('k')
  await t.rejects(locks.acquire('k', Promise.reject(new Error('at once'))), { message: 'at once' })
  t.equal(locks.busy('k'), true, 'still held by the first')
  holder()
  await locks.idle()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(locks.busy('k'), false)
})

t.test('waitBound: done() stops the timer and the signal listener', async (t) => {
  const controller = new AbortController()
  const bound = waitBound(key('t-1'), 10, controller.signal)
  bound.done()
  controller.abort()
  const settled = await Promise.race([bound.abandoned.then(() => 'settled', () => 'settled'), new Promise((resolve) => setTimeout(resolve, 30, 'pending'))])
  t.equal(settled, 'pending', 'neither the timeout nor the abort rejects it any more')
})
