import t, { type Test } from 'tap'
import {
  attachEnvelope, carriesEnvelopes, createEnvelopeDecorator, stripEnvelope, stripResult, type EnvelopeLogger
} from '../../../packages/a2a-converse/src/core/decorate.js'
import {
  attachedEnvelopeProvider, functionEnvelopeProvider, staticEnvelopeProvider, type EnvelopeContext, type EnvelopeProvider
} from '../../../packages/a2a-converse/src/core/envelope-provider.js'
import { validateEnvelope } from '../../../packages/a2a-converse/src/core/envelope-schema.js'
import type { EnvelopeDraft } from '../../../packages/a2a-converse/src/core/envelope.js'
import { ProviderTimeoutError } from '../../../packages/a2a-converse/src/core/errors.js'
import { CONVERSE_EXTENSION_URI as URI } from '../../../packages/a2a-converse/src/core/uri.js'
import type { WireArtifact, WireMessage, WireTask } from '../../../packages/a2a-converse/src/core/wire.js'

const OTHER = 'https://example.com/ext/other/v1'
const FULL: EnvelopeDraft = {
  author: 'agent',
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence', originatingTurnId: 't1', originatingRequestId: 'r1' },
  ownership: { state: 'ai_owned', suppressed: false },
  citations: [{ documentId: 'd1', chunkId: 'c1', title: 'Returns policy' }]
}

function agentMessage (id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_AGENT', parts: [{ text: `agent ${id}` }], ...extra }
}
function userMessage (id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { messageId: id, contextId: 'ctx', role: 'ROLE_USER', parts: [{ text: `user ${id}` }], ...extra }
}
function artifact (id: string, extra: Partial<WireArtifact> = {}): WireArtifact {
  return { artifactId: id, parts: [{ text: `artifact ${id}` }], ...extra }
}
function task (id: string, extra: Partial<WireTask> = {}): WireTask {
  return {
    id,
    contextId: 'ctx',
    status: { state: 'TASK_STATE_COMPLETED', message: agentMessage(`${id}-status`, { taskId: id }) },
    artifacts: [artifact(`${id}-a1`), artifact(`${id}-a2`)],
    history: [userMessage(`${id}-u1`), agentMessage(`${id}-h1`), userMessage(`${id}-u2`), agentMessage(`${id}-h2`)],
    ...extra
  }
}

/** A logger that records what it is given. */
function recorder () {
  const entries: Array<{ object: any, message: string }> = []
  const log: EnvelopeLogger = { warn (object, message) { entries.push({ object, message }) } }
  return { log, entries }
}

/** A provider that records each context and answers with FULL. */
function recordingProvider (answer: (context: EnvelopeContext) => any = () => FULL) {
  const calls: EnvelopeContext[] = []
  const provider: EnvelopeProvider = { envelope (context) { calls.push(context); return answer(context) } }
  return { provider, calls }
}

const turn = { agentId: 'demo', activated: [URI] }

function envelopeOf (object: { metadata?: Record<string, unknown> }) {
  return object.metadata?.[URI] as any
}

/** Every agent object of a decorated result has a valid envelope and the URI exactly once. */
function assertDecorated (t: Test, object: any, what: string) {
  t.ok(validateEnvelope(envelopeOf(object)), `${what}: envelope passes the schema`)
  t.equal(object.extensions.filter((uri: string) => uri === URI).length, 1, `${what}: URI listed once`)
}
function assertPlain (t: Test, object: any, what: string) {
  t.notOk(object.metadata && Object.hasOwn(object.metadata, URI), `${what}: no metadata[URI]`)
  t.notOk(object.extensions?.includes(URI), `${what}: URI not in extensions`)
}

t.test('carriesEnvelopes', async (t) => {
  for (const method of ['SendMessage', 'SendStreamingMessage', 'SubscribeToTask', 'GetTask', 'CancelTask', 'ListTasks']) {
    t.ok(carriesEnvelopes(method), method)
  }
  for (const method of ['GetExtendedAgentCard', 'CreateTaskPushNotificationConfig', 'toString', 'constructor', '__proto__', 1, undefined]) {
    t.notOk(carriesEnvelopes(method), String(method))
  }
})

