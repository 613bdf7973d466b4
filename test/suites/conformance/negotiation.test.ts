/**
 * Conformance, both doors: A2A-Extensions negotiation edges (what activates, what echoes) at the A2A endpoint
 * and on a JSON-RPC route the user wrote, and every object kind of every method decorated on that route —
 * with no trace of the extension when a request did not activate it.
 */
import t from 'tap'
import { staticEnvelopeProvider } from 'a2a-converse'
import type { WireMessage, WireTask } from '../../../packages/a2a-converse/src/core/wire.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, serveDoor, URI, userMessage } from '../../fixtures/doors.js'

const OTHER = 'https://example.com/ext/other/v1'
const FULL = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', originatingTurnId: 't1' },
  ownership: { state: 'ai_owned', suppressed: false }
} as const

function agentMessage (id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_AGENT', parts: [{ text: `agent ${id}` }], ...extra }
}
function fullTask (id: string): WireTask {
  return {
    id,
    contextId: 'ctx',
    status: { state: 'TASK_STATE_COMPLETED', message: agentMessage(`${id}-status`) },
    artifacts: [{ artifactId: `${id}-a1`, parts: [{ text: 'x' }] }, { artifactId: `${id}-a2`, parts: [{ text: 'y' }], extensions: [OTHER], metadata: { [OTHER]: { z: 1 } } }],
    history: [{ messageId: `${id}-u1`, role: 'ROLE_USER', parts: [{ text: 'q' }], metadata: { [URI]: { author: 'human' } }, extensions: [URI] }, agentMessage(`${id}-h1`)]
  }
}
const envelopeOf = (object: any) => object?.metadata?.[URI]

const ACTIVATING: Array<[string, string | string[]]> = [
  ['exact', URI],
  ['whitespace', `  ${URI}\t`],
  ['empty items', `,, ,${URI},`],
  ['duplicates', `${URI}, ${URI}`],
  ['several header lines', ['https://example.com/nope', URI]],
  ['several lines with empties', ['', ` , ${URI}`]],
  ['1000 items, the URI first', [URI, ...Array.from({ length: 1000 }, (_, i) => `urn:junk:${i}`)].join(',')]
]
const NOT_ACTIVATING: Array<[string, string | string[]]> = [
  ['trailing slash', `${URI}/`],
  ['other case', URI.toUpperCase()],
  ['v2', URI.replace(/v1$/, 'v2')],
  ['no version', URI.replace(/\/v1$/, '')],
  ['no version, trailing slash', URI.replace(/v1$/, '')],
  ['all near misses at once (no fallback)', [`${URI}/`, URI.replace(/v1$/, 'v2'), URI.replace(/\/v1$/, '')]],
  ['empty header', ''],
  ['commas only', ' , ,'],
  ['8 KB of junk', Array.from({ length: 8192 }, (_, i) => String.fromCharCode(33 + (i * 7919) % 94)).join('')]
]

