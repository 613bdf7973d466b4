/**
 * RememberedTasks (remembered-tasks.ts), the memory of an embedded task store, on its own: least recently used first,
 * bounded in count and in characters, and what it keeps when saves and reads overlap. With the store:
 * embedded-remembered-tasks.test.ts.
 */
import t from 'tap'
import { REMEMBERED_TASK_CHARS, REMEMBERED_TASKS, RememberedTasks, taskKey } from '../../../packages/a2a-converse/src/stores/postgres/remembered-tasks.js'
import type { TaskColumns } from '../../../packages/a2a-converse/src/stores/postgres/task-rows.js'

function row (history: string | null = '[]'): TaskColumns {
  return { contextId: 'ctx', status: '{"state":"TASK_STATE_WORKING"}', artifacts: null, history, metadata: null }
}

/** A save that writes (or not), answered when `done` is called. */
function pendingSave (): { written: (ok: boolean) => void, save: () => Promise<boolean> } {
  let written!: (ok: boolean) => void
  const answer = new Promise<boolean>((resolve) => { written = resolve })
  return { written, save: async () => await answer }
}

t.test('the defaults', async (t) => {
  t.equal(REMEMBERED_TASKS, 1000)
  t.equal(REMEMBERED_TASK_CHARS, 8 * 1024 * 1024)
  t.not(taskKey('a', 'b:c', 'd'), taskKey('a:b', 'c', 'd'), 'keys never run together')
  for (const bounds of [[0, 1], [1, 0], [Number.NaN, 1], [1, 1.5]]) {
    t.throws(() => new RememberedTasks(...bounds), { name: 'InvalidOptionError' }, `bounds ${bounds.join(', ')}: refused`)
  }
})

t.test('a save written is kept; one not written, or failed, forgets the task', async (t) => {
  const tasks = new RememberedTasks()
  await tasks.save('k', row(), async () => true)
  t.same(tasks.get('k'), row())
  await tasks.save('k', row('[1]'), async () => false)
  t.equal(tasks.get('k'), undefined, 'not written: forgotten')
  await tasks.save('k', row(), async () => true)
  await t.rejects(tasks.save('k', row('[1]'), async () => { throw new Error('lost') }), { message: 'lost' })
  t.equal(tasks.get('k'), undefined, 'failed: forgotten')
  tasks.forget('absent')
  t.equal(tasks.size, 0)
})

t.test('bounded in count, least recently used first', async (t) => {
  const tasks = new RememberedTasks(2)
  for (const key of ['a', 'b']) await tasks.save(key, row(), async () => true)
  tasks.get('a')
  await tasks.save('c', row(), async () => true)
  t.same(['a', 'b', 'c'].map((key) => tasks.get(key) !== undefined), [true, false, true])
  // Past a bound of ten or more, the least recently used tenth goes at once (least-recently-used.ts).
  const many = new RememberedTasks(20)
  for (let i = 0; i < 21; i++) await many.save(`k${i}`, row(), async () => true)
  t.equal(many.size, 18, 'the 21st: three go, the oldest')
  t.same([0, 1, 2, 3, 20].map((i) => many.get(`k${i}`) !== undefined), [false, false, false, true, true])
})

t.test('bounded in characters: the keys and the columns; a task larger than the bound is not kept', async (t) => {
  // Each: key 1 + contextId 3 + status 30 + history 10 = 44 characters.
  const tasks = new RememberedTasks(10, 100)
  for (const key of ['a', 'b']) await tasks.save(key, row('[' + '0'.repeat(8) + ']'), async () => true)
  t.equal(tasks.size, 2)
  await tasks.save('c', row('[' + '0'.repeat(8) + ']'), async () => true)
  t.same(['a', 'b', 'c'].map((key) => tasks.get(key) !== undefined), [false, true, true], 'three past 100: the oldest goes')
  await tasks.save('d', row('[' + '0'.repeat(100) + ']'), async () => true)
  t.equal(tasks.get('d'), undefined, 'larger than the whole bound: not kept')
  t.equal(tasks.size, 2, 'and pushes nothing out')
  // A task known to have no row counts its key alone.
  const absent = new RememberedTasks(10, 3)
  absent.readStarts('abc')(null)
  absent.readStarts('abcd')(null)
  t.same([absent.get('abc'), absent.get('abcd')], [null, undefined])
  // Every column counted, each when present.
  const columns = new RememberedTasks(10, 11)
  columns.readStarts('a')({ contextId: 'c', status: null, artifacts: '[]', history: null, metadata: '{}' })
  columns.readStarts('b')({ contextId: 'cc', status: null, artifacts: '[]', history: null, metadata: '{}' })
  t.same([columns.get('a') !== undefined, columns.get('b') !== undefined], [false, true], '6 and 7 characters (key, contextId, artifacts, metadata): past 11 together, the older goes')
})

t.test('a read keeps what it found unless a save of the task ran meanwhile', async (t) => {
  const tasks = new RememberedTasks()
  tasks.readStarts('k')(undefined)
  t.equal(tasks.get('k'), undefined, 'nothing learned: nothing kept')
  tasks.readStarts('k')(row())
  t.same(tasks.get('k'), row(), 'kept')

  const before = tasks.readStarts('s')
  await tasks.save('s', row('[1]'), async () => true)
  before(row())
  t.same(tasks.get('s'), row('[1]'), 'a save ran during the read: the save\'s task stays')

  const saving = pendingSave()
  const save = tasks.save('u', row('[1]'), saving.save)
  const during = tasks.readStarts('u')
  during(row())
  t.equal(tasks.get('u'), undefined, 'read while a save was under way: not kept')
  saving.written(true)
  await save
  t.same(tasks.get('u'), row('[1]'))

  const other = tasks.readStarts('v')
  await tasks.save('w', row(), async () => true)
  other(row('[2]'))
  t.same(tasks.get('v'), row('[2]'), 'a save of another task changes nothing')
})

t.test('overlapping saves of a task keep nothing; the next save alone keeps again', async (t) => {
  const tasks = new RememberedTasks()
  const first = pendingSave()
  const second = pendingSave()
  const saves = [tasks.save('k', row('[1]'), first.save), tasks.save('k', row('[2]'), second.save)]
  first.written(true)
  await saves[0]
  t.equal(tasks.get('k'), undefined, 'the first, overlapped')
  second.written(true)
  await saves[1]
  t.equal(tasks.get('k'), undefined, 'the second, overlapped')
  await tasks.save('k', row('[3]'), async () => true)
  t.same(tasks.get('k'), row('[3]'))
})
