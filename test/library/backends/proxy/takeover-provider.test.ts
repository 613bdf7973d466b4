/**
 * Proxy mode with the gateway's own parts: human takeover of a proxied conversation (operator API, the official
 * client), and where envelopes come from (the upstream's own, else httpEnvelopeProvider against a real HTTP service).
 */
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Message, SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { MemoryConversationStore } from '../../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { startRawUpstream } from '../../../fixtures/raw-upstream.js'
import { readSse } from '../../../fixtures/sse-reader.js'
import { startUpstream, upstreamEnvelope } from '../../../fixtures/upstream-agent.js'
import { logLines, startGateway, URI, userMessage } from '../../../fixtures/gateway-helpers.js'

const KEY = 'operator-key-0123456789'
const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }
const operator = { authorization: `Bearer ${KEY}` }
const operatorJson = { ...operator, 'content-type': 'application/json' }

function textOf (message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

t.test('takeover while proxied: held turns are not forwarded, the person answers, release sends turns upstream again', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { OPERATOR_API_KEY: KEY }, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  const client = await new ClientFactory().createFromUrl(`${base}/a2a/shop/`)
  const api = `${base}/api/v1/agents/shop/conversations`

  // A forwarded turn is recorded: the inbox lists the conversation.
  const first = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('enveloped hello') }), withConverse) as Message
  const contextId = first.contextId
  const listed = await (await fetch(api, { headers: operator })).json() as Record<string, any>
  t.same(listed.conversations.map((entry: any) => entry.contextId), [contextId], 'the proxied conversation is in the inbox')
  const trace = await (await fetch(`${api}/${contextId}/trace`, { headers: operator })).json() as Record<string, any>
  t.same(trace.turns.map((turn: any) => [turn.role, turn.text]), [['user', 'enveloped hello'], ['agent', 'enveloped: enveloped hello']])
  t.match(trace.turns[1].envelope, { answerCoverage: { availability: 'assessed' } }, 'the upstream\'s envelope is in the trace')

  t.equal((await fetch(`${api}/${contextId}/takeover`, { method: 'POST', headers: operator })).status, 200)
  const forwarded = upstream.seen.length
  const held = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('are you a person?', { contextId }) }), withConverse) as Task
  t.equal(upstream.seen.length, forwarded, 'the held turn was not forwarded')
  t.equal(held.status?.state, TaskState.TASK_STATE_WORKING)
  t.match(held.status?.message?.metadata?.[URI], { author: 'agent', ownership: { state: 'human_owned', suppressed: true } })
  t.same(held.status?.message?.parts[0].content, { $case: 'data', value: { ownership: 'human_owned', suppressed: true } })

  // A stream on the held task (SubscribeToTask, answered by the gateway) receives the person's reply.
  const response = await fetch(`${base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: held.id } })
  })
  const stream = readSse(response)
  await stream.waitFor((frame) => frame.result?.task !== undefined)
  const replied = await fetch(`${api}/${contextId}/messages`, { method: 'POST', headers: operatorJson, body: JSON.stringify({ text: 'Yes, Ana here.' }) })
  t.match(await replied.json(), { delivered: true, taskId: held.id })
  const human = await stream.waitFor((frame) => frame.result?.statusUpdate?.status?.message?.metadata?.[URI]?.author === 'human')
  t.equal(human.result.statusUpdate.status.message.parts[0].text, 'Yes, Ana here.')

  // GetTask of the held task is answered by the gateway, with the person's reply.
  const got = await client.getTask({ id: held.id } as any, withConverse)
  t.match(got.status?.message?.metadata?.[URI], { author: 'human', ownership: { state: 'human_owned', suppressed: false } })
  t.equal(textOf(got.status?.message), 'Yes, Ana here.')

  // A held streaming turn continuing the held task: the same task, still WORKING, nothing forwarded.
  const heldStream: any[] = []
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('thanks', { contextId, taskId: held.id }) }), withConverse)) {
    heldStream.push(event.payload)
    if (event.payload?.$case === 'statusUpdate') break
  }
  t.equal(heldStream[0].value.id, held.id)
  t.equal(upstream.seen.length, forwarded, 'still not forwarded')

  t.equal((await fetch(`${api}/${contextId}/release`, { method: 'POST', headers: operator })).status, 200)
  await stream.ended
  t.equal(stream.frames.at(-1)?.result.statusUpdate.status.state, 'TASK_STATE_COMPLETED', 'release ends the held task')
  const back = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('hello again', { contextId }) }), withConverse) as Message
  t.equal(textOf(back), 'echo: hello again', 'after release the turn goes upstream')
  t.equal(upstream.seen.length, forwarded + 1)
})

t.test('a held turn that names an upstream task starts a held task; a held task can be canceled', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { OPERATOR_API_KEY: KEY }, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  const client = await new ClientFactory().createFromUrl(`${base}/a2a/shop/`)
  const asked = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('ask for size') }), withConverse) as Task
  t.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  await fetch(`${base}/api/v1/agents/shop/conversations/${asked.contextId}/takeover`, { method: 'POST', headers: operator })
  const held = await client.sendMessage(SendMessageRequest.fromJSON({
    message: userMessage('size M', { contextId: asked.contextId, taskId: asked.id })
  }), withConverse) as Task
  t.not(held.id, asked.id, 'a new, gateway-local task')
  t.equal(held.status?.state, TaskState.TASK_STATE_WORKING)
  const canceled = await client.cancelTask({ id: held.id } as any, withConverse)
  t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
  const upstreamTask = await client.getTask({ id: asked.id } as any)
  t.equal(upstreamTask.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the upstream task is still the upstream\'s')
  const listed = await client.listTasks({ contextId: asked.contextId } as any, withConverse)
  t.same(listed.tasks.map((task) => task.id), [asked.id], 'ListTasks lists the upstream\'s tasks')
})

/** A real HTTP envelope service: answers per the object's text. */
async function startEnvelopeService (t: Test) {
  const received: Array<Record<string, any>> = []
  const server = createServer((request: IncomingMessage, response) => {
    let body = ''
    request.on('data', (chunk) => { body += chunk })
    request.on('end', () => {
      const context = JSON.parse(body)
      received.push({ headers: request.headers, context })
      const text = context.object.parts?.[0]?.text ?? ''
      if (text.includes('nothing')) {
        response.writeHead(204)
        response.end()
      } else if (text.includes('broken')) {
        response.writeHead(500)
        response.end('oops')
      } else if (text.includes('garbage')) {
        response.end('not json')
      } else if (text.includes('invalid')) {
        response.end(JSON.stringify({ author: 'robot' }))
      } else if (text.includes('huge')) {
        response.end(JSON.stringify({ author: 'agent', pad: 'x'.repeat(100_000) }))
      } else {
        response.end(JSON.stringify({
          author: 'agent',
          answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
          ownership: { state: 'ai_owned', suppressed: false }
        }))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/envelope`, received }
}

