import t from 'tap'
import { validateEnvelope, envelopeSchema } from '../../../packages/a2a-converse/src/core/envelope-schema.js'
import {
  AUTHORS, AVAILABILITIES, COVERAGES, COVERAGE_REASONS, ENVELOPE_MEMBERS, INVOCATION_OUTCOMES, OWNERSHIP_STATES,
  ROUTINE_STATUSES, SLOT_TYPES
} from '../../../packages/a2a-converse/src/core/envelope.js'
import {
  DEFAULT_OWNERSHIP, FAILED_ENVELOPE, NOT_RECORDED, normalizeEnvelope
} from '../../../packages/a2a-converse/src/core/normalize-envelope.js'

/** The envelope of the spec's example reply, verbatim. */
const SPEC_EXAMPLE = {
  author: 'agent',
  answerCoverage: {
    availability: 'assessed',
    coverage: 'answered',
    reason: 'sufficient_evidence',
    originatingTurnId: 'c3…',
    originatingRequestId: 'c3…'
  },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [
    { documentId: '0c8e…', chunkId: '5d21…', title: 'Returns policy' }
  ]
}

const FULL = {
  author: 'human',
  answerCoverage: { availability: 'assessed', coverage: 'partial', reason: 'insufficient_evidence', originatingTurnId: 't1', originatingRequestId: 'r1' },
  ownership: { state: 'human_owned', suppressed: true },
  routine: {
    toolName: 'book_table',
    name: 'Book a table',
    status: 'waiting_for_input',
    pendingInput: [{ key: 'date', type: 'string', required: true, description: 'The date' }]
  },
  invocation: { toolName: 'book_table', outcome: 'started' },
  citations: [{ documentId: 'd', chunkId: 'c', title: 'T', sourceUrl: 'https://example.com/doc' }]
}

function clone<T> (value: T): T { return structuredClone(value) }

t.test('enums are exactly the spec\'s', async (t) => {
  t.same(AUTHORS, ['agent', 'human'])
  t.same(AVAILABILITIES, ['assessed', 'not_recorded', 'failed', 'invalid'])
  t.same(COVERAGES, ['answered', 'partial', 'unanswered', 'unclear'])
  t.same(COVERAGE_REASONS, ['sufficient_evidence', 'insufficient_evidence', 'conflicting_evidence', 'ambiguous_request', 'intentional_scope_boundary'])
  t.same(OWNERSHIP_STATES, ['ai_owned', 'human_owned'])
  t.same(ROUTINE_STATUSES, ['active', 'waiting_for_input', 'waiting_for_approval', 'completed', 'abandoned'])
  t.same(INVOCATION_OUTCOMES, ['started', 'reentered', 'declined', 'not_started', 'unknown_tool'])
  t.same(ENVELOPE_MEMBERS, ['author', 'answerCoverage', 'ownership', 'routine', 'invocation', 'citations'])
  t.same(SLOT_TYPES, ['string', 'integer', 'number', 'boolean'])
  t.equal(envelopeSchema.type, 'object')
})

t.test('the schema accepts the spec example and every valid enum value', async (t) => {
  t.ok(validateEnvelope(SPEC_EXAMPLE), 'spec example')
  t.ok(validateEnvelope(FULL), 'every member')
  t.ok(validateEnvelope({ answerCoverage: { availability: 'not_recorded' } }), 'minimal')
  for (const author of AUTHORS) t.ok(validateEnvelope({ ...SPEC_EXAMPLE, author }), author)
  for (const availability of AVAILABILITIES.filter((a) => a !== 'assessed')) {
    t.ok(validateEnvelope({ answerCoverage: { availability, originatingTurnId: 't' } }), availability)
  }
  for (const coverage of COVERAGES) {
    for (const reason of COVERAGE_REASONS) {
      t.ok(validateEnvelope({ answerCoverage: { availability: 'assessed', coverage, reason } }), `${coverage}/${reason}`)
    }
  }
  for (const state of OWNERSHIP_STATES) {
    t.ok(validateEnvelope({ ...SPEC_EXAMPLE, ownership: { state, suppressed: true } }), state)
  }
  for (const status of ROUTINE_STATUSES) {
    t.ok(validateEnvelope({ ...FULL, routine: { name: 'r', status, pendingInput: [] } }), status)
  }
  for (const outcome of INVOCATION_OUTCOMES) {
    t.ok(validateEnvelope({ ...FULL, invocation: { toolName: 'x', outcome } }), outcome)
  }
  for (const type of SLOT_TYPES) {
    t.ok(validateEnvelope({ ...FULL, routine: { ...FULL.routine, pendingInput: [{ key: 'k', type, required: false, description: '' }] } }), type)
  }
})

