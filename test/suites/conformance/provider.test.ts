/**
 * Conformance, both doors: the envelope provider's failure modes (throws, rejects, times out, answers something
 * invalid) never fail a reply; they degrade the envelope as the spec says, log one warning without message
 * content, and every emitted envelope passes the schema — at the endpoint, JSON and SSE, and on a user's route.
 */
import t from 'tap'
import { staticEnvelopeProvider, validateEnvelope, type EnvelopeProvider } from 'a2a-converse'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, serveDoor, URI, userMessage } from '../../fixtures/doors.js'

const SECRET = 'SECRET-USER-TEXT'
const FULL = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', originatingTurnId: 't1' },
  ownership: { state: 'ai_owned', suppressed: false }
} as const
const FAILED = { answerCoverage: { availability: 'failed' } }
const cases: Array<[string, EnvelopeProvider, number | undefined, unknown, number]> = [
  ['throws', { envelope () { throw new Error(`boom ${SECRET}`) } }, undefined, FAILED, 1],
  ['rejects', { envelope: async () => { throw new Error(SECRET) } }, undefined, FAILED, 1],
  ['times out', { envelope: () => new Promise((resolve) => setTimeout(resolve, 500, FULL).unref()) }, 20, FAILED, 1],
  ['schema-invalid', staticEnvelopeProvider({ ...FULL, author: SECRET } as never), undefined,
    { answerCoverage: { availability: 'invalid', originatingTurnId: 't1' }, ownership: FULL.ownership }, 1],
  ['undefined', { envelope: () => undefined }, undefined,
    { author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } }, 0]
]

for (const name of DOORS) {
  for (const [what, provider, providerTimeoutMs, expected, warnings] of cases) {
    t.test(`${name}: a provider that ${what}`, async (t) => {
      const door = await serveDoor(t, name, {
        agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' }, executor: messageExecutor() }],
        provider,
        providerTimeoutMs,
        userRoute: { SendMessage: { message: { messageId: 'u', role: 'ROLE_AGENT', parts: [{ text: `reply ${SECRET}` }] } } }
      })
      const params = { message: userMessage(SECRET) }
      const json = await call(door, 'SendMessage', params, { active: true })
      const sse = await call(door, 'SendStreamingMessage', params, { active: true })
      const user = await call(door, 'SendMessage', params, { active: true, path: '/rpc/demo' })
      const messages = [json.json.result.message, JSON.parse(sse.text.slice(6)).result.message, user.json.result.message]
      for (const [index, message] of messages.entries()) {
        t.equal(message.role, 'ROLE_AGENT', `reply ${index} delivered`)
        t.strictSame(message.metadata[URI], expected, `reply ${index}: the degraded envelope`)
        t.ok(validateEnvelope(message.metadata[URI]), 'the emitted envelope passes the schema')
      }
      t.equal(door.logs.filter((line) => line.level === 40).length, 3 * warnings, `${warnings} warning(s) per reply`)
      t.notMatch(JSON.stringify(door.logs), SECRET, 'no message content in the logs')
    })
  }
}
