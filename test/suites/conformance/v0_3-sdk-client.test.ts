/**
 * Conformance, both doors: an A2A 0.3 client nobody here wrote (@a2a-js/sdk 0.3.14, installed as the npm alias
 * `a2a-sdk-v03`) finds the endpoint on the card and sends, streams, gets, cancels and resubscribes against the
 * gateway on a real port, with `X-A2A-Extensions` and without, reading the envelope in 0.3 shapes; a 1.0 client
 * on the same card still works; with a2aVersions ['1.0'] the 0.3 client is refused (-32009) and the card has no
 * 0.3 fields.
 */
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { ClientFactory, ClientFactoryOptions, ServiceParameters, withA2AExtensions, type Client } from 'a2a-sdk-v03/client'
import type { Message as V03Message } from 'a2a-sdk-v03'
import { ClientFactory as V1ClientFactory, ServiceParameters as V1ServiceParameters, withA2AExtensions as v1Extensions } from '@a2a-js/sdk/client'
import { AgentCard, SendMessageRequest } from '@a2a-js/sdk'
import { staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { hangingExecutor, messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { DOORS, get, serveDoor, URI, type Door } from '../../fixtures/doors.js'

const ACTIVE = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }

function message (text: string, extra: Partial<V03Message> = {}): V03Message {
  return { kind: 'message', messageId: randomUUID(), contextId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra }
}

async function collect<T> (events: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const event of events) all.push(event)
  return all
}

async function serve (t: Test, name: typeof DOORS[number], a2aVersions?: Array<'0.3' | '1.0'>) {
  const hanging = hangingExecutor()
  const door = await serveDoor(t, name, {
    agents: [
      { id: 'tasks', card: { name: 'Tasks', description: 'task agent', capabilities: { streaming: true } }, executor: taskExecutor() },
      { id: 'echo', card: { name: 'Echo', description: 'message agent' }, executor: messageExecutor() },
      { id: 'hang', card: { name: 'Hang', description: 'stays working', capabilities: { streaming: true } }, executor: hanging }
    ],
    provider: staticEnvelopeProvider(ENVELOPE as never),
    a2aVersions
  })
  return { door, hanging }
}

/** The 0.3 transports the card offers: JSON-RPC (the card's preferred) and HTTP+JSON (the 0.3 `/v1/…` paths). */
const TRANSPORTS = ['JSONRPC', 'HTTP+JSON'] as const
type Transport = typeof TRANSPORTS[number]

async function clientOf (door: Door, agentId: string, transport: Transport = 'JSONRPC'): Promise<Client> {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }))
  // A 0.3 client sends no A2A-Version: it is given the agent's 0.3 card base (docs/protocol-versions.md, "The card");
  // the trailing slash, as the SDK resolves its card path against the base as a URL.
  const client = await factory.createFromUrl(`${door.base}/a2a/${agentId}/v0.3/`)
  if (transport === 'HTTP+JSON' && !(client.transport as { endpoint?: string }).endpoint?.endsWith('/rest')) throw new Error('not the HTTP+JSON transport')
  return client
}