t.test('attachEnvelope lists the URI once and keeps other metadata and extensions', async (t) => {
  const plain = attachEnvelope(agentMessage('m'), FULL as any)
  t.same(plain.extensions, [URI])
  t.same(plain.metadata, { [URI]: FULL })

  const original = agentMessage('m', { extensions: [OTHER, URI, URI], metadata: { [OTHER]: { x: 1 }, trace: 'abc', [URI]: { stale: true } } })
  const before = structuredClone(original)
  const decorated = attachEnvelope(original, FULL as any)
  t.same(decorated.extensions, [OTHER, URI], 'others kept, ours once')
  t.same(decorated.metadata, { [OTHER]: { x: 1 }, trace: 'abc', [URI]: FULL }, 'other keys kept, ours replaced')
  t.same(original, before, 'input not mutated')
})

t.test('attachEnvelope: null containers, and an own "__proto__" member stays data', async (t) => {
  const nulls = attachEnvelope(agentMessage('m', { metadata: null as any, extensions: null as any }), FULL as any)
  t.same(nulls.metadata, { [URI]: FULL })
  t.same(nulls.extensions, [URI])

  // JSON.parse makes "__proto__" an own data member; copying must neither call the setter nor drop it.
  const object = JSON.parse('{"messageId":"m","role":"ROLE_AGENT","parts":[],"__proto__":{"polluted":true},' +
    '"metadata":{"__proto__":{"polluted":true},"keep":1}}')
  const out = attachEnvelope(object, FULL as any) as any
  t.equal(Object.getPrototypeOf(out), Object.prototype, 'prototype unchanged')
  t.equal(Object.getPrototypeOf(out.metadata), Object.prototype, 'metadata prototype unchanged')
  t.equal(out.polluted, undefined)
  t.equal(out.metadata.polluted, undefined)
  t.ok(Object.hasOwn(out, '__proto__') && Object.hasOwn(out.metadata, '__proto__'), 'kept as own members')
  t.equal(out.metadata.keep, 1)
  t.same(out.metadata[URI], FULL)
  t.same(out.extensions, [URI])
  t.equal(({} as any).polluted, undefined, 'Object.prototype untouched')
})

t.test('stripEnvelope removes every trace and nothing else', async (t) => {
  const untouched = agentMessage('m', { extensions: [OTHER], metadata: { a: 1 } })
  t.equal(stripEnvelope(untouched), untouched, 'same object when nothing to strip')
  const bare = agentMessage('m')
  t.equal(stripEnvelope(bare), bare)
  t.equal(stripEnvelope(null as any), null)
  t.equal(stripEnvelope('x' as any), 'x')

  t.same(stripEnvelope(agentMessage('m', { extensions: [URI], metadata: { [URI]: FULL } })), agentMessage('m'), 'empty containers removed')
  t.same(stripEnvelope(agentMessage('m', { extensions: [OTHER, URI], metadata: { [URI]: FULL, a: 1 } })),
    agentMessage('m', { extensions: [OTHER], metadata: { a: 1 } }), 'others kept')
  t.same(stripEnvelope(agentMessage('m', { metadata: { [URI]: FULL } })), agentMessage('m'), 'metadata only')
  t.same(stripEnvelope(agentMessage('m', { extensions: [URI, OTHER] })), agentMessage('m', { extensions: [OTHER] }), 'extensions only')
  t.same(stripEnvelope(agentMessage('m', { extensions: [URI], metadata: null as any })), agentMessage('m', { metadata: null as any }), 'null metadata')
  const original = artifact('a', { extensions: [URI], metadata: { [URI]: FULL, keep: true } })
  const before = structuredClone(original)
  stripEnvelope(original)
  t.same(original, before, 'input not mutated')
})

