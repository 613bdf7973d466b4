import t from 'tap'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { AgentCard, Message, Role, type Task } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBus, DefaultRequestHandler, InMemoryTaskStore, RequestContext, ServerCallContext,
  type AgentExecutionEvent
} from '@a2a-js/sdk/server'
import { validateEnvelope } from '../../../packages/a2a-converse/src/core/envelope-schema.js'
import type { ConverseEnvelope } from '../../../packages/a2a-converse/src/core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../../../packages/a2a-converse/src/core/uri.js'
import { KnowledgeBase } from '../../../packages/a2a-converse/src/runtime/knowledge-base.js'
import {
  answerTurn, buildReplyMessage, knowledgeExecutor, messageText, textPart
} from '../../../packages/a2a-converse/src/runtime/knowledge-executor.js'
import { loadKnowledgeBase, type KnowledgeDeclaration } from '../../../packages/a2a-converse/src/runtime/load-documents.js'

const DEMO_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))
const SEED_QUESTION = 'How long do I have to return an order?'

async function demoKnowledgeBase (): Promise<KnowledgeBase> {
  const declaration = JSON.parse(await readFile(`${DEMO_DIR}agent.json`, 'utf8')) as KnowledgeDeclaration
  return loadKnowledgeBase(declaration, DEMO_DIR)
}

function userMessage (text: string, messageId = 'user-1', extra: Partial<Message> = {}): Message {
  return {
    messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra
  }
}

function requestContext (message: Message, contextId = 'ctx-1', task?: Task): RequestContext {
  return new RequestContext(
    { tenant: '', message, configuration: undefined, metadata: undefined },
    task?.id ?? 'generated-task-id',
    contextId,
    new ServerCallContext({ requestedVersion: '1.0' }),
    task
  )
}

function envelopeOf (message: Message): ConverseEnvelope {
  return message.metadata?.[CONVERSE_EXTENSION_URI] as ConverseEnvelope
}

t.test('messageText joins the text parts and ignores the others', async (t) => {
  t.equal(messageText(undefined), '')
  t.equal(messageText({ parts: [] }), '')
  t.equal(messageText({
    parts: [
      textPart('first'),
      { content: { $case: 'data', value: { a: 1 } }, metadata: undefined, filename: '', mediaType: '' },
      { content: undefined, metadata: undefined, filename: '', mediaType: '' },
      textPart('second')
    ]
  }), 'first\nsecond')
})

t.test('answerTurn builds the full envelope', async (t) => {
  const knowledgeBase = await demoKnowledgeBase()
  const reply = answerTurn(SEED_QUESTION, { knowledgeBase, requestMessageId: 'req-1', turnId: 'turn-1' })
  t.equal(reply.text, 'You can return an order within 30 days of delivery.')
  t.same(reply.parts, [textPart(reply.text)])
  t.same(reply.envelope, {
    author: 'agent',
    answerCoverage: {
      availability: 'assessed',
      coverage: 'answered',
      reason: 'sufficient_evidence',
      originatingTurnId: 'turn-1',
      originatingRequestId: 'req-1'
    },
    ownership: { state: 'ai_owned', suppressed: false },
    citations: [{ documentId: 'returns-policy', chunkId: 'returns-policy#0', title: 'Returns policy' }]
  })
  t.equal(reply.answer.evidence.chunkId, 'returns-policy#0')
  t.ok(validateEnvelope(reply.envelope))

  const fresh = answerTurn('', { knowledgeBase })
  t.match(fresh.envelope.answerCoverage.originatingTurnId, /^[0-9a-f-]{36}$/, 'a fresh turn id by default')
  t.notOk('originatingRequestId' in fresh.envelope.answerCoverage, 'no request id, no originatingRequestId')
  t.notOk('originatingRequestId' in answerTurn('', { knowledgeBase, requestMessageId: '' }).envelope.answerCoverage)
  t.not(answerTurn('', { knowledgeBase }).envelope.answerCoverage.originatingTurnId, fresh.envelope.answerCoverage.originatingTurnId)

  for (const question of [
    SEED_QUESTION, 'How long is the warranty?', 'Can I return a sofa?', 'What is the capital of France?', '', 'returns',
    'Who should I vote for?'
  ]) {
    const { envelope } = answerTurn(question, { knowledgeBase, requestMessageId: 'req', turnId: 'turn' })
    t.ok(validateEnvelope(envelope), `${JSON.stringify(question)}: valid envelope ${JSON.stringify(validateEnvelope.errors)}`)
  }
})

