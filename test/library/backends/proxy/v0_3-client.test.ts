/**
 * Proxy mode with an A2A 0.3 client (@a2a-js/sdk 0.3.14) in front: the gateway translates 0.3 to the one 1.0
 * service, whose upstream backend speaks 1.0 to a real 1.0 upstream (test/fixtures/upstream-agent.ts); the
 * envelope is added as for 1.0 callers, on 0.3 Messages, status messages and artifacts. With A2A_VERSIONS=1.0
 * the gateway refuses the 0.3 client (-32009).
 */
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { ClientFactory, ServiceParameters, withA2AExtensions } from 'a2a-sdk-v03/client'
import type { Message } from 'a2a-sdk-v03'
import { startUpstream } from '../../../fixtures/upstream-agent.js'
import { startGateway, URI } from '../../../fixtures/gateway-helpers.js'

const ACTIVE = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }

function message (text: string, extra: Partial<Message> = {}): Message {
  return { kind: 'message', messageId: randomUUID(), contextId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra }
}

async function proxied (t: Test, env: Record<string, string> = {}) {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const gateway = await startGateway(t, env, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  return { upstream, gateway }
}

t.test('a 0.3 client through the gateway to a 1.0 upstream: send, stream, get, an input-required task continued', async (t) => {
  const { upstream, gateway } = await proxied(t)
  const client = await new ClientFactory().createFromUrl(`${gateway.base}/a2a/shop/v0.3/.well-known/agent-card.json`, '')
  const reply = await client.sendMessage({ message: message('hello there') }, ACTIVE) as any
  t.match(reply, { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'echo: hello there' }] })
  t.match(reply.metadata[URI], { author: 'agent', answerCoverage: { availability: 'not_recorded' } }, 'the envelope on the 0.3 Message')
  t.equal(upstream.seen.at(-1)!['a2a-version'], '1.0', 'the upstream is spoken to in 1.0')
  const plain = await client.sendMessage({ message: message('no header') }) as any
  t.equal(plain.metadata?.[URI], undefined, 'no envelope without X-A2A-Extensions')

  const events: any[] = []
  for await (const event of client.sendMessageStream({ message: message('task stream me') }, ACTIVE)) events.push(event)
  t.strictSame(events.map((event) => event.kind), ['task', 'status-update', 'artifact-update', 'status-update'])
  t.match(events[1].status.message.metadata[URI], { author: 'agent' }, 'the envelope on a 0.3 status message')
  t.match(events[2].artifact.metadata[URI], { author: 'agent' }, 'and on a 0.3 artifact')
  t.strictSame([events[3].status.state, events[3].final], ['completed', true])

  const asked = await client.sendMessage({ message: message('ask me') }, ACTIVE) as any
  t.match(asked, { kind: 'task', status: { state: 'input-required' } })
  t.match(asked.status.message.metadata[URI], { author: 'agent' })
  const got = await client.getTask({ id: asked.id }, ACTIVE) as any
  t.equal(got.status.state, 'input-required')
  const done = await client.sendMessage({ message: message('size M', { taskId: asked.id, contextId: asked.contextId }) }, ACTIVE) as any
  t.match(done, { kind: 'task', id: asked.id, status: { state: 'completed', message: { kind: 'message', parts: [{ kind: 'text', text: 'done: size M' }] } } })
})

t.test('A2A_VERSIONS=1.0: the 0.3 client is refused with -32009, the card has no 0.3 fields', async (t) => {
  const { gateway } = await proxied(t, { A2A_VERSIONS: '1.0' })
  const card = await (await fetch(`${gateway.base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.equal(card.url, undefined)
  const reply = await fetch(`${gateway.base}/a2a/shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message('x') } })
  })
  t.equal((await reply.json() as any).error.code, -32009)
})