t.test('stripResult strips every object kind of every method, user messages included', async (t) => {
  const dirty = { extensions: [URI, OTHER], metadata: { [URI]: FULL, keep: 1 } }
  const dirtyTask = (): WireTask => task('t', {
    status: { state: 'TASK_STATE_WORKING', message: agentMessage('s', dirty) },
    artifacts: [artifact('a', dirty), artifact('b')],
    history: [userMessage('u', dirty), agentMessage('h', dirty)]
  })
  const results: Array<[string, unknown]> = [
    ['SendMessage', { message: agentMessage('m', dirty) }],
    ['SendMessage', { task: dirtyTask() }],
    ['GetTask', dirtyTask()],
    ['CancelTask', dirtyTask()],
    ['ListTasks', { tasks: [dirtyTask(), task('clean'), dirtyTask()], nextPageToken: '' }],
    ['SendStreamingMessage', { task: dirtyTask() }],
    ['SendStreamingMessage', { message: agentMessage('m', dirty) }],
    ['SubscribeToTask', { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING', message: agentMessage('s', dirty) } } }],
    ['SubscribeToTask', { artifactUpdate: { taskId: 't', contextId: 'c', artifact: artifact('a', dirty), lastChunk: true } }]
  ]
  for (const [method, result] of results) {
    const before = structuredClone(result)
    const stripped = stripResult(method, result)
    const text = JSON.stringify(stripped)
    t.notMatch(text, URI, `${method}: no trace of the URI`)
    t.match(text, OTHER, `${method}: other extensions kept`)
    t.match(text, '"keep":1', `${method}: other metadata kept`)
    t.same(result, before, `${method}: input not mutated`)
  }
  const clean = { task: task('clean') }
  t.equal(stripResult('SendMessage', clean), clean, 'nothing to strip: same object')
  const list = { tasks: [task('a'), task('b')] }
  t.equal(stripResult('ListTasks', list), list)
  const card = { x: { extensions: [URI] } }
  t.equal(stripResult('GetExtendedAgentCard', card), card, 'other methods untouched')
})

t.test('walking tolerates odd results', async (t) => {
  for (const method of ['SendMessage', 'GetTask', 'ListTasks', 'SubscribeToTask']) {
    t.equal(stripResult(method, null), null)
    t.equal(stripResult(method, 'text'), 'text')
  }
  const noTasks = { nextPageToken: '' }
  t.equal(stripResult('ListTasks', noTasks), noTasks, 'ListTasks without tasks')
  const nullTasks = { tasks: [null] }
  t.equal(stripResult('ListTasks', nullTasks), nullTasks, 'a null task')
  const empty = {}
  t.equal(stripResult('SendMessage', empty), empty, 'a wrapper with no known key')
  const other = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }
  t.equal(stripResult('SubscribeToTask', other), other, 'a status update without message')
  const noStatus = { statusUpdate: { taskId: 't', contextId: 'c' } }
  t.equal(stripResult('SubscribeToTask', noStatus), noStatus, 'a status update without status')
  const noArtifact = { artifactUpdate: { taskId: 't', contextId: 'c' } }
  t.equal(stripResult('SubscribeToTask', noArtifact), noArtifact, 'an artifact update without artifact')
  const bareTask = { id: 't', status: { state: 'TASK_STATE_SUBMITTED' } }
  t.equal(stripResult('GetTask', bareTask), bareTask, 'a task without message, artifacts or history')
  const untouched = { id: 'x' }
  t.equal(stripResult('GetExtendedAgentCard', untouched), untouched, 'methods without envelopes')
})

t.test('decorateResult: SendMessage {message}', async (t) => {
  const { provider, calls } = recordingProvider()
  const decorator = createEnvelopeDecorator({ provider, timeoutMs: 1000 })
  const requestMessage = userMessage('req')
  const result = { message: agentMessage('m', { taskId: 'task-1', extensions: [OTHER], metadata: { [OTHER]: 1, trace: 'x' } }) }
  const before = structuredClone(result)
  const out = await decorator.decorateResult('SendMessage', result, { ...turn, activated: [OTHER, URI], requestMessage, requestId: 7 }) as any
  t.same(out.message.metadata, { [OTHER]: 1, trace: 'x', [URI]: FULL })
  t.same(out.message.extensions, [OTHER, URI])
  assertDecorated(t, out.message, 'message')
  t.same(result, before, 'input not mutated')
  t.equal(calls.length, 1)
  t.same(calls[0], {
    agentId: 'demo',
    contextId: 'ctx',
    taskId: 'task-1',
    requestMessage,
    requestId: 7,
    object: result.message,
    kind: 'message',
    activated: [OTHER, URI]
  }, 'the provider gets the turn context')

  const user = { message: userMessage('echo') }
  t.equal(await decorator.decorateResult('SendMessage', user, turn), user, 'a user message is left alone')
  t.equal(calls.length, 1, 'and the provider is not asked')
})

t.test('decorateResult: SendMessage {task} decorates status.message, artifacts and agent history only', async (t) => {
  const { provider, calls } = recordingProvider()
  const decorator = createEnvelopeDecorator({ provider, timeoutMs: 1000 })
  const input = task('t1', {
    history: [
      userMessage('u1', { metadata: { [URI]: { author: 'human' }, keep: 1 }, extensions: [URI] }),
      agentMessage('h1'),
      userMessage('u2')
    ]
  })
  const before = structuredClone(input)
  const out = await decorator.decorateResult('SendMessage', { task: input }, turn) as any
  assertDecorated(t, out.task.status.message, 'status.message')
  assertDecorated(t, out.task.artifacts[0], 'artifact 1')
  assertDecorated(t, out.task.artifacts[1], 'artifact 2')
  assertDecorated(t, out.task.history[1], 'agent history message')
  t.equal(out.task.history[0], input.history?.[0], 'user message left alone (same object)')
  t.equal(out.task.history[2], input.history?.[2], 'user message left alone')
  t.same(input, before, 'input not mutated')
  t.same(calls.map((c) => [c.kind, c.contextId, c.taskId, (c.object as any).messageId ?? (c.object as any).artifactId]), [
    ['status', 'ctx', 't1', 't1-status'],
    ['artifact', 'ctx', 't1', 't1-a1'],
    ['artifact', 'ctx', 't1', 't1-a2'],
    ['message', 'ctx', 't1', 'h1']
  ])
})

t.test('decorateResult: GetTask, CancelTask, ListTasks', async (t) => {
  const decorator = createEnvelopeDecorator({ provider: staticEnvelopeProvider(FULL), timeoutMs: 1000 })
  for (const method of ['GetTask', 'CancelTask']) {
    const out = await decorator.decorateResult(method, task('t'), turn) as any
    assertDecorated(t, out.status.message, `${method} status.message`)
    out.artifacts.forEach((a: any, i: number) => assertDecorated(t, a, `${method} artifact ${i}`))
    assertDecorated(t, out.history[1], `${method} agent history`)
    assertDecorated(t, out.history[3], `${method} agent history`)
    assertPlain(t, out.history[0], `${method} user history`)
    assertPlain(t, out.history[2], `${method} user history`)
  }
  const list = { tasks: [task('a'), task('b', { status: { state: 'TASK_STATE_SUBMITTED' }, artifacts: undefined, history: undefined })], nextPageToken: '', pageSize: 2, totalSize: 2 }
  const out = await decorator.decorateResult('ListTasks', list, turn) as any
  t.same([out.nextPageToken, out.pageSize, out.totalSize], ['', 2, 2], 'list members kept')
  assertDecorated(t, out.tasks[0].status.message, 'ListTasks task status')
  assertDecorated(t, out.tasks[0].artifacts[1], 'ListTasks task artifact')
  t.equal(out.tasks[1], list.tasks[1], 'a task with nothing to decorate is the same object')
})

t.test('decorateResult: every StreamResponse kind', async (t) => {
  const { provider, calls } = recordingProvider()
  const decorator = createEnvelopeDecorator({ provider, timeoutMs: 1000 })
  for (const method of ['SendStreamingMessage', 'SubscribeToTask']) {
    calls.length = 0
    const taskEvent = await decorator.decorateResult(method, { task: task('t') }, turn) as any
    assertDecorated(t, taskEvent.task.status.message, `${method} task`)
    assertDecorated(t, taskEvent.task.artifacts[0], `${method} task artifact`)

    const messageEvent = await decorator.decorateResult(method, { message: agentMessage('m') }, turn) as any
    assertDecorated(t, messageEvent.message, `${method} message`)

    const statusEvent = await decorator.decorateResult(method, {
      statusUpdate: { taskId: 't9', contextId: 'c9', status: { state: 'TASK_STATE_INPUT_REQUIRED', message: agentMessage('s'), timestamp: 'now' }, final: false }
    }, turn) as any
    assertDecorated(t, statusEvent.statusUpdate.status.message, `${method} statusUpdate`)
    t.same([statusEvent.statusUpdate.taskId, statusEvent.statusUpdate.status.state, statusEvent.statusUpdate.status.timestamp, statusEvent.statusUpdate.final],
      ['t9', 'TASK_STATE_INPUT_REQUIRED', 'now', false], 'event members kept')

    const artifactEvent = await decorator.decorateResult(method, {
      artifactUpdate: { taskId: 't8', contextId: 'c8', artifact: artifact('a'), append: true, lastChunk: true }
    }, turn) as any
    assertDecorated(t, artifactEvent.artifactUpdate.artifact, `${method} artifactUpdate`)
    t.same([artifactEvent.artifactUpdate.append, artifactEvent.artifactUpdate.lastChunk], [true, true])

    t.same(calls.slice(-2).map((c) => [c.kind, c.taskId, c.contextId]), [['status', 't9', 'c9'], ['artifact', 't8', 'c8']],
      'events pass their ids to the provider')

    const userStatus = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING', message: userMessage('u') } } }
    t.equal(await decorator.decorateResult(method, userStatus, turn), userStatus, 'a user status message is left alone')
    const noMessage = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }
    t.equal(await decorator.decorateResult(method, noMessage, turn), noMessage, 'nothing to decorate: same object')
  }
  const other = { something: true }
  t.equal(await decorator.decorateResult('GetExtendedAgentCard', other, turn), other)
  t.equal(await decorator.decorateResult('SendMessage', null, turn), null)
})

