import t from 'tap'
import { bookTable, requestRefund } from '../../fixtures/demo-routines.js'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { createRoutineEngine, type RoutineCall } from '../../../packages/a2a-converse/src/runtime/routine-engine.js'

// The demo's routines (issue 4) and an exposed routine the operator switched off.
const collectFeedback: RoutineDeclaration = {
  name: 'collect_feedback',
  toolName: 'collect_feedback',
  exposed: false,
  description: 'Collect feedback about the visit.',
  slots: [{ key: 'rating', type: 'integer', required: true, description: 'A rating from 1 to 5.' }]
}
const closeAccount: RoutineDeclaration = {
  name: 'close_account',
  toolName: 'close_account',
  description: 'Close the account.',
  exposed: true,
  enabled: false,
  slots: []
}
const routines = [bookTable, requestRefund, collectFeedback, closeAccount]
const bookPending = ['date', 'partySize', 'notes']

t.test('unknown_tool: no exposed routine has that tool name', async (t) => {
  const engine = createRoutineEngine(routines)
  const result = engine.invoke('order_pizza', { size: 'L' })
  t.same(result, {
    outcome: 'unknown_tool',
    invocation: { toolName: 'order_pizza', outcome: 'unknown_tool' },
    errors: ['no exposed routine has the tool name "order_pizza"']
  })
  t.equal(engine.invoke('collect_feedback', { rating: 5 }).outcome, 'unknown_tool', 'declared but not exposed')
  const active = engine.start('book_table').progress
  const withActive = engine.invoke('nope', {}, active)
  t.equal(withActive.progress, undefined)
  t.equal(withActive.abandoned, undefined, 'the active routine is left alone')
})

t.test('declined: disabled by the operator or refused by the hook', async (t) => {
  const engine = createRoutineEngine(routines)
  const disabled = engine.invoke('close_account', {})
  t.equal(disabled.outcome, 'declined')
  t.same(disabled.invocation, { toolName: 'close_account', outcome: 'declined' })
  t.same(disabled.errors, ['close_account is disabled'])
  t.equal(disabled.declaration?.name, 'close_account')
  t.equal(disabled.progress, undefined)

  const calls: RoutineCall[] = []
  const answers: Array<boolean | string | undefined> = [true, 'fully booked tonight', '', false, undefined]
  const hooked = createRoutineEngine(routines, {
    refuse: (call) => { calls.push(call); return answers.shift() }
  })
  const active = hooked.start('request_refund').progress
  t.same(hooked.invoke('book_table', { date: 'd', partySize: 2 }, active).errors, ['book_table refused the call'])
  t.same(calls[0], { toolName: 'book_table', declaration: hooked.byToolName('book_table'), arguments: { date: 'd', partySize: 2 }, active })
  const reason = hooked.invoke('book_table', { date: 'd', partySize: 2 })
  t.equal(reason.outcome, 'declined')
  t.same(reason.errors, ['fully booked tonight'])
  t.same(hooked.invoke('book_table', {}).errors, ['book_table refused the call'], 'an empty reason still refuses')
  t.equal(hooked.invoke('book_table', { date: 'd', partySize: 2 }).outcome, 'started', 'false lets the call through')
  t.equal(hooked.invoke('book_table', { date: 'd', partySize: 2 }).outcome, 'started', 'undefined lets the call through')
  const done = hooked.start('book_table', { date: 'd', partySize: 1 }).progress
  hooked.invoke('nope', {}, done)
  t.equal(calls.length, 5, 'unknown tools never reach the hook')
})

t.test('not_started: arguments fail the inputSchema; the errors name what is wrong', async (t) => {
  const engine = createRoutineEngine(routines)
  const wrong = engine.invoke('book_table', { partySize: '4', table: 7 })
  t.equal(wrong.outcome, 'not_started')
  t.same(wrong.invocation, { toolName: 'book_table', outcome: 'not_started' })
  t.same(wrong.errors, ['date is required', 'table is not an argument of this tool', 'partySize must be integer'],
    'all errors at once, strict types (no coercion for typed calls)')
  t.same(wrong.pendingInput?.map((entry) => entry.key), bookPending, 'what to supply')
  t.equal(wrong.progress, undefined)

  t.same(engine.invoke('book_table', null).errors, ['arguments must be object'])
  t.same(engine.invoke('book_table', [1]).errors, ['arguments must be object'])
  t.same(engine.invoke('book_table', undefined).errors, ['date is required', 'partySize is required'], 'no arguments = {}')
  t.same(engine.invoke('book_table', { date: 'd', partySize: 2.5 }).errors, ['partySize must be integer'])

  const active = engine.start('request_refund').progress
  const keeps = engine.invoke('book_table', { partySize: 'x' }, active)
  t.equal(keeps.outcome, 'not_started')
  t.equal(keeps.abandoned, undefined, 'a failed call does not abandon the active routine')
})