t.test('buildReplyMessage attaches the envelope and lists the extension', async (t) => {
  const envelope: ConverseEnvelope = { answerCoverage: { availability: 'not_recorded' } }
  const message = buildReplyMessage({ contextId: 'ctx', parts: [textPart('hi')], envelope })
  t.equal(message.role, Role.ROLE_AGENT)
  t.equal(message.taskId, '')
  t.match(message.messageId, /^[0-9a-f-]{36}$/)
  t.same(message.extensions, [CONVERSE_EXTENSION_URI])
  t.equal(envelopeOf(message), envelope)
  t.equal(buildReplyMessage({ contextId: 'ctx', taskId: 'task', parts: [], envelope, messageId: 'm' }).taskId, 'task')
})

t.test('the executor publishes one agent Message with the envelope', async (t) => {
  const knowledgeBase = await demoKnowledgeBase()
  let counter = 0
  const executor = knowledgeExecutor({ knowledgeBase, newId: () => `id-${++counter}` })
  const bus = new DefaultExecutionEventBus()
  const events: AgentExecutionEvent[] = []
  bus.on('event', (event) => events.push(event))
  await executor.execute(requestContext(userMessage(SEED_QUESTION, 'user-42')), bus)
  t.equal(events.length, 1)
  t.equal(events[0].kind, 'message')
  const message = events[0].data as Message
  t.equal(message.role, Role.ROLE_AGENT)
  t.equal(message.contextId, 'ctx-1')
  t.equal(message.taskId, '', 'no task, no taskId (not even the generated one)')
  t.equal(message.messageId, 'id-2')
  t.same(message.extensions, [CONVERSE_EXTENSION_URI])
  t.equal(messageText(message), 'You can return an order within 30 days of delivery.')
  const envelope = envelopeOf(message)
  t.ok(validateEnvelope(envelope))
  t.equal(envelope.answerCoverage.originatingTurnId, 'id-1')
  t.equal(envelope.answerCoverage.originatingRequestId, 'user-42')
  t.equal(envelope.citations?.[0].title, 'Returns policy')

  // The wire form (what JSON-RPC serialises) matches the spec's example.
  t.match(Message.toJSON(message), {
    role: 'ROLE_AGENT',
    parts: [{ text: 'You can return an order within 30 days of delivery.' }],
    extensions: [CONVERSE_EXTENSION_URI],
    metadata: { [CONVERSE_EXTENSION_URI]: { author: 'agent', answerCoverage: { coverage: 'answered' } } }
  })

  await t.resolves(executor.cancelTask('any-task', bus), 'cancelTask publishes nothing')
  t.equal(events.length, 1)
})

t.test('the executor answers inside an existing task with its taskId', async (t) => {
  const knowledgeBase = new KnowledgeBase({ documents: [] })
  const executor = knowledgeExecutor({ knowledgeBase })
  const task: Task = { id: 'task-7', contextId: 'ctx-7', status: undefined, artifacts: [], history: [], metadata: undefined }
  const bus = new DefaultExecutionEventBus()
  const events: AgentExecutionEvent[] = []
  bus.on('event', (event) => events.push(event))
  await executor.execute(requestContext(userMessage('Where is my parcel?', 'u', { taskId: 'task-7' }), 'ctx-7', task), bus)
  const message = events[0].data as Message
  t.equal(message.taskId, 'task-7')
  t.equal(message.contextId, 'ctx-7')
  t.match(message.messageId, /^[0-9a-f-]{36}$/, 'default ids are UUIDs')
  t.equal(envelopeOf(message).answerCoverage.coverage, 'unanswered')
})

t.test('through DefaultRequestHandler and InMemoryTaskStore', async (t) => {
  const knowledgeBase = await demoKnowledgeBase()
  const card = AgentCard.fromJSON({
    name: 'Demo',
    description: 'Demo agent',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'http://localhost/a2a/demo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: []
  })
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), knowledgeExecutor({ knowledgeBase }))
  const context = new ServerCallContext({ requestedVersion: '1.0' })
  const result = await handler.sendMessage({
    tenant: '',
    message: userMessage(SEED_QUESTION, '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10', { contextId: 'Zk3xQm' }),
    configuration: undefined,
    metadata: undefined
  }, context)
  t.notOk('status' in result, 'a Message, not a Task')
  const message = result as Message
  t.equal(message.contextId, 'Zk3xQm')
  t.equal(messageText(message), 'You can return an order within 30 days of delivery.')
  const envelope = envelopeOf(message)
  t.equal(envelope.answerCoverage.originatingRequestId, '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10')
  t.same(envelope.citations, [{ documentId: 'returns-policy', chunkId: 'returns-policy#0', title: 'Returns policy' }])
  t.ok(validateEnvelope(envelope))

  const streamed = []
  for await (const event of handler.sendMessageStream({
    tenant: '', message: userMessage('What time do you open on Saturday?', 'user-2'), configuration: undefined, metadata: undefined
  }, context)) streamed.push(event)
  t.equal(streamed.length, 1, 'one event on the stream')
  t.equal(streamed[0].payload?.$case, 'message')
})