t.test('decorate with the attached provider: the agent\'s own envelope is validated on the way out', async (t) => {
  const { log, entries } = recorder()
  const decorator = createEnvelopeDecorator({ provider: attachedEnvelopeProvider(), timeoutMs: 1000 })
  const result = {
    task: task('t', {
      status: { state: 'TASK_STATE_COMPLETED', message: agentMessage('s', { metadata: { [URI]: FULL } }) },
      artifacts: [artifact('a', { metadata: { [URI]: { ...FULL, citations: [{ title: 'no ids' }] } } }), artifact('b')],
      history: []
    })
  }
  const out = await decorator.decorateResult('SendMessage', result, { ...turn, log }) as any
  t.same(envelopeOf(out.task.status.message), FULL, 'attached envelope passed through')
  t.same(envelopeOf(out.task.artifacts[0]).answerCoverage, { availability: 'invalid', originatingTurnId: 't1', originatingRequestId: 'r1' })
  t.notOk(envelopeOf(out.task.artifacts[0]).citations, 'invalid citations dropped')
  t.same(envelopeOf(out.task.artifacts[1]), { author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } },
    'nothing attached: not_recorded')
  t.equal(entries.length, 1, 'one warning for the one invalid envelope')
})

t.test('providers', async (t) => {
  const fn = functionEnvelopeProvider(async ({ agentId }) => ({ author: agentId === 'h' ? 'human' : 'agent' }))
  t.same(await fn.envelope({ agentId: 'h' } as EnvelopeContext), { author: 'human' })
  t.throws(() => functionEnvelopeProvider('nope' as any), TypeError)
  const fixed = staticEnvelopeProvider(FULL)
  const envelope = fixed.envelope({} as EnvelopeContext)
  t.same(envelope, FULL, 'the same envelope…')
  t.not(envelope, FULL, '…as a private copy')
  t.ok(Object.isFrozen(envelope) && Object.isFrozen((envelope as typeof FULL).citations), 'deep-frozen, so it is validated once')
  t.equal(fixed.envelope({} as EnvelopeContext), envelope, 'the same object every time')
  const attached = attachedEnvelopeProvider()
  t.equal(attached.envelope({ object: agentMessage('m') } as EnvelopeContext), undefined)
  t.equal(attached.envelope({ object: agentMessage('m', { metadata: { [URI]: FULL } }) } as EnvelopeContext), FULL)
})

