/** ListTasks `status`: an unset filter, however a client spells it, means "no filter"; a real state filters. */
import t from 'tap'
import { validateParams, withoutUnsetStatusFilter } from '../../../../packages/a2a-converse/src/protocol/params.js'

t.test('"UNRECOGNIZED" (what the official JS client sends for no status) is valid', async (t) => {
  t.equal(validateParams('ListTasks', { contextId: 'c', status: 'UNRECOGNIZED' }), undefined)
  t.match(validateParams('ListTasks', { status: 'RECOGNIZED' }), [{ field: 'status' }], 'other strings are still -32602')
})

t.test('unspecified or unrecognized, by name or number, is dropped; anything else is kept as is', async (t) => {
  for (const status of ['UNRECOGNIZED', 'TASK_STATE_UNSPECIFIED', 0]) {
    t.same(withoutUnsetStatusFilter({ contextId: 'c', status }), { contextId: 'c' }, String(status))
  }
  const working = { contextId: 'c', status: 'TASK_STATE_WORKING' }
  t.equal(withoutUnsetStatusFilter(working), working)
  const none = { contextId: 'c' }
  t.equal(withoutUnsetStatusFilter(none), none)
})
