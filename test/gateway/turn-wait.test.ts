/**
 * TURN_WAIT_TIMEOUT_MS reaches every agent's turn lock, in memory and on PostgreSQL (when TEST_DATABASE_URL is
 * set): a turn that waits longer for the task's earlier turns gives up with TaskBusyError (-32603 at the door).
 */
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/gateway/config.js'
import { memoryState, openGatewayState } from '../../src/gateway/state.js'
import { TaskBusyError, type TaskTurnLock } from '../../packages/a2a-converse/src/stores/task-turn-lock.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL
const silent = { warn () {}, info () {} }
const key = { tenant: '', owner: 'unknown', taskId: 't-1' }

async function givesUpAfterTheBound (t: Test, lock: TaskTurnLock): Promise<void> {
  t.equal((lock as unknown as { waitTimeoutMs: number }).waitTimeoutMs, 50)
  const held = await lock.acquire(key)
  await t.rejects(lock.acquire(key), TaskBusyError, 'a second turn gives up after TURN_WAIT_TIMEOUT_MS')
  await held()
}

t.test('memory', async (t) => {
  const state = memoryState(loadConfig({ TURN_WAIT_TIMEOUT_MS: '50' }))
  t.teardown(() => state.close())
  await givesUpAfterTheBound(t, state.taskTurnLockFor('demo'))
  const defaults = memoryState()
  t.teardown(() => defaults.close())
  t.equal((defaults.taskTurnLockFor('demo') as unknown as { waitTimeoutMs: number }).waitTimeoutMs, 30_000, 'default 30 s')
})

t.test('PostgreSQL', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  const config = loadConfig({ TURN_WAIT_TIMEOUT_MS: '50', DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url as string) })
  const state = await openGatewayState(config, silent)
  t.teardown(() => state.close())
  await givesUpAfterTheBound(t, state.taskTurnLockFor('demo'))
})