t.test('provider failure: throws → failed, one warning without content, reply still delivered', async (t) => {
  const thrown: unknown[] = [
    Object.assign(new Error('the user said: my card number is 4111'), { code: 'E_PROVIDER' }),
    new TypeError('boom SECRET'),
    'a string SECRET',
    undefined,
    null
  ]
  for (const error of thrown) {
    const { log, entries } = recorder()
    const decorator = createEnvelopeDecorator({ provider: { envelope () { throw error } }, timeoutMs: 1000 })
    const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m', { parts: [{ text: 'SECRET reply text' }] }) }, {
      ...turn, log, requestMessage: userMessage('u', { parts: [{ text: 'SECRET question' }] })
    }) as any
    t.same(envelopeOf(out.message), { answerCoverage: { availability: 'failed' } }, `${String(error)}: failed`)
    t.ok(validateEnvelope(envelopeOf(out.message)))
    t.same(out.message.parts, [{ text: 'SECRET reply text' }], 'reply delivered')
    t.equal(entries.length, 1, 'exactly one warning')
    const logged = JSON.stringify(entries)
    t.notMatch(logged, 'SECRET', 'no message content logged')
    t.notMatch(logged, '4111', 'no error message logged')
    t.equal(entries[0].object.agentId, 'demo')
    t.equal(entries[0].object.kind, 'message')
  }
  const { log, entries } = recorder()
  const decorator = createEnvelopeDecorator({ provider: { envelope () { throw Object.assign(new Error('x'), { code: 'E_X' }) } }, timeoutMs: 1000 })
  await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, { ...turn, log })
  t.same(entries[0].object.error, { name: 'Error', code: 'E_X' }, 'error name and code are logged')

  const silent = createEnvelopeDecorator({ provider: { envelope () { throw new Error('x') } }, timeoutMs: 1000 })
  const out = await silent.decorateResult('SendMessage', { message: agentMessage('m') }, turn) as any
  t.same(envelopeOf(out.message), { answerCoverage: { availability: 'failed' } }, 'works without a logger')
})