t.test('envelope source: the upstream\'s own first, else the agent\'s httpEnvelopeProvider (failed / invalid / not_recorded)', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const service = await startEnvelopeService(t)
  const { base } = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: upstream.base }, envelopeProvider: { url: service.url } }] })
  const client = await new ClientFactory().createFromUrl(`${base}/a2a/shop/`)
  const envelopeOf = async (text: string) =>
    ((await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage(text) }), withConverse)) as Message).metadata?.[URI] as Record<string, any>

  const own = await envelopeOf('enveloped please')
  t.match(own, { answerCoverage: { availability: 'assessed', coverage: 'answered' } }, 'the upstream\'s envelope')
  t.equal(service.received.length, 0, 'the provider is not asked when the upstream sent one')
  t.match(await envelopeOf('plain'), { author: 'agent', answerCoverage: { availability: 'assessed', coverage: 'answered' } }, 'the provider\'s envelope')
  const asked = service.received[0].context
  t.equal(asked.agentId, 'shop')
  t.equal(asked.kind, 'message')
  t.equal(asked.object.parts[0].text, 'echo: plain')
  t.equal(asked.requestMessage.parts[0].text, 'plain')
  t.same(asked.activated, [URI])
  t.match(await envelopeOf('nothing here'), { answerCoverage: { availability: 'not_recorded' } })
  t.match(await envelopeOf('broken service'), { answerCoverage: { availability: 'failed' } })
  t.match(await envelopeOf('garbage please'), { answerCoverage: { availability: 'failed' } })
  t.match(await envelopeOf('huge please'), { answerCoverage: { availability: 'failed' } }, 'a reply larger than the bound')
  t.match(await envelopeOf('invalid please'), { answerCoverage: { availability: 'invalid' } })
  t.match(await envelopeOf('bad-envelope from upstream'), { answerCoverage: { availability: 'invalid' } }, 'the upstream\'s invalid members dropped')
  const count = service.received.length
  const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('plain') })) as Message
  t.equal(plain.metadata?.[URI], undefined, 'no envelope without the header')
  t.equal(service.received.length, count, 'and the provider is not asked')
})

