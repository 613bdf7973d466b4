import t from 'tap'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { createTriggerMatcher, recognizeRoutine } from '../../../packages/a2a-converse/src/runtime/routine-triggers.js'

const bookTable: RoutineDeclaration = {
  name: 'book_table',
  toolName: 'book_table',
  description: 'Book a table for a date and party size.',
  exposed: true,
  slots: [],
  triggers: ['book a table', 'reserve a table', 'table for']
}
const requestRefund: RoutineDeclaration = {
  name: 'request_refund',
  toolName: 'request_refund',
  description: 'Request a refund for an order.',
  exposed: true,
  slots: [],
  triggers: ['refund', 'money back', "I'd like my money back"]
}
const collectFeedback: RoutineDeclaration = {
  name: 'collect_feedback', description: 'Collect feedback.', slots: [], triggers: ['leave feedback', 'give  feedback']
}
const closeAccount: RoutineDeclaration = {
  name: 'close_account', description: 'Close the account.', enabled: false, slots: [], triggers: ['close my account']
}
const silent: RoutineDeclaration = { name: 'silent', description: 'No triggers.', slots: [] }
const routines = [bookTable, requestRefund, collectFeedback, closeAccount, silent]

t.test('case-insensitive, whole-word phrases anywhere in the text', async (t) => {
  t.equal(recognizeRoutine("I'd like to book a table for Friday", routines)?.name, 'book_table')
  t.equal(recognizeRoutine('BOOK A TABLE', routines)?.name, 'book_table')
  t.equal(recognizeRoutine('Can I book   a\ntable?', routines)?.name, 'book_table', 'any whitespace between words')
  t.equal(recognizeRoutine('I want a refund.', routines)?.name, 'request_refund')
  t.equal(recognizeRoutine('refunds are slow', routines), undefined, 'not inside a longer word')
  t.equal(recognizeRoutine('nonrefund policy', routines), undefined, 'not inside a longer word (left side)')
  t.equal(recognizeRoutine('a timetable for trains', routines), undefined)
  t.equal(recognizeRoutine('I’d like my money back', routines)?.name, 'request_refund', 'typographic apostrophe')
  t.equal(recognizeRoutine('I want to give feedback', routines)?.name, 'collect_feedback', 'non-exposed routines are recognised')
  t.equal(recognizeRoutine('hello there', routines), undefined)
  t.equal(recognizeRoutine('', routines), undefined)
  t.equal(recognizeRoutine(undefined as unknown as string, routines), undefined)
})

t.test('disabled routines are never recognised', async (t) => {
  t.equal(recognizeRoutine('please close my account', routines), undefined)
})

t.test('several matches: earliest in the text, then longest phrase, then declared first', async (t) => {
  t.equal(recognizeRoutine('refund my dinner, then book a table', routines)?.name, 'request_refund', 'earliest')
  t.equal(recognizeRoutine('book a table, then a refund', routines)?.name, 'book_table', 'earliest')
  const overlapping: RoutineDeclaration[] = [
    { name: 'short', description: 'Short.', slots: [], triggers: ['table'] },
    { name: 'long', description: 'Long.', slots: [], triggers: ['table for two'] },
    { name: 'same', description: 'Same length as short.', slots: [], triggers: ['Table'] }
  ]
  t.equal(recognizeRoutine('table for two please', overlapping)?.name, 'long', 'longest phrase at the same position')
  t.equal(recognizeRoutine('a table please', overlapping)?.name, 'short', 'tie: declared first')
})

t.test('phrases are literal text, not patterns', async (t) => {
  const special: RoutineDeclaration[] = [
    { name: 'faq', description: 'FAQ.', slots: [], triggers: ['what is c++?', 'a.b', '  '] }
  ]
  const match = createTriggerMatcher(special)
  t.equal(match('so, what is C++?')?.name, 'faq')
  t.equal(match('what is c'), undefined)
  t.equal(match('axb'), undefined, 'a dot is a dot')
  t.equal(match('a.b')?.name, 'faq')
  t.equal(match(' '), undefined, 'a blank phrase matches nothing')
})

t.test('recognizeRoutine compiles once per declarations array', async (t) => {
  const list = [bookTable]
  t.equal(recognizeRoutine('book a table', list)?.name, 'book_table')
  list.push(requestRefund) // not seen: the matcher was cached for this array
  t.equal(recognizeRoutine('refund', list), undefined)
  t.equal(recognizeRoutine('refund', [...list])?.name, 'request_refund')
})
