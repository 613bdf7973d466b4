/**
 * Conformance, both doors: the A2A endpoint's JSON replies — each object kind decorated when the extension is
 * activated, stripped (no trace of it) when not, per request — and the official @a2a-js/sdk client.
 */
import t from 'tap'
import { Message, SendMessageRequest, type Task } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { hangingExecutor, messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, serveDoor, URI, userMessage, type DoorAgent, type DoorName } from '../../fixtures/doors.js'
import { contextIdOf } from '../../fixtures/context-ids.js'

const provider = staticEnvelopeProvider(ENVELOPE as never)
const card = { name: 'Demo', description: 'A test agent', capabilities: { streaming: true } }
const agent = (executor: DoorAgent['executor']): DoorAgent => ({ id: 'demo', card, executor })
const serve = (t: Parameters<typeof serveDoor>[0], door: DoorName, executor: DoorAgent['executor']) =>
  serveDoor(t, door, { agents: [agent(executor)], provider })

function envelope (object: any) { return object?.metadata?.[URI] }
function noTrace (t: Parameters<typeof serveDoor>[0], text: string, what: string) { t.notMatch(text, URI, `${what}: no trace of the extension`) }

for (const name of DOORS) {
  t.test(`${name}: a Message reply, decorated and echoed, or stripped`, async (t) => {
    const door = await serve(t, name, messageExecutor())
    const metadata = { [URI]: { author: 'human' }, keep: 'me' }
    const active = await call(door, 'SendMessage', { message: userMessage('hi', { metadata }) }, { active: true })
    t.equal(active.status, 200)
    t.match(active.headers.get('content-type'), /^application\/json/)
    t.equal(active.headers.get('a2a-extensions'), URI)
    t.match(active.json.result.message, { role: 'ROLE_AGENT', parts: [{ text: 'echo: hi' }], extensions: [URI] })
    t.match(envelope(active.json.result.message), { author: 'agent', answerCoverage: ENVELOPE.answerCoverage })
    const plain = await call(door, 'SendMessage', { message: userMessage('hi', { metadata, extensions: [URI] }) })
    t.equal(plain.headers.get('a2a-extensions'), null, 'no echo without activation')
    t.strictSame(plain.json.result.message.metadata, { keep: 'me' }, 'the envelope the agent copied is stripped')
    noTrace(t, plain.text, 'not activated')
  })

  t.test(`${name}: Task replies, GetTask, ListTasks, CancelTask: every agent object decorated`, async (t) => {
    const door = await serve(t, name, taskExecutor())
    const sent = (await call(door, 'SendMessage', { message: userMessage('q') }, { active: true })).json.result.task
    const contextId = sent.contextId as string
    t.equal(sent.status.state, 'TASK_STATE_COMPLETED')
    t.strictSame(sent.artifacts[0].extensions, [URI])
    t.match(envelope(sent.artifacts[0]), { answerCoverage: ENVELOPE.answerCoverage }, 'artifact')
    t.equal(envelope(sent.history[0]), undefined, 'user messages in history get no envelope')
    const got = (await call(door, 'GetTask', { id: sent.id }, { active: true })).json.result
    t.match(envelope(got.artifacts[0]), { answerCoverage: ENVELOPE.answerCoverage }, 'GetTask artifact')
    const listed = (await call(door, 'ListTasks', { contextId, includeArtifacts: true }, { active: true })).json.result
    t.match(envelope(listed.tasks[0].artifacts[0]), { answerCoverage: ENVELOPE.answerCoverage }, 'ListTasks artifact')
    for (const [method, params] of [['GetTask', { id: sent.id }], ['ListTasks', { contextId, includeArtifacts: true }]] as const) {
      const plain = await call(door, method, params)
      t.equal(plain.status, 200)
      noTrace(t, plain.text, `${method} not activated`)
    }
  })

  t.test(`${name}: CancelTask answers the canceled task, decorated per request`, async (t) => {
    const executor = hangingExecutor()
    const door = await serve(t, name, executor)
    const stream = fetch(`${door.base}/a2a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: userMessage('wait', { contextId: contextIdOf(`cancel-${name}`) }) } })
    })
    await executor.started
    const listed = (await call(door, 'ListTasks', { contextId: contextIdOf(`cancel-${name}`) })).json.result.tasks
    const canceled = await call(door, 'CancelTask', { id: listed[0].id }, { active: true })
    t.equal(canceled.json.result.status.state, 'TASK_STATE_CANCELED')
    t.equal(canceled.headers.get('a2a-extensions'), URI)
    await (await stream).text()
  })

  t.test(`${name}: no leak: activation is per request, interleaved`, async (t) => {
    const door = await serve(t, name, messageExecutor())
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      call(door, 'SendMessage', { message: userMessage(`n${i}`) }, { active: i % 2 === 0, id: i })))
    for (const [i, reply] of replies.entries()) {
      t.equal(reply.json.id, i)
      if (i % 2 === 0) t.ok(envelope(reply.json.result.message), `${i}: decorated`)
      else noTrace(t, reply.text, `request ${i}`)
    }
  })

  t.test(`${name}: the official SDK client: card, SendMessage, stream, GetTask, errors`, async (t) => {
    const door = await serve(t, name, taskExecutor())
    const client = await new ClientFactory().createFromUrl(door.base)
    const resolved = await client.getAgentCard()
    t.equal(resolved.supportedInterfaces[0].url, `${door.base}/a2a/demo`)
    const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }
    const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('plain') })) as Task
    t.equal(plain.artifacts[0].metadata?.[URI], undefined)
    const decorated = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('x') }), withConverse) as Task
    t.match(decorated.artifacts[0].metadata?.[URI], { answerCoverage: ENVELOPE.answerCoverage })
    const kinds: string[] = []
    for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('s') }), withConverse)) {
      if (event.payload !== undefined) kinds.push(event.payload.$case)
    }
    t.strictSame(kinds, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
    t.equal((await client.getTask({ tenant: '', id: decorated.id, historyLength: undefined })).id, decorated.id)
    await t.rejects(client.getTask({ tenant: '', id: 'nope', historyLength: undefined }), /Task not found/)
    await t.rejects(client.resubscribeTask({ tenant: '', id: 'nope' }).next(), /Task not found: nope/,
      'an error before the stream: a plain JSON-RPC error reply')
  })

  t.test(`${name}: the official SDK client reads a Message stream`, async (t) => {
    const door = await serve(t, name, messageExecutor())
    const client = await new ClientFactory().createFromUrl(door.base)
    const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }
    const events: Array<{ payload?: { value: unknown } }> = []
    for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('hello') }), withConverse)) events.push(event)
    t.equal(events.length, 1)
    const message = events[0].payload?.value as Message
    t.match(Message.toJSON(message), { parts: [{ text: 'echo: hello' }] })
    t.match(message.metadata?.[URI], { answerCoverage: ENVELOPE.answerCoverage })
  })
}