t.test('ENVELOPE_PROVIDER_URL: the provider for every agent without its own; a slow service degrades to failed', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const service = await startEnvelopeService(t)
  const slow = createServer(() => {})
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { slow.closeAllConnections(); slow.close(() => resolve()) }))
  const { base } = await startGateway(t, { ENVELOPE_PROVIDER_URL: service.url, PROVIDER_TIMEOUT_MS: '300' }, {
    agents: [
      { id: 'shop', upstream: { url: upstream.base } },
      { id: 'slow', upstream: { url: upstream.base }, envelopeProvider: { url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`, timeoutMs: 100 } }
    ]
  })
  const send = async (agent: string) => {
    const response = await fetch(`${base}/a2a/${agent}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('plain') } })
    })
    return (await response.json() as Record<string, any>).result.message.metadata[URI]
  }
  t.match(await send('shop'), { answerCoverage: { availability: 'assessed' } }, 'from ENVELOPE_PROVIDER_URL')
  t.match(await send('slow'), { answerCoverage: { availability: 'failed' } }, 'the agent\'s own (slow) provider wins, and times out')
  t.ok(upstreamEnvelope('x'))
})

t.test('with takeover on: forwarded streams are recorded, upstream failures answered, a failing store only logged', async (t) => {
  const upstream = await startRawUpstream()
  t.teardown(() => upstream.close())
  const failing = new MemoryConversationStore()
  const update = failing.update.bind(failing)
  failing.update = async (agentId, contextId, fn) => {
    if (contextId === 'unrecordable') throw new Error('store down')
    return await update(agentId, contextId, fn)
  }
  const logs = logLines()
  const { base } = await startGateway(t, { OPERATOR_API_KEY: KEY, LOG_LEVEL: 'info' }, {
    agents: [{ id: 'shop', upstream: { url: upstream.base } }], conversations: failing, loggerStream: logs.stream
  })
  const post = (method: string, params: Record<string, unknown>) => fetch(`${base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  })
  const events = [
    { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'part' }] } } },
    { statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING', message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'on it' }] } } } },
    { task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED', message: { messageId: 'm2', role: 'ROLE_AGENT', parts: [{ text: 'done' }] } } } },
    'not an object'
  ]
  upstream.handler = (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.end(events.map((result) => `data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result })}\n\n`).join(''))
  }
  const stream = readSse(await post('SendStreamingMessage', { message: userMessage('stream it') }))
  await stream.ended
  t.equal(stream.frames.length, 4)
  const trace = await (await fetch(`${base}/api/v1/agents/shop/conversations/c1/trace`, { headers: operator })).json() as Record<string, any>
  t.same(trace.turns.map((turn: any) => [turn.role, turn.text, turn.taskId]), [['user', 'stream it', 't1'], ['agent', 'done', 't1']],
    'the streamed turn is recorded with its last agent words')

  upstream.handler = (_request, response) => response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { message: { messageId: 'm', contextId: 'unrecordable', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } } }))
  const answered = await (await post('SendMessage', { message: userMessage('record me') })).json() as Record<string, any>
  t.equal(answered.result.message.parts[0].text, 'hi', 'the caller gets its answer when the turn cannot be recorded')
  t.ok(logs.lines.some((line) => line.msg === 'proxied turn not recorded' && line.level === 50))

  upstream.handler = (_request, response) => response.end('garbage')
  const failed = await (await post('SendMessage', { message: userMessage('x') })).json() as Record<string, any>
  t.equal(failed.error.code, -32006, 'an upstream failure through the takeover layer')
  upstream.handler = (_request, response) => response.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task t1 of alice was purged"}}')
  const missing = await (await post('GetTask', { id: 't1' })).json() as Record<string, any>
  t.same(missing.error, { code: -32001, message: 'Task not found', data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: {} }] },
    'an upstream JSON-RPC error through the takeover layer: its code, A2A\'s own message')
  upstream.handler = (_request, response) => response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'odd' }))
  t.equal((await (await post('SendMessage', { message: userMessage('x') })).json() as Record<string, any>).result, 'odd', 'a result that is no object is passed on, nothing recorded')
})

t.test('a reply written before the held turn is delivered into its task', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { OPERATOR_API_KEY: KEY }, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  const client = await new ClientFactory().createFromUrl(`${base}/a2a/shop/`)
  const first = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('hi') }), withConverse) as Message
  const api = `${base}/api/v1/agents/shop/conversations/${first.contextId}`
  await fetch(`${api}/takeover`, { method: 'POST', headers: operator })
  const early = await (await fetch(`${api}/messages`, { method: 'POST', headers: operatorJson, body: JSON.stringify({ text: 'I am here' }) })).json() as Record<string, any>
  t.equal(early.delivered, false, 'no held task yet: kept for the next turn')
  const held = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('anyone?', { contextId: first.contextId }) }), withConverse) as Task
  const human = held.history.find((message) => (message.metadata?.[URI] as any)?.author === 'human')
  t.equal(textOf(human), 'I am here', 'the earlier reply is in the held task')
})