t.test('the schema rejects each wrong enum, field and shape', async (t) => {
  const cases: Array<[string, (e: any) => void]> = [
    ['author robot', (e) => { e.author = 'robot' }],
    ['author ROLE_AGENT', (e) => { e.author = 'ROLE_AGENT' }],
    ['no answerCoverage', (e) => { delete e.answerCoverage }],
    ['unknown root member', (e) => { e.mood = 'happy' }],
    ['availability unknown', (e) => { e.answerCoverage.availability = 'maybe' }],
    ['availability missing', (e) => { delete e.answerCoverage.availability }],
    ['coverage unknown', (e) => { e.answerCoverage.coverage = 'mostly' }],
    ['reason unknown', (e) => { e.answerCoverage.reason = 'vibes' }],
    ['assessed without coverage', (e) => { delete e.answerCoverage.coverage }],
    ['assessed without reason', (e) => { delete e.answerCoverage.reason }],
    ['not_recorded with a verdict', (e) => { e.answerCoverage.availability = 'not_recorded' }],
    ['failed with a reason only', (e) => { e.answerCoverage.availability = 'failed'; delete e.answerCoverage.coverage }],
    ['empty originatingTurnId', (e) => { e.answerCoverage.originatingTurnId = '' }],
    ['numeric originatingRequestId', (e) => { e.answerCoverage.originatingRequestId = 7 }],
    ['unknown answerCoverage member', (e) => { e.answerCoverage.score = 1 }],
    ['ownership state unknown', (e) => { e.ownership.state = 'shared' }],
    ['ownership suppressed not boolean', (e) => { e.ownership.suppressed = 'no' }],
    ['ownership suppressed missing', (e) => { delete e.ownership.suppressed }],
    ['ownership extra member', (e) => { e.ownership.owner = 'x' }],
    ['routine status unknown', (e) => { e.routine.status = 'paused' }],
    ['routine name missing', (e) => { delete e.routine.name }],
    ['routine pendingInput missing', (e) => { delete e.routine.pendingInput }],
    ['routine toolName bad', (e) => { e.routine.toolName = 'book table' }],
    ['routine extra member', (e) => { e.routine.step = 'x' }],
    ['pendingInput type unknown', (e) => { e.routine.pendingInput[0].type = 'date' }],
    ['pendingInput required missing', (e) => { delete e.routine.pendingInput[0].required }],
    ['pendingInput description missing', (e) => { delete e.routine.pendingInput[0].description }],
    ['pendingInput extra member', (e) => { e.routine.pendingInput[0].value = 'x' }],
    ['invocation outcome unknown', (e) => { e.invocation.outcome = 'done' }],
    ['invocation toolName missing', (e) => { delete e.invocation.toolName }],
    ['invocation toolName too long', (e) => { e.invocation.toolName = 'x'.repeat(257) }],
    ['citations not an array', (e) => { e.citations = {} }],
    ['citation documentId missing', (e) => { delete e.citations[0].documentId }],
    ['citation chunkId empty', (e) => { e.citations[0].chunkId = '' }],
    ['citation title missing', (e) => { delete e.citations[0].title }],
    ['citation sourceUrl not http', (e) => { e.citations[0].sourceUrl = 'javascript:alert(1)' }],
    ['citation extra member', (e) => { e.citations[0].score = 0.9 }]
  ]
  for (const [name, mutate] of cases) {
    const envelope = clone(FULL)
    mutate(envelope)
    t.notOk(validateEnvelope(envelope), name)
  }
  t.notOk(validateEnvelope(null), 'null')
  t.notOk(validateEnvelope([]), 'array')
  t.notOk(validateEnvelope('agent'), 'string')
})

t.test('normalizeEnvelope fills defaults and keeps valid drafts', async (t) => {
  t.same(normalizeEnvelope(undefined), { envelope: { author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } } })
  t.same(normalizeEnvelope(null).envelope.answerCoverage, NOT_RECORDED)
  t.same(normalizeEnvelope({}), normalizeEnvelope(undefined), 'an empty draft is not_recorded too')
  t.same(normalizeEnvelope(SPEC_EXAMPLE), { envelope: SPEC_EXAMPLE })
  t.same(normalizeEnvelope(FULL), { envelope: FULL })
  t.same(normalizeEnvelope({ citations: [] }).envelope, { author: 'agent', answerCoverage: NOT_RECORDED, ownership: DEFAULT_OWNERSHIP, citations: [] })
  t.ok(validateEnvelope(FAILED_ENVELOPE))
  t.ok(Object.isFrozen(FAILED_ENVELOPE) && Object.isFrozen(NOT_RECORDED) && Object.isFrozen(DEFAULT_OWNERSHIP))
})

