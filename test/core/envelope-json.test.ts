import t from 'tap'
import { createEnvelopeDecorator } from '../../src/core/decorate.js'
import { hasKnownJson, rememberEnvelopeJson, stringifyWithKnownEnvelopes } from '../../src/core/envelope-json.js'
import { functionEnvelopeProvider, staticEnvelopeProvider } from '../../src/core/envelope-provider.js'
import type { ConverseEnvelope, EnvelopeDraft } from '../../src/core/envelope.js'
import { FAILED_ENVELOPE } from '../../src/core/normalize-envelope.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../src/core/uri.js'
import type { Metadata, WireMessage, WireTask } from '../../src/core/wire.js'
import { deepFreeze } from '../../src/core/deep-freeze.js'

const FULL: EnvelopeDraft = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', originatingTurnId: 't1', originatingRequestId: 'r1' },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [
    { documentId: 'd1', chunkId: 'c1', title: 'Rückgabe "30 Tage" \\ \u2028 \n', sourceUrl: 'https://example.com/returns' },
    { documentId: 'd2', chunkId: 'c2', title: 'Shipping' }
  ]
}

function known (draft: EnvelopeDraft): ConverseEnvelope {
  return rememberEnvelopeJson(deepFreeze(structuredClone(draft)) as ConverseEnvelope)
}

function agentMessage (id: string, envelope?: ConverseEnvelope): WireMessage {
  return {
    messageId: id,
    role: 'ROLE_AGENT',
    parts: [{ text: `agent ${id}` }],
    ...(envelope === undefined ? {} : { metadata: { other: 1, [URI]: envelope }, extensions: [URI] })
  }
}

/** A reply with envelopes in several places; `holders` are their metadata objects in an order unlike the text's. */
function reply (envelopes: ConverseEnvelope[]) {
  const [a, b, c] = envelopes.map((envelope, index) => agentMessage(`m${index}`, envelope))
  const task: WireTask = {
    id: 'task',
    status: { state: 'TASK_STATE_COMPLETED', message: a },
    history: [{ messageId: 'u', role: 'ROLE_USER', parts: [{ text: '\u0000 not a placeholder' }] }, b, c]
  }
  const value = { jsonrpc: '2.0', id: 7, result: { task } }
  return { value, holders: [c.metadata, a.metadata, b.metadata] as Metadata[] }
}

t.test('the text is exactly what JSON.stringify gives, and the holders are restored', async (t) => {
  const envelopes = [known(FULL), known({ ...FULL, author: 'human' }), FAILED_ENVELOPE]
  const { value, holders } = reply(envelopes)
  const expected = JSON.stringify(value)
  t.equal(stringifyWithKnownEnvelopes(value, holders, JSON.stringify), expected)
  t.equal(holders[0][URI], envelopes[2])
  t.equal(holders[1][URI], envelopes[0])
  t.equal(holders[2][URI], envelopes[1])
  t.equal(JSON.stringify(value), expected, 'the value is as it was')
  t.equal(stringifyWithKnownEnvelopes({ none: true }, [], JSON.stringify), '{"none":true}', 'no holders: plain text')
})

t.test('only envelopes that were remembered have known JSON', async (t) => {
  t.ok(hasKnownJson(known(FULL)))
  t.notOk(hasKnownJson(structuredClone(FULL)), 'a fresh object')
  t.notOk(hasKnownJson(deepFreeze(structuredClone(FULL))), 'frozen but never remembered')
  t.notOk(hasKnownJson(null))
  t.notOk(hasKnownJson('envelope'))
  t.ok(hasKnownJson(FAILED_ENVELOPE), 'the degraded envelope is remembered when the decorator loads')
})