t.test('provider failure: async rejection → failed, one warning', async (t) => {
  const { log, entries } = recorder()
  const decorator = createEnvelopeDecorator({ provider: { envelope: async () => { throw new Error('SECRET') } }, timeoutMs: 1000 })
  const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, { ...turn, log }) as any
  t.same(envelopeOf(out.message), { answerCoverage: { availability: 'failed' } })
  t.equal(entries.length, 1)
  t.notMatch(JSON.stringify(entries), 'SECRET')
})

t.test('provider failure: timeout → failed, one warning, reply still delivered', async (t) => {
  const { log, entries } = recorder()
  let timer: NodeJS.Timeout | undefined
  t.teardown(() => clearTimeout(timer))
  const slow: EnvelopeProvider = { envelope: () => new Promise((resolve) => { timer = setTimeout(() => resolve(FULL), 5000) }) }
  const decorator = createEnvelopeDecorator({ provider: slow, timeoutMs: 20 })
  const started = Date.now()
  const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, { ...turn, log }) as any
  t.ok(Date.now() - started < 2000, 'did not wait for the provider')
  t.same(envelopeOf(out.message), { answerCoverage: { availability: 'failed' } })
  t.equal(entries.length, 1)
  t.same(entries[0].object.error, { name: 'ProviderTimeoutError', code: 'A2A_CONVERSE_PROVIDER_TIMEOUT' })
  const error = new ProviderTimeoutError(20)
  t.match(error.message, '20 ms')
})

t.test('async providers within the timeout, thenables too', async (t) => {
  const decorator = createEnvelopeDecorator({ provider: { envelope: async () => FULL }, timeoutMs: 1000 })
  const out = await decorator.decorateResult('GetTask', task('t'), turn) as any
  t.same(envelopeOf(out.status.message), FULL)
  t.same(envelopeOf(out.history[3]), FULL)

  const thenable = createEnvelopeDecorator({
    provider: { envelope: () => ({ then (resolve: (v: unknown) => void) { resolve(FULL) } }) as any },
    timeoutMs: 1000
  })
  const viaThenable = await thenable.decorateResult('SendMessage', { message: agentMessage('m') }, turn) as any
  t.same(envelopeOf(viaThenable.message), FULL)

  let i = 0
  const mixed = createEnvelopeDecorator({
    provider: { envelope: () => (i++ % 2 === 0 ? FULL : Promise.resolve({ ...FULL, author: 'human' as const })) },
    timeoutMs: 1000
  })
  const mixedOut = await mixed.decorateResult('GetTask', task('t'), turn) as any
  t.same([mixedOut.status.message, ...mixedOut.artifacts, mixedOut.history[1], mixedOut.history[3]].map((o: any) => envelopeOf(o).author),
    ['agent', 'human', 'agent', 'human', 'agent'], 'sync and async answers land on the right objects')
})

t.test('provider output fails the schema → invalid members dropped, invalid, one warning without payload', async (t) => {
  const { log, entries } = recorder()
  const draft = { ...FULL, ownership: { state: 'robot-owned SECRET', suppressed: false }, invocation: { toolName: 'x', outcome: 'exploded' } }
  const decorator = createEnvelopeDecorator({ provider: staticEnvelopeProvider(draft as any), timeoutMs: 1000 })
  const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, { ...turn, log }) as any
  const envelope = envelopeOf(out.message)
  t.ok(validateEnvelope(envelope), 'what is emitted passes the schema')
  t.same(envelope, {
    author: 'agent',
    answerCoverage: { availability: 'invalid', originatingTurnId: 't1', originatingRequestId: 'r1' },
    citations: FULL.citations
  })
  t.equal(entries.length, 1, 'logged once')
  t.same(entries[0].object.members, ['invocation', 'ownership'])
  t.notMatch(JSON.stringify(entries), 'SECRET', 'no payload dump')
  t.notMatch(JSON.stringify(entries), 'exploded')
})