t.test('started: the routine begins (and completes at once when nothing is pending)', async (t) => {
  const engine = createRoutineEngine(routines)
  const full = engine.invoke('book_table', { date: '2026-12-01', partySize: 4 })
  t.equal(full.outcome, 'started')
  t.same(full.invocation, { toolName: 'book_table', outcome: 'started' })
  t.equal(full.progress?.status, 'completed')
  t.same(full.progress?.values, { date: '2026-12-01', partySize: 4 })
  t.same(full.pendingInput, [])
  t.equal(full.errors, undefined)

  const partial = engine.invoke('book_table', { date: '2026-12-01' })
  t.equal(partial.outcome, 'not_started', 'a call must satisfy the schema, required slots included')
  t.same(partial.errors, ['partySize is required'])

  const refund = engine.invoke('request_refund', { orderId: 'A-1' })
  t.equal(refund.progress?.status, 'waiting_for_approval')

  const blank = engine.invoke('book_table', { date: ' ', partySize: 2 })
  t.equal(blank.outcome, 'started', 'schema-valid')
  t.same(blank.errors, ['date is empty'], 'but a blank value is not accepted')
  t.equal(blank.progress?.status, 'waiting_for_input')

  const terminal = engine.start('request_refund', { orderId: '1' }).progress
  const after = engine.invoke('request_refund', { orderId: '2' }, engine.approve(terminal))
  t.equal(after.outcome, 'started', 'a finished routine is not active: the same tool starts afresh')
  t.equal(after.abandoned, undefined)
  t.equal(after.progress?.values.orderId, '2')
})

t.test('reentered: the same routine is active; the arguments fill its slots', async (t) => {
  const engine = createRoutineEngine(routines)
  const active = { ...engine.start('book_table', { date: '2026-12-01' }).progress, taskId: 'task-1' }
  const result = engine.invoke('book_table', { partySize: 4 }, active)
  t.equal(result.outcome, 'reentered')
  t.same(result.invocation, { toolName: 'book_table', outcome: 'reentered' })
  t.equal(result.progress?.status, 'completed')
  t.same(result.progress?.values, { date: '2026-12-01', partySize: 4 })
  t.equal((result.progress as typeof active).taskId, 'task-1', 'extra members kept')
  t.same(result.pendingInput, [])

  const notes = engine.invoke('book_table', { notes: 'window' }, active)
  t.equal(notes.outcome, 'reentered', 'required is not enforced again: the active routine holds values already')
  t.equal(notes.progress?.status, 'waiting_for_input')
  t.same(notes.pendingInput?.map((entry) => entry.key), ['partySize'])

  const typed = engine.invoke('book_table', { partySize: 'four', extra: 1 }, active)
  t.equal(typed.outcome, 'not_started', 'types and unknown arguments are still checked')
  t.same(typed.errors, ['extra is not an argument of this tool', 'partySize must be integer'])
  t.same(typed.pendingInput?.map((entry) => entry.key), ['partySize', 'notes'], 'what the active routine still needs')

  const blank = engine.invoke('book_table', { partySize: 3, notes: '' }, active)
  t.equal(blank.outcome, 'reentered')
  t.same(blank.errors, ['notes is empty'])
  t.equal(blank.progress?.status, 'completed')

  const approval = engine.start('request_refund', { orderId: '1' }).progress
  const amend = engine.invoke('request_refund', { orderId: '2' }, approval)
  t.equal(amend.outcome, 'reentered')
  t.equal(amend.progress?.status, 'waiting_for_approval')
  t.equal(amend.progress?.values.orderId, '2')
})

t.test('another routine is active: abandoned by default, or the call is declined', async (t) => {
  const engine = createRoutineEngine(routines)
  const refund = engine.start('request_refund').progress
  const result = engine.invoke('book_table', { date: 'd', partySize: 2 }, refund)
  t.equal(result.outcome, 'started')
  t.equal(result.progress?.routine, 'book_table')
  t.equal(result.abandoned?.routine, 'request_refund')
  t.equal(result.abandoned?.status, 'abandoned')
  t.equal(refund.status, 'waiting_for_input', 'the given progress is not mutated')

  const strict = createRoutineEngine(routines, { otherRoutineActive: 'decline' })
  const declined = strict.invoke('book_table', { date: 'd', partySize: 2 }, refund)
  t.equal(declined.outcome, 'declined')
  t.same(declined.errors, ['another routine (request_refund) is in progress; finish or cancel it first'])
  t.equal(declined.progress, undefined)
  t.equal(declined.abandoned, undefined)
  t.equal(strict.invoke('request_refund', { orderId: '9' }, refund).outcome, 'reentered', 'the same routine still re-enters')
  t.equal(strict.invoke('book_table', { date: 'd', partySize: 2 }, strict.abandon(refund)).outcome, 'started', 'a finished one does not block')
})
