import t from 'tap'
import { bookTable, requestRefund } from '../../fixtures/demo-routines.js'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { RoutineDeclarationError } from '../../../packages/a2a-converse/src/core/errors.js'
import { routineInputSchema } from '../../../packages/a2a-converse/src/core/tool-descriptors.js'
import {
  createRoutineEngine, isTerminal, RoutineStateError, UnknownRoutineError, type RoutineProgress
} from '../../../packages/a2a-converse/src/runtime/routine-engine.js'
import { deepFreeze } from '../../../packages/a2a-converse/src/core/deep-freeze.js'

// The demo's routines (issue 4), plus a step-wise non-exposed one.
const collectFeedback: RoutineDeclaration = {
  name: 'collect_feedback',
  description: 'Collect feedback about the visit.',
  steps: [{ id: 'rating', prompt: 'How would you rate your visit, from 1 to 5?' }, { id: 'details' }],
  slots: [
    { key: 'rating', type: 'integer', required: true, description: 'A rating from 1 to 5.', step: 'rating' },
    { key: 'liked', type: 'boolean', description: 'Did you like it?', step: 'rating' },
    { key: 'score', type: 'number' },
    { key: 'comment', type: 'string', required: true, description: 'What could be better.', step: 'details' },
    { key: 'contactMe', type: 'boolean', step: 'details' }
  ]
}
const routines = [bookTable, requestRefund, collectFeedback]

let clock = 0
const now = (): Date => new Date(Date.UTC(2026, 0, 1) + (clock++) * 1000)

t.test('creation validates the declarations and keeps a private copy', async (t) => {
  t.throws(() => createRoutineEngine([{ name: 'x' } as unknown as RoutineDeclaration]), RoutineDeclarationError)
  t.throws(() => createRoutineEngine([bookTable, { ...bookTable }]), RoutineDeclarationError)
  const input = structuredClone(routines)
  const engine = createRoutineEngine(input)
  input[0].slots.push({ key: 'extra', type: 'string' })
  input[0].description = 'changed'
  t.equal(engine.declaration('book_table')?.description, 'Book a table for a date and party size.')
  t.equal(engine.declaration('book_table')?.slots.length, 3)
  t.equal(engine.declaration('nope'), undefined)
  t.equal(engine.declarations.length, 3)
  t.same(engine.inputSchema('book_table'), routineInputSchema(bookTable), 'the one schema, from routineInputSchema')
  t.throws(() => engine.inputSchema('nope'), UnknownRoutineError)
  t.equal(engine.byToolName('book_table')?.name, 'book_table')
  t.equal(engine.byToolName('collect_feedback'), undefined, 'not exposed, no tool name')
  const hidden = createRoutineEngine([{ ...requestRefund, exposed: false }])
  t.equal(hidden.byToolName('request_refund'), undefined, 'a toolName without exposed is not callable')
})

