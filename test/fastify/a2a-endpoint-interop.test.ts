/** The official @a2a-js/sdk client against a2aEndpoint on a real listening server. */
import t, { type Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { Message, SendMessageRequest, type Task } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { CONVERSE_EXTENSION_URI } from '../../src/index.js'
import { buildApp, ENVELOPE, userMessage } from '../fixtures/a2a-app.js'
import { taskExecutor, messageExecutor } from '../fixtures/a2a-executors.js'

async function serve (t: Test, executor = taskExecutor()) {
  const app = await buildApp(executor, { card: { capabilities: { streaming: true } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(CONVERSE_EXTENSION_URI)) }

t.test('card resolution, SendMessage, SendStreamingMessage with the extension', async (t) => {
  const base = await serve(t)
  const client = await new ClientFactory().createFromUrl(base)
  t.equal(client.protocolVersion, '1.0')
  const card = await client.getAgentCard()
  t.equal(card.name, 'Demo')
  t.equal(card.supportedInterfaces[0].url, `${base}/a2a/demo`)
  t.ok(card.capabilities?.extensions.some((entry) => entry.uri === CONVERSE_EXTENSION_URI))

  const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('plain') })) as Task
  t.equal(plain.artifacts[0].parts[0].content?.value, 'done: plain')
  t.equal(plain.artifacts[0].metadata?.[CONVERSE_EXTENSION_URI], undefined, 'no envelope without the header')

  const decorated = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('decorated') }), withConverse) as Task
  t.strictSame(decorated.artifacts[0].extensions, [CONVERSE_EXTENSION_URI])
  t.match(decorated.artifacts[0].metadata?.[CONVERSE_EXTENSION_URI], { author: 'agent', answerCoverage: ENVELOPE.answerCoverage })

  const kinds: string[] = []
  let artifactEnvelope: unknown
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('streamed') }), withConverse)) {
    const payload = event.payload
    if (payload === undefined) continue
    kinds.push(payload.$case)
    if (payload.$case === 'artifactUpdate') artifactEnvelope = payload.value.artifact?.metadata?.[CONVERSE_EXTENSION_URI]
  }
  t.strictSame(kinds, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  t.match(artifactEnvelope, { author: 'agent', answerCoverage: ENVELOPE.answerCoverage })

  const task = await client.getTask({ tenant: '', id: decorated.id, historyLength: undefined })
  t.equal(task.id, decorated.id)
  await t.rejects(client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }), /Task not found/)
})

t.test('the SDK client reads pre-stream SSE error frames and Message streams', async (t) => {
  const base = await serve(t, messageExecutor())
  const client = await new ClientFactory().createFromUrl(base)
  const events: Array<{ payload?: { value: unknown } }> = []
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('hello') }), withConverse)) {
    events.push(event)
  }
  t.equal(events.length, 1)
  const message = events[0].payload?.value as Message
  t.match(Message.toJSON(message), { parts: [{ text: 'echo: hello' }] })
  t.match(message.metadata?.[CONVERSE_EXTENSION_URI], { answerCoverage: ENVELOPE.answerCoverage })

  const subscription = client.resubscribeTask({ tenant: '', id: 'no-such-task' })
  await t.rejects(subscription.next(), /Task not found: no-such-task \(Code: -32001\)/)
})
