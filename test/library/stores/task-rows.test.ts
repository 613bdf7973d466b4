/**
 * A save's row as the SDK's DatabaseTaskStore writes it (task-rows.ts): the JSON columns, `status_last_updated` in
 * milliseconds (0 when the timestamp is absent, empty or unreadable) and `status_state` (null without a status).
 */
import t from 'tap'
import { Task } from '@a2a-js/sdk'
import { savedRowOf } from '../../../packages/a2a-converse/src/stores/postgres/task-rows.js'

t.test('status_last_updated and status_state of a save', async (t) => {
  const withStatus = (timestamp: string): Task => Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING', timestamp } })
  const saved = savedRowOf(withStatus('2026-12-07T10:00:00.000Z'))
  t.equal(saved.statusLastUpdated, Date.parse('2026-12-07T10:00:00.000Z'))
  t.equal(saved.state, 'TASK_STATE_WORKING')
  t.equal(saved.columns.contextId, 'c')
  t.equal(savedRowOf(withStatus('')).statusLastUpdated, 0, 'an empty timestamp')
  t.equal(savedRowOf(withStatus('not a time')).statusLastUpdated, 0, 'an unreadable one')
  const without = savedRowOf({ ...withStatus(''), status: undefined })
  t.equal(without.statusLastUpdated, 0, 'no status')
  t.equal(without.state, null)
  t.equal(without.columns.status, null)
})