t.test('book_table: waiting_for_input until every required slot is filled, then completed', async (t) => {
  const engine = createRoutineEngine(routines, { now })
  const started = engine.start('book_table')
  t.same(started.accepted, [])
  t.same(started.rejected, [])
  const p0 = deepFreeze(started.progress)
  t.equal(p0.routine, 'book_table')
  t.equal(p0.status, 'waiting_for_input')
  t.same(p0.values, {})
  t.equal(p0.stepIndex, 0)
  t.equal(p0.step, 'details')
  t.match(p0.startedAt, /^2026-01-01T/)
  t.equal(p0.updatedAt, p0.startedAt, 'one clock reading for a start (this clock moves a second per reading)')
  t.equal(p0.endedAt, undefined)
  t.same(engine.pendingInput(p0), [
    { key: 'date', type: 'string', required: true, description: 'The date of the booking (YYYY-MM-DD).' },
    { key: 'partySize', type: 'integer', required: true, description: 'How many people are coming.' },
    { key: 'notes', type: 'string', required: false, description: 'Anything we should know.' }
  ])
  t.same(engine.routineState(p0), {
    toolName: 'book_table', name: 'book_table', status: 'waiting_for_input', pendingInput: engine.pendingInput(p0)
  })

  const r1 = engine.fill(p0, { date: '2026-12-01' })
  t.same(r1.accepted, ['date'])
  t.equal(r1.progress.status, 'waiting_for_input')
  t.same(engine.pendingInput(r1.progress).map((entry) => entry.key), ['partySize', 'notes'], 'optional offered while waiting')
  t.same(p0.values, {}, 'the input progress is untouched')
  t.not(r1.progress.updatedAt, p0.updatedAt)

  const r2 = engine.fill(r1.progress, { partySize: '4' })
  t.same(r2.accepted, ['partySize'])
  t.equal(r2.progress.values.partySize, 4, 'coerced to integer')
  t.equal(r2.progress.status, 'completed', 'optional notes never waited for')
  t.equal(r2.progress.endedAt, r2.progress.updatedAt)
  t.same(engine.pendingInput(r2.progress), [])
  t.same(engine.routineState(r2.progress), { toolName: 'book_table', name: 'book_table', status: 'completed', pendingInput: [] })
  t.ok(isTerminal(r2.progress))
  t.equal(engine.prompt(r2.progress), 'book_table is complete.')
})

t.test('start with initial values; everything in one go', async (t) => {
  const engine = createRoutineEngine(routines)
  const { progress, accepted } = engine.start('book_table', { date: '2026-12-01', partySize: 2, notes: 'window' })
  t.same(accepted, ['date', 'partySize', 'notes'])
  t.equal(progress.status, 'completed')
  t.same(progress.values, { date: '2026-12-01', partySize: 2, notes: 'window' })
  t.throws(() => engine.start('nope'), UnknownRoutineError)
  t.throws(() => engine.start('nope'), { code: 'A2A_CONVERSE_UNKNOWN_ROUTINE', routine: 'nope' })
})