t.test('normalizeEnvelope drops invalid members and says invalid', async (t) => {
  const badCitations = normalizeEnvelope({ ...FULL, citations: [{ documentId: 'd' }] })
  t.same(badCitations.invalid?.members, ['citations'])
  t.same(badCitations.envelope.answerCoverage, { availability: 'invalid', originatingTurnId: 't1', originatingRequestId: 'r1' },
    'the verdict goes, the well-formed ids stay')
  t.same(Object.keys(badCitations.envelope), ['author', 'answerCoverage', 'ownership', 'routine', 'invocation'], 'wire order, citations gone')
  t.ok(validateEnvelope(badCitations.envelope))

  const badCoverage = normalizeEnvelope({ ...SPEC_EXAMPLE, answerCoverage: { availability: 'assessed', coverage: 'lots', reason: 'sufficient_evidence', originatingTurnId: 't' } })
  t.same(badCoverage.invalid?.members, ['answerCoverage'])
  t.same(badCoverage.envelope.answerCoverage, { availability: 'invalid' }, 'nothing kept from a failing answerCoverage')
  t.same(badCoverage.envelope.citations, SPEC_EXAMPLE.citations, 'valid members kept')
  t.ok(validateEnvelope(badCoverage.envelope))

  const several = normalizeEnvelope({ author: 'bot', ownership: { state: 'x' }, routine: 1, invocation: null, citations: 'none', answerCoverage: NOT_RECORDED })
  t.same(several.invalid?.members, ['author', 'citations', 'invocation', 'ownership', 'routine'])
  t.same(several.envelope, { answerCoverage: { availability: 'invalid' } })
  t.ok(validateEnvelope(several.envelope))

  const unknownMember = normalizeEnvelope({ ...SPEC_EXAMPLE, secret: 'do not log me' })
  t.same(unknownMember.invalid?.members, ['secret'])
  t.same(unknownMember.envelope.citations, SPEC_EXAMPLE.citations)
  t.same(unknownMember.envelope.answerCoverage, { availability: 'invalid', originatingTurnId: 'c3…', originatingRequestId: 'c3…' })
  t.same(unknownMember.invalid?.errors, ['/secret is not an envelope member'])
  t.ok(validateEnvelope(unknownMember.envelope))

  const emptyIds = normalizeEnvelope({ ...FULL, citations: [{ ...FULL.citations[0], chunkId: '' }], routine: { ...FULL.routine, name: '' } })
  t.same(emptyIds.invalid?.members, ['citations', 'routine'])
  t.same(emptyIds.invalid?.errors, ['/routine/name must not be empty', '/citations/0/chunkId must not be empty'],
    'an empty identifier says so (not ajv\'s "must NOT be valid")')
  const verdictWithoutAssessment = normalizeEnvelope({ answerCoverage: { availability: 'failed', coverage: 'answered' } })
  t.same(verdictWithoutAssessment.invalid?.errors, ['/answerCoverage must NOT be valid', '/answerCoverage must match "else" schema'],
    'the else branch\'s `not` keeps ajv\'s message')

  for (const draft of ['agent', 42, true, [SPEC_EXAMPLE]]) {
    const result = normalizeEnvelope(draft)
    t.same(result.envelope, { author: 'agent', answerCoverage: { availability: 'invalid' }, ownership: DEFAULT_OWNERSHIP }, JSON.stringify(draft))
    t.same(result.invalid, { members: ['(root)'], errors: ['envelope must be an object'] })
  }
})

t.test('normalizeEnvelope errors name paths, never values', async (t) => {
  const secret = 'SECRET-VALUE-123'
  const result = normalizeEnvelope({ author: secret, citations: [{ documentId: secret, chunkId: 'c', title: 't', sourceUrl: secret }] })
  t.ok(result.invalid)
  const text = JSON.stringify(result.invalid)
  t.notMatch(text, secret)
  t.match(result.invalid?.errors, ['/author must be equal to one of the allowed values'])
})

t.test('normalizeEnvelope does not reuse a previous call\'s errors', async (t) => {
  // A failing draft leaves errors on the shared validate function; a later draft with only an unknown member
  // must not lose its valid citations because of them.
  normalizeEnvelope({ ...SPEC_EXAMPLE, citations: [{}] })
  const result = normalizeEnvelope({ ...SPEC_EXAMPLE, extra: 1 })
  t.same(result.invalid?.members, ['extra'])
  t.same(result.envelope.citations, SPEC_EXAMPLE.citations)
  t.same(result.invalid?.errors, ['/extra is not an envelope member'])
})
