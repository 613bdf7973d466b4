import t from 'tap'
import type { PendingInput } from '../../../packages/a2a-converse/src/core/envelope.js'
import type { RoutineDeclaration } from '../../../packages/a2a-converse/src/core/routine-declarations.js'
import { createRoutineEngine } from '../../../packages/a2a-converse/src/runtime/routine-engine.js'
import { messageData, messageText, parseSlotInput, toWireParts } from '../../../packages/a2a-converse/src/runtime/slot-input.js'
import { detectApproval, detectCancel, interpretRoutineMessage } from '../../../packages/a2a-converse/src/runtime/routine-message.js'

const bookTable: RoutineDeclaration = {
  name: 'book_table',
  toolName: 'book_table',
  description: 'Book a table for a date and party size.',
  exposed: true,
  slots: [
    { key: 'date', type: 'string', required: true, description: 'The date of the booking (YYYY-MM-DD).' },
    { key: 'partySize', type: 'integer', required: true, description: 'How many people are coming.' },
    { key: 'notes', type: 'string', description: 'Anything we should know.' }
  ]
}
const slots = bookTable.slots
const pending = (...keys: Array<[string, boolean]>): PendingInput[] =>
  keys.map(([key, required]) => ({ key, type: 'string', required, description: key }))

t.test('text pairs: key: value and key=value, comma / semicolon / newline separated', async (t) => {
  t.same(parseSlotInput([{ text: 'date: 2026-12-01, partySize: 4' }], { slots }), {
    values: { date: '2026-12-01', partySize: '4' }, sources: ['pairs']
  })
  t.same(parseSlotInput([{ text: 'partySize=4\nnotes=window' }], { slots }).values, { partySize: '4', notes: 'window' })
  t.same(parseSlotInput([{ text: 'DATE = 2026-12-01; Party Size: 6;' }], { slots }).values,
    { date: '2026-12-01', partySize: '6' }, 'keys case-insensitive, spaces/_/- ignored, trailing separators dropped')
  t.same(parseSlotInput([{ text: 'party_size: 2, notes: window seat, quiet corner please' }], { slots }).values,
    { partySize: '2', notes: 'window seat, quiet corner please' }, 'a value runs to the next pair, commas included')
  t.same(parseSlotInput([{ text: 'notes: arrive at 19:30, date: 2026-12-01' }], { slots }).values,
    { notes: 'arrive at 19:30', date: '2026-12-01' }, 'a colon inside a value is no pair')
  t.same(parseSlotInput([{ text: 'date: 2026-12-01\ntime: 19:00' }], { slots }).values,
    { date: '2026-12-01', time: '19:00' }, 'unknown keys are kept as received, for fill to reject')
  t.same(parseSlotInput([{ text: 'book a table: date=2026-12-24, party size=2' }], { slots }), {
    values: { date: '2026-12-24', partySize: '2' }, sources: ['pairs'], unparsed: 'book a table'
  }, 'a phrase that is no slot, followed by pairs of slots, introduces them')
  t.same(parseSlotInput([{ text: 'Hello, book a table: date=2026-12-24\nnotes: window' }], { slots }), {
    values: { date: '2026-12-24', notes: 'window' }, sources: ['pairs'], unparsed: 'Hello book a table'
  }, 'after other text too')
  t.same(parseSlotInput([{ text: 'date: 2026-12-01, time: at: 19:00' }], { slots }).values,
    { date: '2026-12-01', time: 'at: 19:00' }, 'an unknown key whose value holds no slot pair stays a pair, for fill to reject')
  t.same(parseSlotInput([{ text: 'Sure! date: 2026-12-01' }], { slots }), {
    values: {}, sources: [], unparsed: 'Sure! date: 2026-12-01'
  }, 'a pair must start the text or follow a separator')
  t.same(parseSlotInput([{ text: 'Sure!, date: 2026-12-01' }], { slots }), {
    values: { date: '2026-12-01' }, sources: ['pairs'], unparsed: 'Sure!'
  }, 'text before the first pair is reported unparsed')
  t.same(parseSlotInput([{ text: 'date:' }], { slots }).values, { date: '' }, 'an empty value is passed on (fill says it is empty)')
})

