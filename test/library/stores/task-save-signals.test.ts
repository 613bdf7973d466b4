/**
 * Save signals in one process: BoundedMemoryTaskStore wakes `onSaved` listeners after each completed save (not
 * after a refused one); loadWhen re-reads on each save and returns at the one that satisfies it, or after its bound,
 * leaving no listener behind; a plain TaskStore is read once and once more after the bound; withSaveSignals gives a
 * plain store signals for the saves made through it.
 */
import t from 'tap'
import { TaskState, type Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { loadWhen, SaveListeners, signalsSaves, withSaveSignals } from '../../../packages/a2a-converse/src/stores/task-save-signals.js'
import { storedTask } from '../../fixtures/stored-task.js'

const context = new ServerCallContext()

const task = storedTask

const noted = (note: string) => (loaded: Task | undefined): boolean => loaded?.metadata?.note === note

/** A real in-memory store that counts its loads. */
class CountingStore extends InMemoryTaskStore {
  loads = 0
  override async load (taskId: string, callContext: ServerCallContext): Promise<Task | undefined> {
    this.loads++
    return await super.load(taskId, callContext)
  }
}

t.test('the memory store wakes a task\'s listeners after each completed save, not after a refused one', async (t) => {
  const store = new BoundedMemoryTaskStore()
  const calls: string[] = []
  const stopA = store.onSaved('a', () => { calls.push('a') })
  const stopB = store.onSaved('b', () => { calls.push('b') })
  t.equal(store.saveListeners, 2)
  await store.save(task('a', TaskState.TASK_STATE_WORKING), context)
  await store.save(task('a', TaskState.TASK_STATE_COMPLETED), context)
  await t.rejects(store.save(task('a', TaskState.TASK_STATE_WORKING), context))
  t.strictSame(calls, ['a', 'a'])
  stopA()
  stopB()
  stopB()
  t.equal(store.saveListeners, 0)
  t.ok(signalsSaves(store))
  t.notOk(signalsSaves(new InMemoryTaskStore()))
})

t.test('loadWhen: re-reads on each save, returns at the one that satisfies it, long before the bound', async (t) => {
  const store = new BoundedMemoryTaskStore()
  await store.save(task('a', TaskState.TASK_STATE_WORKING), context)
  const started = performance.now()
  const waiting = loadWhen(store, 'a', context, noted('done'), 10_000)
  t.equal(store.saveListeners, 1, 'listening from the first read on')
  setTimeout(() => { store.save(task('a', TaskState.TASK_STATE_WORKING, 'not yet'), context).catch(t.error) }, 10)
  setTimeout(() => { store.save(task('a', TaskState.TASK_STATE_INPUT_REQUIRED, 'done'), context).catch(t.error) }, 30)
  const loaded = await waiting
  t.equal(loaded?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.ok(performance.now() - started < 5000)
  t.equal(store.saveListeners, 0, 'the listener is gone')

  t.equal((await loadWhen(store, 'a', context, noted('done'), 10_000))?.metadata?.note, 'done', 'already so: at once')
  t.equal(store.saveListeners, 0)
})

t.test('loadWhen: a save that lands during a read is not missed', async (t) => {
  const store = new BoundedMemoryTaskStore()
  await store.save(task('a', TaskState.TASK_STATE_WORKING), context)
  const load = store.load.bind(store)
  let reads = 0
  // The first read finds the task not settled; the settling save lands while that read is still answering.
  store.load = async (taskId, callContext) => {
    const loaded = await load(taskId, callContext)
    if (++reads === 1) await store.save(task('a', TaskState.TASK_STATE_INPUT_REQUIRED, 'done'), context)
    return loaded
  }
  const started = performance.now()
  const loaded = await loadWhen(store, 'a', context, noted('done'), 10_000)
  t.equal(loaded?.metadata?.note, 'done')
  t.equal(reads, 2)
  t.ok(performance.now() - started < 5000, 'woken by that save')
})

t.test('loadWhen: bounded — a task that never settles is returned as it is after the bound; no listener stays', async (t) => {
  const store = new BoundedMemoryTaskStore()
  await store.save(task('a', TaskState.TASK_STATE_WORKING), context)
  const started = performance.now()
  const waits = await Promise.all(Array.from({ length: 20 }, async () => await loadWhen(store, 'a', context, noted('never'), 200)))
  const elapsed = performance.now() - started
  t.ok(elapsed >= 195 && elapsed < 5000, `returned after the bound (${Math.round(elapsed)} ms)`)
  t.ok(waits.every((loaded) => loaded?.status?.state === TaskState.TASK_STATE_WORKING))
  t.equal(store.saveListeners, 0, '20 waits, 0 listeners left')
  t.equal(await loadWhen(store, 'missing', context, (loaded) => loaded !== undefined, 50), undefined, 'an unknown task')
  t.equal(store.saveListeners, 0)
})

t.test('loadWhen on a plain TaskStore: one read, and one more after the bound when the first is not enough', async (t) => {
  const store = new CountingStore()
  await store.save(task('a', TaskState.TASK_STATE_WORKING, 'done'), context)
  t.equal((await loadWhen(store, 'a', context, noted('done'), 10_000))?.metadata?.note, 'done')
  t.equal(store.loads, 1, 'settled: at once')

  store.loads = 0
  await store.save(task('b', TaskState.TASK_STATE_WORKING), context)
  setTimeout(() => { store.save(task('b', TaskState.TASK_STATE_WORKING, 'done'), context).catch(t.error) }, 20)
  const started = performance.now()
  const loaded = await loadWhen(store, 'b', context, noted('done'), 200)
  t.ok(performance.now() - started >= 195, 'waited the whole bound')
  t.equal(loaded?.metadata?.note, 'done', 'the read after it')
  t.equal(store.loads, 2)
})

t.test('withSaveSignals: a plain store gets signals for the saves made through it; a signalling store is kept', async (t) => {
  const memory = new BoundedMemoryTaskStore()
  t.equal(withSaveSignals(memory), memory)
  const plain = new InMemoryTaskStore()
  const store: TaskStore = withSaveSignals(plain)
  t.ok(signalsSaves(store))
  const waiting = loadWhen(store, 'a', context, noted('done'), 10_000)
  setTimeout(() => { store.save(task('a', TaskState.TASK_STATE_COMPLETED, 'done'), context).catch(t.error) }, 10)
  t.equal((await waiting)?.metadata?.note, 'done')
  t.equal((await plain.load('a', context))?.status?.state, TaskState.TASK_STATE_COMPLETED, 'saved in the store it wraps')
  t.equal((await store.list({ tenant: '', contextId: 'ctx-a' } as any, context)).tasks.length, 1, 'list passes through')
})

t.test('SaveListeners: size counts tasks with listeners', async (t) => {
  const listeners = new SaveListeners()
  const calls: number[] = []
  const stop = listeners.onSaved('a', () => { calls.push(1) })
  listeners.onSaved('a', () => { calls.push(2) })
  t.equal(listeners.size, 1)
  listeners.saved('a')
  listeners.saved('b')
  t.strictSame(calls, [1, 2])
  stop()
  t.equal(listeners.size, 1)
})
