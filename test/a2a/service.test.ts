/** The A2A service on its own: a backend the test writes, requests as a door would hand them over. */
import t from 'tap'
import type { A2ABackend } from '../../src/a2a/backend.js'
import { createBoundA2AService as createA2AService } from '../../src/bindings/index.js'
import { type A2AServiceRequest, type JsonReply } from '../../src/bindings/jsonrpc/binding.js'
import { createConverseExtension, normalizeMountPath } from '../../src/core/converse-extension.js'
import { staticEnvelopeProvider } from '../../src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI } from '../../src/core/uri.js'

const ENVELOPE = Object.freeze({ author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } })
const extension = createConverseExtension({
  agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }, { id: 'other', card: { name: 'Other', description: 'o' } }],
  provider: staticEnvelopeProvider(ENVELOPE as never)
})

function backend (call: A2ABackend['call']): A2ABackend {
  return {
    facts: { capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call,
    stream: () => { throw new Error('no streams here') },
    toError: (error) => ({ code: -32603, message: (error as Error).message })
  }
}

const reply = { message: { messageId: 'a1', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } }
const send = { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message: { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'q' }] } } }

function request (extra: Partial<A2AServiceRequest> = {}): A2AServiceRequest {
  return {
    agentId: 'demo',
    headers: { 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI },
    body: { kind: 'json', value: send },
    signal: new AbortController().signal,
    ...extra
  }
}

function recordingLog () {
  const lines: Array<{ level: string, object: object, message: string }> = []
  const at = (level: string) => (object: object, message: string) => { lines.push({ level, object, message }) }
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } }
}

t.test('backends must serve declared agents', async (t) => {
  t.throws(() => createA2AService({ extension, backends: new Map([['ghost', backend(async () => reply)]]) }),
    { name: 'InvalidOptionError', message: 'option "backends" "ghost" is not an agent declared to the extension' })
})

t.test('maxStreamsPerCaller: checked; a slot comes back when the request aborts, even if its frames were never read', async (t) => {
  for (const value of [-1, 0.5, Number.NaN]) {
    t.throws(() => createA2AService({ extension, backends: new Map(), maxStreamsPerCaller: value }),
      { name: 'InvalidOptionError', message: /maxStreamsPerCaller/ })
  }
  const streaming: A2ABackend = {
    ...backend(async () => reply),
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    // One event (a stream opens with its first event), then quiet.
    stream: () => {
      let sent = false
      return {
        next: async () => {
          if (sent) return await new Promise<IteratorResult<unknown, void>>(() => {})
          sent = true
          return { done: false, value: { task: { id: 't' } } }
        }
      }
    }
  }
  const service = createA2AService({ extension, backends: new Map([['demo', streaming]]), maxStreamsPerCaller: 1 })
  const open = (signal: AbortSignal) => service.handle(request({ signal, body: { kind: 'json', value: { ...send, method: 'SendStreamingMessage' } } }))
  const first = new AbortController()
  t.equal((await open(first.signal)).kind, 'stream', 'a walk-in without an address is counted under one key')
  const refused = await open(new AbortController().signal) as JsonReply
  t.same([refused.status, refused.headers['retry-after']], [429, '5'])
  first.abort()
  t.equal((await open(new AbortController().signal)).kind, 'stream', 'the aborted request gave its slot back')
})

t.test('unknown agent, body errors, checks, results and errors', async (t) => {
  const service = createA2AService({
    extension,
    backends: new Map([['demo', backend(async (rpc) => {
      if ((rpc.params.message as { messageId: string }).messageId === 'boom') throw new Error('backend failed')
      return reply
    })]])
  })
  t.ok(service.serves('demo'))
  t.notOk(service.serves('other'), 'declared, but no backend here')
  t.strictSame(await service.handle(request({ agentId: 'other' })),
    { kind: 'json', status: 404, headers: {}, body: { statusCode: 404, error: 'Not Found', message: 'unknown agent "other"' } })

  const echo = { 'A2A-Extensions': CONVERSE_EXTENSION_URI }
  const cases: Array<[A2AServiceRequest['body'], number, number]> = [
    [{ kind: 'absent' }, 400, -32700],
    [{ kind: 'invalid_json' }, 400, -32700],
    [{ kind: 'too_large', limit: 10 }, 413, -32600],
    [{ kind: 'unsupported_media_type', contentType: 'text/plain' }, 415, -32005],
    [{ kind: 'json', value: null }, 200, -32600],
    [{ kind: 'json', value: { jsonrpc: '2.0', id: 1, method: 'Nope' } }, 200, -32601]
  ]
  for (const [body, status, code] of cases) {
    const { lines, log } = recordingLog()
    const answer = await service.handle(request({ body, log })) as JsonReply
    t.equal(answer.status, status, `${body.kind} → HTTP ${status}`)
    t.strictSame(answer.headers, echo, 'the echo header on error replies too')
    t.equal((answer.body as { error: { code: number } }).error.code, code)
    t.equal(lines.length, 1, 'an error reply is logged once')
    t.equal(lines[0].level, 'info')
    t.strictSame(Object.keys(lines[0].object), ['method', 'code'], 'method and code, never the message text')
  }
  const tooLarge = await service.handle(request({ body: { kind: 'too_large', limit: 10 } })) as JsonReply
  t.match(tooLarge.body, { error: { message: 'Request payload too large', data: [{ fieldViolations: [{ field: 'request', description: 'must not exceed 10 bytes' }] }] } })

  const ok = await service.handle(request()) as JsonReply
  t.strictSame(ok.body, { jsonrpc: '2.0', id: 3, result: { message: { ...reply.message, metadata: { [CONVERSE_EXTENSION_URI]: ENVELOPE }, extensions: [CONVERSE_EXTENSION_URI] } } })
  const plain = await service.handle(request({ headers: { 'a2a-version': '1.0' } })) as JsonReply
  t.strictSame(plain, { kind: 'json', status: 200, headers: {}, body: { jsonrpc: '2.0', id: 3, result: reply } }, 'not activated: no envelope, no echo')
  const viaQuery = await service.handle(request({ headers: {}, query: { 'A2A-Version': '1.0' } })) as JsonReply
  t.match(viaQuery.body, { result: reply }, 'A2A-Version from the query string')

  const { lines, log } = recordingLog()
  const failed = await service.handle(request({ log, body: { kind: 'json', value: { ...send, params: { message: { ...send.params.message, messageId: 'boom' } } } } })) as JsonReply
  t.strictSame(failed.body, { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'backend failed' } })
  t.strictSame(lines.map((line) => line.object), [{ method: 'SendMessage', code: -32603 }])
})

t.test('mount paths', async (t) => {
  t.equal(normalizeMountPath('prefix', undefined), '')
  t.equal(normalizeMountPath('prefix', '/'), '')
  t.equal(normalizeMountPath('prefix', '/v1/'), '/v1')
  t.equal(normalizeMountPath('prefix', '/api/v1'), '/api/v1')
  t.throws(() => normalizeMountPath('prefix', 1), { message: 'option "prefix" must be a path string such as "/v1"' })
  t.throws(() => normalizeMountPath('prefix', 'v1'), { message: 'option "prefix" must be a path such as "/v1" (segments, no query)' })
  t.throws(() => normalizeMountPath('prefix', '/v1?x=1'), { message: 'option "prefix" must be a path such as "/v1" (segments, no query)' })
})