t.test('plain text fills the one pending slot', async (t) => {
  t.same(parseSlotInput([{ text: '  2026-12-01 \n' }], { slots, pending: pending(['date', true]) }), {
    values: { date: '2026-12-01' }, sources: ['text']
  })
  t.same(parseSlotInput([{ text: '4' }], { slots, pending: pending(['partySize', true], ['notes', false]) }).values,
    { partySize: '4' }, 'the only REQUIRED pending slot, even with optional ones offered')
  t.same(parseSlotInput([{ text: 'window seat' }], { slots, pending: pending(['notes', false]) }).values,
    { notes: 'window seat' }, 'a single optional pending slot')
  t.same(parseSlotInput([{ text: 'Note: by the window' }], { slots, pending: pending(['notes', false]) }).values,
    { notes: 'Note: by the window' }, 'pairs without any declared key are plain text')
  t.same(parseSlotInput([{ text: 'tomorrow' }], { slots, pending: pending(['date', true], ['partySize', true]) }), {
    values: {}, sources: [], unparsed: 'tomorrow'
  }, 'two required slots open: plain text is not guessed')
  t.same(parseSlotInput([{ text: 'tomorrow' }], { slots }).unparsed, 'tomorrow', 'nothing pending')
  t.same(parseSlotInput([{ text: 'tomorrow' }], { slots, pending: pending(['a', false], ['b', false]) }).unparsed, 'tomorrow')
  t.same(parseSlotInput([{ text: '   ' }, { text: 'x' }], { slots: ['date'], pending: pending(['date', true]) }).values,
    { date: 'x' }, 'blank text parts are skipped; slot keys may be given as strings')
})

t.test('data parts hold an object of slot values', async (t) => {
  t.same(parseSlotInput([{ data: { Date: '2026-12-01', partySize: 4, extra: true } }], { slots }), {
    values: { date: '2026-12-01', partySize: 4, extra: true }, sources: ['data']
  })
  t.same(parseSlotInput([{ data: [1, 2] }, { data: null }, { data: 'x' }], { slots, pending: pending(['date', true]) }), {
    values: {}, sources: []
  }, 'arrays and scalars are not slot objects')
  t.same(parseSlotInput([{ text: 'date: a, notes: b' }, { data: { date: 'c' } }, { text: 'partySize=2' }], { slots }), {
    values: { date: 'c', notes: 'b', partySize: '2' }, sources: ['pairs', 'data']
  }, 'parts merge, later wins')
  t.same(parseSlotInput(undefined, { slots }), { values: {}, sources: [] })
  t.same(parseSlotInput([{ url: 'https://x' }, null, 'text'], { slots }), { values: {}, sources: [] })
})

t.test('parsed values go through the engine: coercion and reasons', async (t) => {
  const engine = createRoutineEngine([bookTable])
  const p0 = engine.start('book_table').progress
  const parsed = parseSlotInput([{ text: 'date: 2026-12-01, partySize: four, table: 7' }], { slots, pending: engine.pendingInput(p0) })
  const filled = engine.fill(p0, parsed.values)
  t.same(filled.accepted, ['date'])
  t.same(filled.rejected.map((entry) => entry.key), ['partySize', 'table'])
  const next = parseSlotInput([{ text: '4' }], { slots, pending: engine.pendingInput(filled.progress) })
  t.equal(engine.fill(filled.progress, next.values).progress.status, 'completed')
})