for (const name of DOORS) {
  t.test(`${name}: negotiation edges at the endpoint and on the user's route`, async (t) => {
    const door = await serveDoor(t, name, {
      agents: [
        { id: 'demo', card: { name: 'Demo', description: 'd', capabilities: { extensions: [{ uri: OTHER }] } }, executor: messageExecutor() },
        { id: 'second', card: { name: 'Second', description: 'd' }, executor: messageExecutor() }
      ],
      provider: staticEnvelopeProvider(FULL),
      userRoute: { SendMessage: { message: agentMessage('m') } }
    })
    for (const path of ['/a2a/demo', '/rpc/demo']) {
      for (const [what, header] of ACTIVATING) {
        const reply = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': header }, path })
        t.equal(reply.headers.get('a2a-extensions'), URI, `${path} ${what}: the echo lists the URI once`)
        t.strictSame(envelopeOf(reply.json.result.message), FULL, `${path} ${what}: decorated`)
      }
      for (const [what, header] of NOT_ACTIVATING) {
        const reply = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': header }, path })
        t.equal(reply.status, 200)
        t.equal(reply.headers.get('a2a-extensions'), null, `${path} ${what}: no echo`)
        t.notMatch(reply.text, URI, `${path} ${what}: no trace`)
      }
      const both = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': `urn:unknown, ${OTHER}, ${URI}` }, path })
      t.equal(both.headers.get('a2a-extensions'), `${OTHER}, ${URI}`, `${path}: the echo lists every activated extension`)
      const otherOnly = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': OTHER }, path })
      t.equal(otherOnly.headers.get('a2a-extensions'), OTHER)
      t.notMatch(otherOnly.text, URI)
    }
    const undeclared = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': OTHER }, path: '/rpc/second' })
    t.equal(undeclared.headers.get('a2a-extensions'), null, 'an extension this agent does not declare is not activated')
    const ghost = await call(door, 'SendMessage', { message: userMessage('x') }, { active: true, path: '/rpc/ghost' })
    t.equal(ghost.headers.get('a2a-extensions'), null, 'an unknown agent on the user route activates nothing')
    t.notMatch(ghost.text, URI)
  })

  t.test(`${name}: the user's route: every object kind of every method decorated, or stripped`, async (t) => {
    const task = fullTask('t1')
    const door = await serveDoor(t, name, {
      agents: [{ id: 'demo', card: { name: 'Demo', description: 'd', capabilities: { extensions: [{ uri: OTHER }] } } }],
      provider: staticEnvelopeProvider(FULL),
      userRoute: {
        SendMessage: { message: agentMessage('m', { extensions: [OTHER], metadata: { [OTHER]: { keep: true }, trace: 'x' } }) },
        GetTask: task,
        CancelTask: task,
        ListTasks: { tasks: [task, fullTask('t2')], nextPageToken: '', pageSize: 2, totalSize: 2 },
        SendStreamingMessage: { task },
        GetExtendedAgentCard: { name: 'not touched', metadata: { [URI]: 'x' } }
      }
    })
    const path = '/rpc/demo'
    const message = (await call(door, 'SendMessage', {}, { active: true, path })).json.result.message
    t.strictSame(envelopeOf(message), FULL)
    t.strictSame(message.extensions, [OTHER, URI], 'other extensions kept, ours once')
    t.equal(message.metadata.trace, 'x')
    for (const method of ['GetTask', 'CancelTask']) {
      const result = (await call(door, method, {}, { active: true, path })).json.result
      for (const object of [result.status.message, ...result.artifacts, result.history[1]]) {
        t.strictSame(envelopeOf(object), FULL, `${method}: agent object decorated`)
      }
      t.strictSame(result.artifacts[1].metadata[OTHER], { z: 1 })
      t.strictSame(result.history[0], task.history?.[0], `${method}: a user message is left as it is`)
    }
    const list = (await call(door, 'ListTasks', {}, { active: true, path })).json.result
    t.ok(list.tasks.length > 0, 'ListTasks lists tasks to look at')
    t.ok(list.tasks.every((listed: any) => envelopeOf(listed.status.message) !== undefined && envelopeOf(listed.artifacts[0]) !== undefined))
    t.strictSame(envelopeOf((await call(door, 'SendStreamingMessage', {}, { active: true, path })).json.result.task.artifacts[0]), FULL)
    t.strictSame((await call(door, 'GetExtendedAgentCard', {}, { active: true, path })).json.result, { name: 'not touched', metadata: { [URI]: 'x' } },
      'a method that carries no envelopes is left alone')
    for (const method of ['SendMessage', 'GetTask', 'ListTasks']) {
      const plain = await call(door, method, {}, { path })
      t.notMatch(plain.text.replace(JSON.stringify(task.history?.[0]), ''), URI, `${method} not activated: no trace but the user's own message`)
    }
  })
}