t.test('invalid values keep their slot pending and say why', async (t) => {
  const engine = createRoutineEngine(routines)
  const p0 = engine.start('book_table', { date: '2026-12-01' }).progress
  const bad = engine.fill(p0, { partySize: 'four' })
  t.same(bad.accepted, [])
  t.same(bad.rejected, [{ key: 'partySize', reason: 'partySize must be an integer (got "four")' }])
  t.equal(bad.progress.status, 'waiting_for_input')
  t.ok(engine.pendingInput(bad.progress).some((entry) => entry.key === 'partySize'))
  t.notOk('partySize' in bad.progress.values)

  t.match(engine.fill(p0, { partySize: '4.5' }).rejected, [{ key: 'partySize', reason: /must be an integer/ }])
  t.match(engine.fill(p0, { partySize: 'Infinity' }).rejected, [{ key: 'partySize', reason: /must be an integer/ }], 'non-finite refused')
  t.match(engine.fill(p0, { partySize: [4] }).rejected, [{ reason: 'partySize must be an integer (got [4])' }])
  t.match(engine.fill(p0, { notes: { a: 'x'.repeat(60) } }).rejected, [{ reason: /^notes must be a string \(got \{"a":"x+\.\.\.\)$/ }], 'long values previewed')
  t.same(engine.fill(p0, { partySize: null }).rejected, [{ key: 'partySize', reason: 'partySize is empty' }])
  t.same(engine.fill(p0, { notes: '   ' }).rejected, [{ key: 'notes', reason: 'notes is empty' }])
  t.same(engine.fill(p0, { table: 5 }).rejected, [{
    key: 'table', reason: '"table" is not an input of book_table (expected date, partySize, notes)'
  }])
  t.same(engine.fill(p0, { partySize: 4n }).rejected, [{ key: 'partySize', reason: 'partySize must be an integer (got 4)' }], 'not JSON: a BigInt')
  t.same(engine.fill(p0, { notes: () => 1 }).rejected, [{ key: 'notes', reason: 'notes must be a string (got () => 1)' }], 'not JSON: a function')
  const skipped = engine.fill(p0, { notes: undefined })
  t.same(skipped.accepted, [])
  t.same(skipped.rejected, [], 'undefined is no value at all')

  const mixed = engine.fill(p0, { partySize: 'x', notes: 'window', bogus: 1 })
  t.same(mixed.accepted, ['notes'])
  t.same(mixed.rejected.map((entry) => entry.key), ['partySize', 'bogus'])
  t.equal(mixed.progress.values.notes, 'window')

  const filled = engine.fill(p0, { notes: 'window' }).progress
  const kept = engine.fill(filled, { notes: 42, date: '' })
  t.equal(kept.progress.values.notes, '42', 'numbers become strings for a string slot')
  t.equal(kept.progress.values.date, '2026-12-01', 'an invalid value does not erase a valid one')
})

t.test('coercion: a copy is coerced, keys match case-insensitively, strings are trimmed', async (t) => {
  const engine = createRoutineEngine(routines)
  const p0 = engine.start('collect_feedback').progress
  const input = { RATING: ' 5 ', liked: 'true', score: '2.5', contactme: 0 }
  const r = engine.fill(p0, input)
  t.same(r.accepted, ['rating', 'liked', 'score', 'contactMe'])
  t.same(r.progress.values, { rating: 5, liked: true, score: 2.5, contactMe: false })
  t.same(input, { RATING: ' 5 ', liked: 'true', score: '2.5', contactme: 0 }, 'the caller\'s values are not mutated')
  t.match(engine.fill(p0, { liked: 'maybe' }).rejected, [{ reason: 'liked must be a boolean (true or false) (got "maybe")' }])
  t.match(engine.fill(p0, { score: 'lots' }).rejected, [{ reason: 'score must be a number (got "lots")' }])
  const twice = engine.fill(p0, { rating: 1, Rating: 2 })
  t.same(twice.accepted, ['rating'], 'a key is listed once')
  t.equal(twice.progress.values.rating, 2, 'the later value wins')

  const cased = createRoutineEngine([{
    name: 'cased',
    description: 'Two keys differing in case.',
    slots: [{ key: 'Date', type: 'string' }, { key: 'date', type: 'integer' }]
  }])
  t.same(cased.start('cased', { date: 3, Date: 'x' }).progress.values, { date: 3, Date: 'x' }, 'exact keys win')
  t.same(cased.start('cased', { DATE: 'y' }).progress.values, { Date: 'y' }, 'otherwise the first declared')
})

t.test('steps: the current step is the first with an open required slot, else the last', async (t) => {
  const engine = createRoutineEngine(routines)
  const p0 = engine.start('collect_feedback').progress
  t.equal(p0.stepIndex, 0)
  t.equal(p0.step, 'rating')
  t.same(engine.pendingInput(p0), [
    { key: 'rating', type: 'integer', required: true, description: 'A rating from 1 to 5.' },
    { key: 'liked', type: 'boolean', required: false, description: 'Did you like it?' },
    { key: 'score', type: 'number', required: false, description: 'score' },
    { key: 'comment', type: 'string', required: true, description: 'What could be better.' }
  ], 'all open required + the current step\'s optional; a slot without a step is in the first step; description falls back to the key')
  t.equal(engine.prompt(p0), 'How would you rate your visit, from 1 to 5?', 'the step\'s declared prompt')
  t.same(engine.routineState(p0), { name: 'collect_feedback', status: 'waiting_for_input', pendingInput: engine.pendingInput(p0) }, 'no toolName when not exposed')

  const p1 = engine.fill(p0, { rating: 4, liked: true }).progress
  t.equal(p1.stepIndex, 1)
  t.equal(p1.step, 'details')
  t.same(engine.pendingInput(p1), [
    { key: 'comment', type: 'string', required: true, description: 'What could be better.' },
    { key: 'contactMe', type: 'boolean', required: false, description: 'contactMe' }
  ])
  t.equal(engine.prompt(p1),
    'To collect feedback about the visit, please provide: comment (What could be better.). Optionally also: contactMe.')

  const early = engine.fill(p0, { comment: 'faster service' }).progress
  t.equal(early.step, 'rating', 'a later step\'s slot may be filled early; the step stays at the first open one')
  t.same(engine.pendingInput(early).map((entry) => entry.key), ['rating', 'liked', 'score'])

  const done = engine.fill(p1, { comment: 'more vegan dishes' }).progress
  t.equal(done.status, 'completed')
  t.equal(done.stepIndex, 1, 'the last step when nothing is open')
  t.equal(done.step, 'details')
})

t.test('routines without steps or slots', async (t) => {
  const ping: RoutineDeclaration = { name: 'ping', description: 'Ping.', slots: [] }
  const engine = createRoutineEngine([ping, requestRefund])
  const p = engine.start('ping').progress
  t.equal(p.status, 'completed', 'nothing pending, no approval: completed at once')
  t.equal(p.step, undefined)
  t.equal(p.stepIndex, 0)
  const refund = engine.start('request_refund').progress
  t.equal(refund.step, undefined)
  t.notOk('step' in refund)
  t.equal(engine.prompt(refund), 'To request a refund for an order, please provide: orderId (The order number.). Optionally also: reason.')
  const only: RoutineDeclaration = {
    name: 'only_required',
    description: 'Needs one thing',
    steps: [{ id: 'one', prompt: '  ' }],
    slots: [{ key: 'thing', type: 'string', required: true, description: 'The thing.', step: 'one' }]
  }
  const consent = createRoutineEngine([{ name: 'consent', description: 'Just approval.', slots: [], approval: {} }])
  const c = consent.start('consent').progress
  t.equal(c.status, 'waiting_for_approval')
  t.same(consent.fill(c, { x: 1 }).rejected, [{ key: 'x', reason: '"x" is not an input of consent (expected none)' }])
  const e2 = createRoutineEngine([only])
  t.equal(e2.prompt(e2.start('only_required').progress), 'To needs one thing, please provide: thing (The thing.).', 'a blank step prompt is ignored')
})

t.test('request_refund: waiting_for_approval, then approve or decline', async (t) => {
  const engine = createRoutineEngine(routines, { now })
  const waiting = engine.start('request_refund').progress
  t.equal(waiting.status, 'waiting_for_input')
  t.same(engine.pendingInput(waiting).map((entry) => entry.key), ['orderId', 'reason'])
  t.throws(() => engine.approve(waiting), RoutineStateError)
  t.throws(() => engine.decline(waiting), { code: 'A2A_CONVERSE_ROUTINE_STATE', message: 'routine "request_refund" is waiting_for_input: cannot decline' })

  const p = deepFreeze(engine.fill(waiting, { orderId: 'A-1001' }).progress)
  t.equal(p.status, 'waiting_for_approval')
  t.same(engine.pendingInput(p), [], 'nothing to supply while waiting for approval')
  t.same(engine.routineState(p), { toolName: 'request_refund', name: 'request_refund', status: 'waiting_for_approval', pendingInput: [] })
  t.equal(engine.prompt(p), 'Refund this order? Answer yes or no.')
  t.equal(p.endedAt, undefined)

  const amended = engine.fill(p, { reason: 'arrived broken' }).progress
  t.equal(amended.status, 'waiting_for_approval', 'slots may still be amended while waiting for approval')
  t.equal(amended.values.reason, 'arrived broken')

  const approved = engine.approve(amended)
  t.equal(approved.status, 'completed')
  t.equal(approved.approval, 'approved')
  t.ok(approved.endedAt)
  t.equal(amended.status, 'waiting_for_approval', 'not mutated')
  t.throws(() => engine.approve(approved), RoutineStateError)

  const declined = engine.decline(p)
  t.equal(declined.status, 'abandoned')
  t.equal(declined.approval, 'declined')
  t.ok(declined.endedAt)
  t.equal(engine.prompt(declined), 'request_refund was declined.')
  t.throws(() => engine.decline(declined), RoutineStateError)

  const noPrompt = createRoutineEngine([{ ...requestRefund, approval: {} }])
  const q = noPrompt.start('request_refund', { orderId: '1' }).progress
  t.equal(noPrompt.prompt(q), 'Shall I go ahead with request_refund? Reply yes to approve or no to decline.')
})

t.test('abandon from any open status; terminal progress refuses transitions', async (t) => {
  const engine = createRoutineEngine(routines)
  const waiting = engine.start('book_table').progress
  const abandoned = engine.abandon(waiting)
  t.equal(abandoned.status, 'abandoned')
  t.equal(abandoned.approval, undefined)
  t.ok(abandoned.endedAt)
  t.equal(engine.prompt(abandoned), 'book_table was cancelled.')
  t.same(engine.routineState(abandoned), { toolName: 'book_table', name: 'book_table', status: 'abandoned', pendingInput: [] })
  t.equal(engine.abandon(engine.start('request_refund', { orderId: '1' }).progress).status, 'abandoned', 'from waiting_for_approval')
  t.throws(() => engine.abandon(abandoned), RoutineStateError)
  t.throws(() => engine.fill(abandoned, { date: 'x' }), { message: 'routine "book_table" is abandoned: cannot fill slots' })
  const completed = engine.start('book_table', { date: 'd', partySize: 1 }).progress
  t.throws(() => engine.abandon(completed), RoutineStateError)
  t.throws(() => engine.fill(completed, {}), RoutineStateError)
  t.ok(isTerminal('completed'))
  t.ok(isTerminal('abandoned'))
  t.notOk(isTerminal('waiting_for_input'))
  t.notOk(isTerminal(waiting))
})

t.test('a progress is plain JSON, survives a round trip, and keeps extra members', async (t) => {
  const engine = createRoutineEngine(routines)
  const p0 = engine.start('request_refund').progress
  const stored = JSON.parse(JSON.stringify({ ...p0, taskId: 'task-1' })) as RoutineProgress & { taskId: string }
  t.same(stored, { ...p0, taskId: 'task-1' })
  const filled = engine.fill(stored, { orderId: '7' }).progress
  t.equal(filled.taskId, 'task-1')
  t.equal(engine.approve(filled).taskId, 'task-1')
  t.equal(engine.decline(filled).taskId, 'task-1')
  t.equal(engine.abandon(filled).taskId, 'task-1')
})

t.test('a progress naming an undeclared routine throws UnknownRoutineError', async (t) => {
  const engine = createRoutineEngine(routines)
  const ghost: RoutineProgress = { routine: 'ghost', status: 'waiting_for_input', values: {}, stepIndex: 0, startedAt: 'x', updatedAt: 'x' }
  for (const operation of [
    () => engine.fill(ghost, {}), () => engine.approve(ghost), () => engine.decline(ghost), () => engine.abandon(ghost),
    () => engine.pendingInput(ghost), () => engine.routineState(ghost), () => engine.prompt(ghost)
  ]) t.throws(operation, UnknownRoutineError)
})

t.test('a hand-made `active` progress (the engine never leaves one) is re-evaluated by fill', async (t) => {
  const engine = createRoutineEngine(routines)
  const active: RoutineProgress = { routine: 'book_table', status: 'active', values: { date: 'd' }, stepIndex: 0, startedAt: 'x', updatedAt: 'x' }
  t.equal(engine.prompt(active), 'book_table is in progress.')
  t.same(engine.pendingInput(active), [])
  t.equal(engine.fill(active, {}).progress.status, 'waiting_for_input')
  t.equal(engine.fill(active, { partySize: 3 }).progress.status, 'completed')
  t.equal(engine.abandon(active).status, 'abandoned')
})

t.test('the default clock is the wall clock', async (t) => {
  const engine = createRoutineEngine(routines)
  const before = Date.now()
  const p = engine.start('book_table').progress
  t.ok(Date.parse(p.startedAt) >= before - 1)
  t.equal(p.startedAt, p.updatedAt)
})