t.test('provider returns nothing → not_recorded, no warning', async (t) => {
  for (const answer of [undefined, null, Promise.resolve(undefined)]) {
    const { log, entries } = recorder()
    const decorator = createEnvelopeDecorator({ provider: { envelope: () => answer as any }, timeoutMs: 1000 })
    const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, { ...turn, log }) as any
    t.same(envelopeOf(out.message), { author: 'agent', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'ai_owned', suppressed: false } })
    t.equal(entries.length, 0)
  }
  const decorator = createEnvelopeDecorator({ provider: staticEnvelopeProvider({ author: 'human', ownership: { state: 'human_owned', suppressed: true } }), timeoutMs: 1000 })
  const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, turn) as any
  t.same(envelopeOf(out.message), { author: 'human', answerCoverage: { availability: 'not_recorded' }, ownership: { state: 'human_owned', suppressed: true } },
    'no coverage assessment: not_recorded, other members kept')
})

t.test('emitted envelopes always pass validateEnvelope, whatever the provider returns', async (t) => {
  const drafts: unknown[] = [
    FULL, undefined, null, {}, 'x', 1, [], { author: 'x' }, { answerCoverage: { availability: 'assessed' } },
    { answerCoverage: 'bad' }, { routine: { name: 'r', status: 'active', pendingInput: [{}] } }, { citations: [null] },
    { extra: true, citations: [{ documentId: 'd', chunkId: 'c', title: 't', sourceUrl: 'ftp://x' }] },
    { answerCoverage: { availability: 'failed', originatingTurnId: '' } }
  ]
  let index = 0
  const decorator = createEnvelopeDecorator({ provider: { envelope: () => drafts[index++ % drafts.length] as any }, timeoutMs: 1000 })
  for (let i = 0; i < drafts.length; i++) {
    const out = await decorator.decorateResult('SendMessage', { message: agentMessage('m') }, turn) as any
    t.ok(validateEnvelope(envelopeOf(out.message)), JSON.stringify(drafts[i]) ?? 'undefined')
  }
})

t.test('a deep-frozen draft is validated once; a shallow-frozen or invalid one every time', async (t) => {
  const decorator = createEnvelopeDecorator({ provider: staticEnvelopeProvider(FULL), timeoutMs: 100 })
  const turn = { agentId: 'a', activated: [URI] }
  const result = { message: agentMessage('m') }
  const first = decorator.decorate('SendMessage', result, turn) as { message: { metadata: Record<string, unknown> } }
  const second = decorator.decorate('SendMessage', result, turn) as { message: { metadata: Record<string, unknown> } }
  t.equal(first.message.metadata[URI], second.message.metadata[URI], 'one envelope object shared by both replies')
  t.ok(validateEnvelope(first.message.metadata[URI]))

  const shallow = Object.freeze({ ...FULL, citations: [...(FULL.citations ?? [])] })
  const byShallow = createEnvelopeDecorator({ provider: { envelope: () => shallow }, timeoutMs: 100 })
  const a = byShallow.decorate('SendMessage', result, turn) as { message: { metadata: Record<string, unknown> } }
  const b = byShallow.decorate('SendMessage', result, turn) as { message: { metadata: Record<string, unknown> } }
  t.not(a.message.metadata[URI], b.message.metadata[URI], 'a shallow-frozen draft may change underneath: validated again')

  const warnings: unknown[] = []
  const bad = Object.freeze({ author: 'robot' })
  const byBad = createEnvelopeDecorator({ provider: { envelope: () => bad as never }, timeoutMs: 100 })
  const log = { warn: (entry: unknown) => { warnings.push(entry) } }
  byBad.decorate('SendMessage', result, { ...turn, log })
  byBad.decorate('SendMessage', result, { ...turn, log })
  t.equal(warnings.length, 2, 'an invalid frozen draft is not cached: each reply logs its warning')
})