t.test('gives up (undefined) rather than guess, and restores the holders every time', async (t) => {
  const envelope = known(FULL)
  const cases: Array<[string, () => { value: unknown, holders: Metadata[], stringify?: (value: unknown) => unknown }]> = [
    ['a holder that is not in the value', () => ({ value: { x: 1 }, holders: [{ [URI]: envelope }] })],
    ['a holder present twice', () => {
      const message = agentMessage('m', envelope)
      return { value: [message, message], holders: [message.metadata as Metadata] }
    }],
    ['an envelope without known JSON', () => {
      const message = agentMessage('m', structuredClone(FULL) as ConverseEnvelope)
      return { value: message, holders: [message.metadata as Metadata] }
    }],
    ['a serializer that throws', () => {
      const message = agentMessage('m', envelope)
      return { value: message, holders: [message.metadata as Metadata], stringify: () => { throw new Error('boom') } }
    }],
    ['a serializer that answers bytes', () => {
      const message = agentMessage('m', envelope)
      return { value: message, holders: [message.metadata as Metadata], stringify: (value) => Buffer.from(JSON.stringify(value)) }
    }],
    ['a serializer that drops the placeholder', () => {
      const message = agentMessage('m', envelope)
      return { value: message, holders: [message.metadata as Metadata], stringify: () => '{}' }
    }]
  ]
  for (const [name, make] of cases) {
    const { value, holders, stringify = JSON.stringify } = make()
    const before = holders.map((holder) => holder[URI])
    t.equal(stringifyWithKnownEnvelopes(value, holders, stringify), undefined, name)
    t.same(holders.map((holder) => holder[URI]), before, `${name}: holders restored`)
  }

  const first = agentMessage('first', envelope)
  const frozen = agentMessage('frozen', envelope)
  Object.freeze(frozen.metadata)
  const holders = [first.metadata, frozen.metadata] as Metadata[]
  t.equal(stringifyWithKnownEnvelopes([first, frozen], holders, JSON.stringify), undefined, 'a holder that cannot be written')
  t.equal(first.metadata?.[URI], envelope, 'the holders written before it are restored')
})

t.test('a client cannot forge a placeholder', async (t) => {
  const envelope = known(FULL)
  const message = agentMessage('m', envelope)
  // Placeholder-like strings a client might send: U+0000 followed by anything it can know.
  const forged = ['\u0000', '\u00000', '\u0000:0', `\u0000${URI}:0`, '\\u00000']
  const value = { result: { message }, echoes: forged }
  t.equal(stringifyWithKnownEnvelopes(value, [message.metadata as Metadata], JSON.stringify), JSON.stringify(value))
})

t.test('the decorator collects the holders of envelopes with known JSON, sync and async', async (t) => {
  const frozenDraft = deepFreeze(structuredClone(FULL))
  const result = { message: agentMessage('m') }
  for (const provider of [staticEnvelopeProvider(FULL), functionEnvelopeProvider(() => frozenDraft), functionEnvelopeProvider(async () => frozenDraft)]) {
    const decorator = createEnvelopeDecorator({ provider, timeoutMs: 1000 })
    const holders: Metadata[] = []
    const decorated = await decorator.decorate('SendMessage', result, { agentId: 'a', activated: [URI], knownJsonHolders: holders }) as typeof result
    t.equal(holders.length, 1)
    t.equal(holders[0], decorated.message.metadata, 'the metadata object that received the envelope')
    t.ok(hasKnownJson(holders[0][URI]))
    t.equal(stringifyWithKnownEnvelopes(decorated, holders, JSON.stringify), JSON.stringify(decorated))
  }
  const fresh = createEnvelopeDecorator({ provider: functionEnvelopeProvider(() => structuredClone(FULL)), timeoutMs: 1000 })
  const holders: Metadata[] = []
  fresh.decorate('SendMessage', result, { agentId: 'a', activated: [URI], knownJsonHolders: holders })
  t.same(holders, [], 'an envelope built per call has no known JSON')
  const failing = createEnvelopeDecorator({ provider: functionEnvelopeProvider(() => { throw new Error('down') }), timeoutMs: 1000 })
  failing.decorate('SendMessage', result, { agentId: 'a', activated: [URI], knownJsonHolders: holders })
  t.equal(holders.length, 1, 'the degraded envelope has known JSON')
})