for (const name of DOORS) {
  t.test(`${name}: the well-known card is a 1.0 card naming the 0.3 interfaces; 0.3's card for a 0.3 reader`, async (t) => {
    const { door } = await serve(t, name)
    const rpc = `${door.base}/a2a/tasks`
    const rest = `${door.base}/a2a/tasks/rest`
    const v03Card = {
      protocolVersion: '0.3.0',
      url: rpc,
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: rpc, transport: 'JSONRPC' }, { url: rest, transport: 'HTTP+JSON' }],
      supportedInterfaces: [{ url: rpc, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url: rest, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }]
    }
    const plain = await get(door, '/a2a/tasks/.well-known/agent-card.json')
    t.equal(plain.headers.get('vary'), 'A2A-Version', 'the card depends on A2A-Version')
    // Nothing but AgentCard's own members (the conformance kit's schema allows no other), 0.3's interfaces the 1.0 way.
    t.strictSame(Object.keys(plain.json).filter((key) => !(key in AgentCard.fromJSON({}))), [])
    t.strictSame(plain.json.supportedInterfaces, [
      { url: rpc, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: rest, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: rpc, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: rest, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' }
    ])
    t.same((await get(door, '/a2a/tasks/.well-known/agent-card.json', { 'a2a-version': '1.0' })).json, plain.json)
    for (const path of ['/a2a/tasks/v0.3/.well-known/agent-card.json', '/v0.3/.well-known/agent-card.json']) {
      t.match((await get(door, path)).json, { name: 'Tasks', ...v03Card }, `${path}: 0.3's card`)
    }
    t.match((await get(door, '/a2a/tasks/.well-known/agent-card.json', { 'a2a-version': '0.3' })).json, v03Card, 'A2A-Version: 0.3 on the well-known path')
    t.match(await get(door, '/a2a/nobody/v0.3/.well-known/agent-card.json'), { status: 404, json: { message: 'unknown agent "nobody"' } })
    const client = await clientOf(door, 'tasks')
    t.equal((await client.getAgentCard()).name, 'Tasks')
    // A 1.0 client reads the well-known card and picks the 1.0 interface.
    const v1 = await new V1ClientFactory().createFromUrl(`${door.base}/a2a/echo/.well-known/agent-card.json`, '')
    const reply = await v1.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'v1' }] } }),
      { serviceParameters: V1ServiceParameters.create(v1Extensions(URI)) }) as any
    t.match(reply.metadata?.[URI], { answerCoverage: ENVELOPE.answerCoverage }, 'a 1.0 client on the same card')
  })

  for (const transport of TRANSPORTS) {
    t.test(`${name} ${transport}: message/send, tasks/get, with X-A2A-Extensions and without`, async (t) => {
      const { door } = await serve(t, name)
      const tasks = await clientOf(door, 'tasks', transport)
      const task = await tasks.sendMessage({ message: message('q') }, ACTIVE) as any
      t.match(task, { kind: 'task', status: { state: 'completed' }, artifacts: [{ artifactId: 'answer', parts: [{ kind: 'text', text: 'done: q' }] }] })
      t.match(task.artifacts[0].metadata[URI], { answerCoverage: ENVELOPE.answerCoverage }, 'the envelope on the 0.3 artifact')
      const got = await tasks.getTask({ id: task.id, historyLength: 10 }, ACTIVE) as any
      t.match(got, { kind: 'task', id: task.id, status: { state: 'completed' }, history: [{ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'q' }] }] })
      t.ok(got.artifacts[0].metadata[URI], 'tasks/get: the envelope too')
      const plain = await tasks.sendMessage({ message: message('q') }) as any
      t.equal(plain.artifacts[0].metadata?.[URI], undefined, 'not activated: no envelope')
      t.equal((await tasks.getTask({ id: plain.id })).artifacts?.[0].metadata?.[URI], undefined)

      const echo = await clientOf(door, 'echo', transport)
      const reply = await echo.sendMessage({ message: message('hi') }, ACTIVE) as any
      t.match(reply, { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'echo: hi' }] })
      t.match(reply.metadata[URI], { answerCoverage: ENVELOPE.answerCoverage }, 'the envelope on the 0.3 Message')
      t.equal(((await echo.sendMessage({ message: message('hi') })) as any).metadata?.[URI], undefined)
    })

    t.test(`${name} ${transport}: message/stream: kinds, final, the envelope`, async (t) => {
      const { door } = await serve(t, name)
      const tasks = await clientOf(door, 'tasks', transport)
      const events = await collect(tasks.sendMessageStream({ message: message('s') }, ACTIVE)) as any[]
      t.strictSame(events.map((event) => event.kind), ['task', 'status-update', 'artifact-update', 'status-update'])
      t.strictSame(events.filter((event) => event.kind === 'status-update').map((event) => [event.status.state, event.final]), [['working', false], ['completed', true]])
      t.ok(events[2].artifact.metadata[URI], 'the envelope on the streamed artifact')
      const plain = await collect(tasks.sendMessageStream({ message: message('s') })) as any[]
      t.equal(plain[2].artifact.metadata?.[URI], undefined, 'not activated: none')
    })

    t.test(`${name} ${transport}: tasks/resubscribe and tasks/cancel`, async (t) => {
      const { door, hanging } = await serve(t, name)
      const client = await clientOf(door, 'hang', transport)
      const first = client.sendMessageStream({ message: message('wait') }, ACTIVE)
      const opened = (await first.next()).value as any
      t.equal(opened.kind, 'task')
      await first.return()
      const resubscribed = client.resubscribeTask({ id: opened.id }, ACTIVE)
      const head = (await resubscribed.next()).value as any
      t.match(head, { kind: 'task', id: opened.id, status: { state: 'working' } }, 'resubscribe starts with the task')
      const canceled = await client.cancelTask({ id: opened.id }, ACTIVE) as any
      t.match(canceled, { kind: 'task', id: opened.id, status: { state: 'canceled' } })
      const rest = await collect({ [Symbol.asyncIterator]: () => resubscribed }) as any[]
      t.match(rest.at(-1), { kind: 'status-update', status: { state: 'canceled' }, final: true }, 'the resubscribed stream ends with a final event')
      t.strictSame(hanging.canceled, [opened.id])
      await t.rejects(client.getTask({ id: randomUUID() }), /Task not found|-32001/, 'an unknown task: -32001')
      // Push notifications are not declared on this card: the 0.3 push methods map to the 1.0 ones, which answer -32003.
      const push = await fetch(`${door.base}/a2a/hang`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/pushNotificationConfig/set', params: { taskId: opened.id, pushNotificationConfig: { url: 'https://hooks.example/x' } } })
      })
      t.equal(((await push.json()) as any).error.code, -32003)
    })
  }

  t.test(`${name}: the echo header is the one the request used`, async (t) => {
    const { door } = await serve(t, name)
    const send = async (headers: Record<string, string>) => await fetch(`${door.base}/a2a/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message('h') } })
    })
    const legacy = await send({ 'x-a2a-extensions': URI })
    t.equal(legacy.headers.get('x-a2a-extensions'), URI)
    t.equal(legacy.headers.get('a2a-extensions'), null)
    t.ok(((await legacy.json()) as any).result.metadata[URI])
    const modern = await send({ 'a2a-extensions': URI })
    t.equal(modern.headers.get('a2a-extensions'), URI)
    t.equal(modern.headers.get('x-a2a-extensions'), null)
    const both = await send({ 'a2a-extensions': URI, 'x-a2a-extensions': 'https://example.com/other' })
    t.strictSame([both.headers.get('a2a-extensions'), both.headers.get('x-a2a-extensions')], [URI, URI])
    const none = await send({})
    t.strictSame([none.headers.get('a2a-extensions'), none.headers.get('x-a2a-extensions')], [null, null])
    t.equal(((await none.json()) as any).result.metadata?.[URI], undefined)
  })

  t.test(`${name}: 0.3 HTTP+JSON replies are JSON with the door's media type (a result and an error)`, async (t) => {
    const { door } = await serve(t, name)
    const sent = await fetch(`${door.base}/a2a/echo/rest/v1/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // The 0.3 REST wire is 0.3's ProtoJSON (what the 0.3 SDK's RestTransport sends).
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'h' }] } })
    })
    t.equal(sent.status, 200)
    t.equal(sent.headers.get('content-type'), 'application/json; charset=utf-8')
    t.match(await sent.json(), { message: { role: 'ROLE_AGENT' } })
    const unknown = await fetch(`${door.base}/a2a/tasks/rest/v1/tasks/${randomUUID()}`)
    t.equal(unknown.status, 404)
    t.equal(unknown.headers.get('content-type'), 'application/json; charset=utf-8')
    t.equal(((await unknown.json()) as any).code, -32001)
  })

  t.test(`${name}: a2aVersions ['1.0']: a 0.3 request is -32009, the card names no 0.3 interface, no 0.3 card`, async (t) => {
    const { door } = await serve(t, name, ['1.0'])
    const card = await get(door, '/a2a/tasks/.well-known/agent-card.json', { 'a2a-version': '0.3' })
    t.equal(card.json.url, undefined)
    t.equal(card.json.protocolVersion, undefined)
    t.equal(card.headers.get('vary'), null)
    t.strictSame(card.json.supportedInterfaces.map((entry: any) => entry.protocolVersion), ['1.0', '1.0'])
    for (const path of ['/a2a/tasks/v0.3/.well-known/agent-card.json', '/v0.3/.well-known/agent-card.json']) {
      t.match(await get(door, path), { status: 404, json: { message: 'agent "tasks" does not serve A2A 0.3' } })
    }
    const reply = await fetch(`${door.base}/a2a/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message('h') } })
    })
    t.equal(((await reply.json()) as any).error.code, -32009)
  })
}
