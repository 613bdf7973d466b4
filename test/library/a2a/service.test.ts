/** The A2A service on its own: a backend the test writes, requests as a door would hand them over. */
import t from 'tap'
import type { A2ABackend } from '../../../packages/a2a-converse/src/protocol/backend.js'
import { createBoundA2AService as createA2AService } from '../../../packages/a2a-converse/src/bindings/index.js'
import { type A2AServiceRequest, type JsonReply } from '../../../packages/a2a-converse/src/bindings/jsonrpc/binding.js'
import { createConverseExtension, normalizeMountPath } from '../../../packages/a2a-converse/src/core/converse-extension.js'
import { staticEnvelopeProvider } from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { CONVERSE_EXTENSION_URI } from '../../../packages/a2a-converse/src/core/uri.js'

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

/** A streaming backend whose stream the test writes. */
function streamingBackend (stream: A2ABackend['stream']): A2ABackend {
  return { ...backend(async () => reply), facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] }, stream }
}

async function drain (events: AsyncIterable<unknown>): Promise<unknown[]> {
  const items: unknown[] = []
  for await (const item of events) items.push(item)
  return items
}

const streamCall = (signal: AbortSignal = new AbortController().signal) => ({
  agentId: 'demo', method: 'SendStreamingMessage', params: send.params, headers: { 'a2a-version': '1.0' }, signal
})

t.test('call: the binding-neutral entry', async (t) => {
  const service = createA2AService({ extension, backends: new Map([['demo', backend(async () => reply)]]) })
  t.match(await service.call({ agentId: 'nope', method: 'GetTask', params: {}, headers: {}, signal: new AbortController().signal }),
    { kind: 'error', status: 404, error: { code: -32000, message: 'unknown agent "nope"', data: [{ reason: 'AGENT_NOT_FOUND' }] } })
  t.match(await service.call({ agentId: 'demo', method: 'SendMessage', params: send.params, headers: { 'a2a-version': '1.0' }, signal: new AbortController().signal }),
    { kind: 'value', method: 'SendMessage', headers: {}, value: { message: { messageId: 'a1' } } })
  t.match(await service.call({ agentId: 'demo', method: 'SendMessage', params: send.params, headers: { 'a2a-version': '1.0' }, rejected: { status: 415, error: { code: -32005, message: 'x' } }, signal: new AbortController().signal }),
    { kind: 'error', status: 415, error: { code: -32005 } }, 'a binding\'s wire error, answered by the service')
})

t.test('streams open on their first event', async (t) => {
  const empty = createA2AService({ extension, backends: new Map([['demo', streamingBackend(() => ({ next: async () => ({ done: true, value: undefined }) }))]]) })
  const ended = await empty.call(streamCall())
  t.equal(ended.kind, 'stream')
  t.strictSame(await drain((ended as { events: AsyncIterable<unknown> }).events), [], 'a backend with nothing to send: an empty stream')

  let returned = 0
  const quiet = createA2AService({
    extension,
    backends: new Map([['demo', streamingBackend(() => ({ next: async () => await new Promise<never>(() => {}), return: async () => { returned++; return { done: true, value: undefined } } }))]])
  })
  const controller = new AbortController()
  const opening = quiet.call(streamCall(controller.signal))
  controller.abort()
  const left = await opening
  t.strictSame(await drain((left as { events: AsyncIterable<unknown> }).events), [], 'the client left before the first event: nothing')
  t.equal(returned, 1, 'the backend\'s stream is told to stop')
  const gone = new AbortController()
  gone.abort()
  t.strictSame(await drain(((await quiet.call(streamCall(gone.signal))) as { events: AsyncIterable<unknown> }).events), [], 'aborted before it was asked')

  const failing = createA2AService({ extension, backends: new Map([['demo', streamingBackend(() => ({ next: async () => { throw new Error('no such task') } }))]]) })
  t.match(await failing.call(streamCall()), { kind: 'error', error: { code: -32603, message: 'no such task' } }, 'an error before the first event: a plain result')
})

t.test('a stream event no serializer takes ends the stream with an internal error, on both bindings', async (t) => {
  const log = recordingLog()
  const service = createA2AService({
    extension,
    backends: new Map([['demo', streamingBackend(() => {
      let sent = 0
      return { next: async () => sent++ === 0 ? { done: false, value: { message: { messageId: 'a', big: 1n } } } : await new Promise<never>(() => {}) }
    })]])
  })
  const rpc = await service.handle(request({ body: { kind: 'json', value: { ...send, method: 'SendStreamingMessage' } }, log: log.log, headers: { 'a2a-version': '1.0' } }))
  t.match(await drain((rpc as { frames: AsyncIterable<string> }).frames), [/^event: error\ndata: .*-32603/])
  const rest = await service.handleHttpJson({
    agentId: 'demo',
    httpMethod: 'POST',
    path: '/message:stream',
    headers: { 'a2a-version': '1.0' },
    query: {},
    body: { kind: 'json', value: send.params },
    signal: new AbortController().signal,
    log: log.log
  })
  t.match(await drain((rest as { frames: AsyncIterable<string> }).frames), [/^event: error\ndata: \{"error":\{"code":500,"status":"INTERNAL"/])
  t.equal(log.lines.filter((line) => line.message === 'A2A stream event cannot be serialized').length, 2)
})

t.test('HTTP+JSON: an error after the first event is an error frame with the binding\'s body', async (t) => {
  const service = createA2AService({
    extension,
    backends: new Map([['demo', streamingBackend(() => {
      let sent = 0
      return { next: async () => { if (sent++ === 0) return { done: false, value: { task: { id: 't' } } }; throw new Error('later') } }
    })]])
  })
  const rest = await service.handleHttpJson({
    agentId: 'demo', httpMethod: 'GET', path: '/tasks/t:subscribe', headers: { 'a2a-version': '1.0' }, query: {}, body: { kind: 'absent' }, signal: new AbortController().signal
  })
  t.strictSame(await drain((rest as { frames: AsyncIterable<string> }).frames), [
    'data: {"task":{"id":"t"}}\n\n',
    'event: error\ndata: {"error":{"code":500,"status":"INTERNAL","message":"later","details":[]}}\n\n'
  ])
})

t.test('HTTP+JSON: a path that cannot be decoded is 400 naming the path', async (t) => {
  const service = createA2AService({ extension, backends: new Map([['demo', backend(async () => reply)]]) })
  const answer = await service.handleHttpJson({
    agentId: 'demo', httpMethod: 'GET', path: '/tasks/%E0%A4%A', headers: { 'a2a-version': '1.0' }, query: {}, body: { kind: 'absent' }, signal: new AbortController().signal
  })
  t.match(answer, { kind: 'json', status: 400, body: { error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ fieldViolations: [{ field: 'path' }] }] } } })
})

t.test('JSON-RPC: an envelope member outside params nested too deep is -32600, after authentication', async (t) => {
  const service = createA2AService({ extension, backends: new Map([['demo', backend(async () => reply)]]) })
  let deep: unknown = 'x'
  for (let i = 0; i < 100; i++) deep = { a: deep }
  const answer = await service.handle(request({ body: { kind: 'json', value: { ...send, extra: deep } } })) as JsonReply
  t.match(answer, { status: 200, body: { id: 3, error: { code: -32600, data: [{ fieldViolations: [{ field: /^extra\.a\.a/ }] }] } } })
})