t.test('approval answers', async (t) => {
  for (const text of ['yes', 'Yes!', 'y', 'ok', 'OK.', 'okay', 'approve', 'Approved', 'I approve', 'confirm', 'yes please',
    'please confirm', 'sure, thanks', 'go ahead', 'Yes, thank you']) {
    t.equal(detectApproval([{ text }]), true, text)
  }
  for (const text of ['no', 'No.', 'n', 'nope', 'decline', 'reject', 'I decline', "don't", 'no thanks', 'No, thank you']) {
    t.equal(detectApproval([{ text }]), false, text)
  }
  for (const text of ['yes but change the order', 'maybe', 'not sure', '', '!!!', 'thank you', 'know']) {
    t.equal(detectApproval([{ text }]), undefined, `"${text}" is no answer`)
  }
  t.equal(detectApproval([{ data: { approved: true } }]), true)
  t.equal(detectApproval([{ data: { approved: false } }]), false)
  t.equal(detectApproval([{ data: { approved: 'yes' } }]), undefined, 'only a boolean counts')
  t.equal(detectApproval([{ data: { approved: false } }, { text: 'yes' }]), false, 'the data part wins')
  t.equal(detectApproval(undefined), undefined)
})

t.test('cancel words', async (t) => {
  for (const text of ['cancel', 'Cancel!', 'stop', 'STOP', 'abort', 'quit', 'never mind', 'Nevermind.', 'forget it', 'please cancel', 'cancel it, thanks']) {
    t.ok(detectCancel([{ text }]), text)
  }
  for (const text of ['cancel my order 12', 'stopover in Paris', 'no', '']) t.notOk(detectCancel([{ text }]), text)
  t.ok(detectCancel([{ data: { cancel: true } }]))
  t.notOk(detectCancel([{ data: { cancel: 'yes' } }]))
  t.notOk(detectCancel(undefined))
})

t.test('interpretRoutineMessage: cancel, then approval (when awaited), then slots', async (t) => {
  const one = pending(['notes', false])
  t.same(interpretRoutineMessage([{ text: 'stop' }], { slots, pending: one }), { kind: 'cancel' }, 'cancel beats the plain-text rule')
  t.same(interpretRoutineMessage([{ text: 'yes' }], { slots, awaitingApproval: true }), { kind: 'approval', approved: true })
  t.same(interpretRoutineMessage([{ text: 'no' }], { slots, awaitingApproval: true }), { kind: 'approval', approved: false })
  t.same(interpretRoutineMessage([{ text: 'yes' }], { slots, pending: one }), {
    kind: 'slots', values: { notes: 'yes' }, sources: ['text']
  }, 'not awaiting approval: just text')
  t.same(interpretRoutineMessage([{ text: 'notes: by the door' }], { slots, awaitingApproval: true }), {
    kind: 'slots', values: { notes: 'by the door' }, sources: ['pairs']
  }, 'awaiting approval but not an answer: slot values')
  t.same(interpretRoutineMessage(
    [{ content: { $case: 'text', value: 'cancel' } }], { slots }), { kind: 'cancel' }, 'SDK parts work too')
})

t.test('SDK parts (content.$case) become wire parts', async (t) => {
  const sdk = [
    { content: { $case: 'text', value: 'date: 2026-12-01' }, metadata: undefined, filename: '', mediaType: '' },
    { content: { $case: 'data', value: { partySize: 4 } }, metadata: { m: 1 }, filename: '', mediaType: 'application/json' },
    { content: { $case: 'url', value: 'https://example.com/menu.pdf' }, metadata: undefined, filename: 'menu.pdf', mediaType: 'application/pdf' },
    { content: { $case: 'raw', value: Buffer.from('hi') }, metadata: undefined, filename: '', mediaType: '' },
    { content: { $case: 'future', value: 1 }, metadata: undefined, filename: '', mediaType: '' },
    { content: undefined, metadata: undefined, filename: '', mediaType: '' },
    { content: 'odd' },
    { text: 'wire part' },
    null,
    7
  ]
  t.same(toWireParts(sdk), [
    { text: 'date: 2026-12-01' },
    { data: { partySize: 4 }, mediaType: 'application/json', metadata: { m: 1 } },
    { url: 'https://example.com/menu.pdf', mediaType: 'application/pdf', filename: 'menu.pdf' },
    { raw: 'aGk=' },
    { text: 'wire part' }
  ])
  t.same(toWireParts(undefined), [])
  t.equal(messageText(sdk), 'date: 2026-12-01\nwire part')
  t.same(messageData(sdk), [{ partySize: 4 }])
  t.same(parseSlotInput(sdk, { slots }).values, { date: '2026-12-01', partySize: 4 })
})
