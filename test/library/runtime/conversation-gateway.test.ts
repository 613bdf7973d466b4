/** buildGateway as the conversation features see it: agents from a file, executors, stores given or made, failures. */
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { MemoryTaskEventHub } from '../../../packages/a2a-converse/src/events/task-event-hub.js'
import type { AgentDefinition } from '../../../src/gateway/agent-definitions.js'
import { buildGateway } from '../../../src/gateway/app.js'
import { loadConfig } from '../../../src/gateway/config.js'
import { conversationExecutor } from '../../../packages/a2a-converse/src/runtime/conversation-executor.js'
import { agentKnowledgeBase } from '../../../src/gateway/executors.js'
import { ConversationStoreClosedError } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { AUTH, Client, envelopeOf, gateway, operator, statusEnvelope, textOf } from '../../fixtures/conversation-gateway.js'

const AGENTS_FILE = fileURLToPath(new URL('../../fixtures/conversation-agents.json', import.meta.url))

t.test('AGENTS_FILE: a knowledge-only agent and a conversation agent without routines', async (t) => {
  const app = await gateway(t, { env: { AGENTS_FILE } })
  const faq = new Client(t, app, { agent: 'faq' })
  const answer = await faq.send('How long do I have to return an order?')
  t.ok(answer.message)
  t.equal(envelopeOf(t, answer.message).answerCoverage.availability, 'assessed')
  const card = (await app.inject('/a2a/faq/.well-known/agent-card.json')).json()
  t.equal(card.version, '2.1.0')
  t.equal((await operator(app, 'GET', `faq/conversations/${answer.message.contextId}`)).statusCode, 404, 'no conversation state')

  const chat = new Client(t, app, { agent: 'chat' })
  const reply = await chat.send('book a table')
  t.ok(reply.message, 'no routine to start')
  const unknown = await chat.send('', { call: { toolName: 'book_table', arguments: {} } })
  t.equal(envelopeOf(t, unknown.message).invocation?.outcome, 'unknown_tool')
  const view = (await operator(app, 'GET', `chat/conversations/${reply.message.contextId}`)).json()
  t.equal(view.ownership, 'ai_owned')
  t.equal(view.routine, undefined)
  t.equal((await app.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 404, 'only the file\'s agents')
})

t.test('an executor without a routine engine: the view shows no routine', async (t) => {
  const agents: AgentDefinition[] = [{
    id: 'bare',
    name: 'Bare',
    description: 'A conversation executor wrapped without its engine',
    executor: 'wrapped',
    routines: [{
      name: 'Feedback',
      description: 'Collect a rating.',
      triggers: ['feedback'],
      slots: [{ key: 'rating', type: 'integer', required: true, description: 'A rating.' }]
    }]
  }]
  const app = await gateway(t, {
    agents,
    executors: {
      async wrapped (definition, services) {
        const executor = conversationExecutor({
          agentId: definition.id,
          knowledgeBase: await agentKnowledgeBase(definition),
          routines: definition.routines,
          store: services.conversations,
          taskStore: services.taskStore
        })
        return { execute: executor.execute, cancelTask: executor.cancelTask }
      }
    }
  })
  const client = new Client(t, app, { agent: 'bare' })
  const task = await client.task('some feedback')
  t.equal(statusEnvelope(t, task).routine?.name, 'Feedback')
  const view = (await operator(app, 'GET', `bare/conversations/${task.contextId}`)).json()
  t.equal(view.routine, undefined)
  t.equal(view.turns.length, 2)
})

t.test('stores and the event hub given as options are used, and closed with the app', async (t) => {
  const conversations = new MemoryConversationStore()
  const taskStore = new InMemoryTaskStore()
  const events = new MemoryTaskEventHub()
  const lines: string[] = []
  const app = await buildGateway({
    config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'info', OPERATOR_API_KEY: 'operator-key-0123456789' }),
    conversations,
    taskStores: { demo: taskStore },
    events,
    loggerStream: { write: (line: string) => { lines.push(line); return true } }
  })
  const client = new Client(t, app)
  const task = await client.task('book a table')
  t.equal((await conversations.get('demo', task.contextId))?.routine?.taskId, task.id)
  t.ok(await taskStore.load(task.id, new ServerCallContext()))
  t.ok(lines.length > 0, 'the app logs to the given stream')
  await app.close()
  await t.rejects(conversations.get('demo', task.contextId), ConversationStoreClosedError)
  t.equal(events.size, 0)
})

t.test('a conversation store without the optional admit (no bound on new conversations): turns run', async (t) => {
  const conversations = Object.defineProperty(new MemoryConversationStore(), 'admit', { value: undefined })
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }), conversations })
  t.teardown(() => app.close())
  const task = await new Client(t, app).task('book a table')
  t.equal((await conversations.get('demo', task.contextId))?.routine?.taskId, task.id)
})

t.test('an unknown executor name fails the build (and what was opened is closed)', async (t) => {
  const conversations = new MemoryConversationStore()
  await t.rejects(buildGateway({
    config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }),
    conversations,
    agents: [{ id: 'x', name: 'X', description: 'X', executor: 'nope' }]
  }), /agent "x": unknown executor "nope" \(known: conversation, knowledge\)/)
  await t.rejects(conversations.get('x', 'c'), ConversationStoreClosedError)
})

t.test('the demo agent by default; a request id that looks like one is echoed, others replaced', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const task = await client.task('book a table')
  t.match(textOf(task.status.message), /Which date/)
  const given = await operator(app, 'GET', `demo/conversations/${task.contextId}`, undefined, { ...AUTH, 'x-request-id': 'turn-42' })
  t.equal(given.headers['x-request-id'], 'turn-42')
  const odd = await operator(app, 'GET', `demo/conversations/${task.contextId}`, undefined, { ...AUTH, 'x-request-id': 'a b' })
  t.not(odd.headers['x-request-id'], 'a b')
})
