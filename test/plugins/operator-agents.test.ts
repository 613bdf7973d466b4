/**
 * The operator API's agent routes (plugins/operator-agents.ts, docs/agents.md): list, read, publish, replace with
 * If-Match, open/close walk-ins, documents, unpublish, the audit; bad input 400 naming the field; AGENTS_FILE's agents
 * read-only; a published agent served at once and after a restart (embedded).
 */
import t from 'tap'
import Fastify from 'fastify'
import { join } from 'node:path'
import { Client, gateway, AUTH, OPERATOR_KEY } from '../fixtures/conversation-gateway.js'
import operatorApi from '../../plugins/operator-api.js'
import { MemoryAgentStore, AgentVersionConflictError, type AgentStore } from '../../packages/a2a-converse/src/stores/agent-store.js'
import { StoreUnavailableError } from '../../packages/a2a-converse/src/stores/errors.js'
import type { Inbox } from '../../packages/a2a-converse/src/runtime/inbox.js'
import type { FastifyInstance } from 'fastify'
import { conversationExecutorFactory } from '../../src/gateway/executors.js'

type Json = any

// Restarts of an embedded gateway (the last cases) take tens of seconds on a busy 2-core machine.
t.setTimeout(300_000)

function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method,
    url: `/api/v1/agents${path}`,
    headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) })
  })
}

const shop = {
  id: 'shop',
  name: 'Shop',
  description: 'Answers questions about the shop.',
  documents: [{ id: 'returns', title: 'Returns policy', body: 'You can return any item within 30 days of delivery for a full refund.', sourceUrl: 'https://shop.example.com/returns' }],
  routines: [{ name: 'order status', description: 'Looks an order up', exposed: true, toolName: 'order_status', slots: [{ key: 'order', type: 'string' as const, description: 'the order number', required: true }] }]
}

t.test('publish, read, replace with If-Match, open/close, documents, unpublish, the audit', async (t) => {
  const app = await gateway(t, { env: { A2A_API_KEYS: 'key-a:secret-key-a-0123456789', A2A_AUTH: 'walk-in' } })
  const listed = (await call(app, 'GET', '')).json()
  t.match(listed, { agents: [{ id: 'demo', source: 'file', served: 'file', walkIn: true, tools: ['book_table'] }], maxAgents: 1000 })

  const published = await call(app, 'POST', '', shop)
  t.equal(published.statusCode, 201)
  t.equal(published.headers.etag, '"1"')
  t.equal(published.headers.location, '/api/v1/agents/shop')
  t.match(published.json(), { id: 'shop', source: 'store', version: 1, updatedBy: 'operator', served: 1, walkIn: true, tools: ['order_status'], documents: 1, definition: shop })
  t.match(published.json().updatedAt, /^\d{4}-\d\d-\d\dT/)
  t.equal((await call(app, 'POST', '', shop)).statusCode, 409, 'a duplicate id')

  const got = await call(app, 'GET', '/shop')
  t.equal(got.headers.etag, '"1"')
  t.same(got.json().definition, shop)
  t.match((await call(app, 'GET', '')).json().agents.map((agent: Json) => agent.id), ['demo', 'shop'])

  const renamed = { ...shop, name: 'The shop' }
  const noMatch = await call(app, 'PUT', '/shop', renamed)
  t.equal(noMatch.statusCode, 428)
  t.match(noMatch.json(), { statusCode: 428, error: 'Precondition Required', message: /If-Match is required/ })
  const stale = await call(app, 'PUT', '/shop', renamed, { 'if-match': '"7"' })
  t.equal(stale.statusCode, 412)
  t.match(stale.json().message, /version 1 \(ETag "1"\)/)
  const replaced = await call(app, 'PUT', '/shop', { ...renamed, id: undefined }, { 'if-match': '"1"' })
  t.equal(replaced.statusCode, 200)
  t.equal(replaced.headers.etag, '"2"')
  t.equal(replaced.json().definition.name, 'The shop')
  t.equal(replaced.json().definition.id, 'shop', 'the path names the agent')
  t.equal((await call(app, 'PUT', '/shop', { ...renamed, id: 'other' }, { 'if-match': '*' })).statusCode, 400, 'another id in the body')
  t.equal((await call(app, 'PUT', '/shop', renamed, { 'if-match': 'W/"2"' })).statusCode, 412, 'a weak tag never matches')
  t.equal((await call(app, 'PUT', '/nobody', { ...renamed, id: undefined }, { 'if-match': '*' })).statusCode, 404)

  const closed = await call(app, 'POST', '/shop/close')
  t.match(closed.json(), { version: 3, walkIn: false, definition: { auth: 'required' } })
  const opened = await call(app, 'POST', '/shop/open', undefined, { 'if-match': '"3"' })
  t.match(opened.json(), { version: 4, walkIn: true, definition: { auth: 'walk-in' } })
  t.equal((await call(app, 'POST', '/shop/open', undefined, { 'if-match': '"3"' })).statusCode, 412)

  const document = { id: 'shipping', title: 'Shipping', body: 'We ship within two working days.' }
  const added = await call(app, 'POST', '/shop/documents', document)
  t.equal(added.statusCode, 201)
  t.match(added.json(), { version: 5, documents: 2 })
  const twice = await call(app, 'POST', '/shop/documents', document)
  t.equal(twice.statusCode, 409)
  t.match(twice.json().message, /already has a document "shipping"/)
  const bad = await call(app, 'POST', '/shop/documents', { id: 'x', title: 'X' })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /^agent\.documents\.2 must have required property 'body'/)
  const removed = await call(app, 'DELETE', '/shop/documents/returns')
  t.match(removed.json(), { version: 6, documents: 1 })
  t.equal((await call(app, 'DELETE', '/shop/documents/returns')).statusCode, 404)

  t.equal((await call(app, 'DELETE', '/shop', undefined, { 'if-match': '"5"' })).statusCode, 412)
  const gone = await call(app, 'DELETE', '/shop', undefined, { 'if-match': '"6"' })
  t.equal(gone.statusCode, 204)
  t.equal((await call(app, 'GET', '/shop')).statusCode, 404)
  t.equal((await call(app, 'DELETE', '/shop')).statusCode, 404)
  t.equal((await call(app, 'POST', '/shop/open')).statusCode, 404)

  const versions = (await call(app, 'GET', '/shop/versions')).json().versions
  t.same(versions.map((entry: Json) => [entry.version, entry.change, entry.detail]), [
    [7, 'unpublish', undefined], [6, 'remove-document', 'returns'], [5, 'add-document', 'shipping'], [4, 'open', undefined],
    [3, 'close', undefined], [2, 'replace', undefined], [1, 'publish', undefined]
  ])
  t.match(versions[0], { by: 'operator', at: /^\d{4}-/ })
  t.equal((await call(app, 'GET', '/nobody/versions')).statusCode, 404)
  t.match((await call(app, 'POST', '', shop)).json(), { version: 8 }, 'published again: its numbering continues')
})

t.test('AGENTS_FILE\'s agents are read-only', async (t) => {
  const app = await gateway(t)
  const demo = await call(app, 'GET', '/demo')
  t.equal(demo.statusCode, 200)
  t.equal(demo.headers.etag, undefined)
  t.match(demo.json(), { id: 'demo', source: 'file', definition: { id: 'demo' } })
  for (const [method, path, body, headers] of [
    ['POST', '', { ...shop, id: 'demo' }, {}],
    ['PUT', '/demo', shop, {}],
    ['PUT', '/demo', shop, { 'if-match': '*' }],
    ['POST', '/demo/close', undefined, {}],
    ['POST', '/demo/documents', { id: 'a', title: 'A', body: 'b' }, {}],
    ['DELETE', '/demo', undefined, {}],
    ['GET', '/demo/versions', undefined, {}]
  ] as const) {
    const res = await call(app, method, path, body, headers)
    t.equal(res.statusCode, 409, `${method} ${path}`)
    t.match(res.json(), { statusCode: 409, error: 'Conflict', message: 'agent "demo" is declared in AGENTS_FILE, which is read-only here: change the file' })
  }
})

t.test('bad input: 400 naming the field (or 413 past MAX_AGENT_BYTES, 409 past a bound), never a 500', async (t) => {
  const app = await gateway(t, { env: { MAX_AGENT_DOCUMENTS: '1', MAX_AGENT_BYTES: '2048', MAX_AGENTS: '1' } })
  const cases: Array<[unknown, number, RegExp]> = [
    [{ id: 'x', description: 'd' }, 400, /^agent must have required property 'name'$/],
    [{ ...shop, id: 'bad id' }, 400, /^agent\.id must match pattern/],
    [{ ...shop, auth: 'sometimes' }, 400, /^agent\.auth must be equal to one of the allowed values: "walk-in", "required"$/],
    [{ ...shop, documents: './docs' }, 400, /^agent\.documents: a folder is read from AGENTS_FILE only/],
    [{ ...shop, documents: [{ id: 'a b', title: 'T', body: '' }] }, 400, /^agent\.documents\.0\.id must match pattern/],
    [{ ...shop, documents: [{ id: 'a', title: 'T', body: '', sourceUrl: 'ftp://x' }] }, 400, /^agent\.documents\.0\.sourceUrl must match pattern/],
    [{ ...shop, documents: [{ id: 'a', title: 'T', body: '' }, { id: 'a', title: 'T', body: '' }] }, 400, /^agent\.documents\.1\.id "a" is used twice$/],
    [{ ...shop, documents: [{ id: 'a', title: 'T', body: '' }, { id: 'b', title: 'T', body: '' }] }, 400, /^agent\.documents holds 2 documents; MAX_AGENT_DOCUMENTS is 1$/],
    [{ ...shop, documents: 7 }, 400, /^agent\.documents must be array$/],
    [{ ...shop, executor: 'nope' }, 400, /^agent\.executor "nope" is not an executor of this gateway \(known: conversation, knowledge\)$/],
    [{ ...shop, auth: 'required' }, 400, /^agent\.auth "required": this gateway has no credentials to check/],
    [{ ...shop, upstream: { url: 'http://up.example.com' } }, 400, /^agent\.documents does not apply to an upstream agent/],
    [{ ...shop, routines: [{ name: 'r', description: 'd', exposed: true, slots: [] }] }, 400, /^agent "shop": routine "r": toolName is required/],
    [{ ...shop, description: 'x'.repeat(3000) }, 413, /^agent is \d+ bytes of JSON; MAX_AGENT_BYTES is 2048$/],
    [[shop], 400, /^agent must be object$/],
    ['null', 400, /^agent must be object$/]
  ]
  for (const [body, status, message] of cases) {
    const res = await call(app, 'POST', '', body)
    t.equal(res.statusCode, status, JSON.stringify(body).slice(0, 80))
    t.match(res.json(), { statusCode: status, message })
  }
  const notJson = await call(app, 'POST', '', '{ nope')
  t.equal(notJson.statusCode, 400)
  const yaml = await app.inject({ method: 'POST', url: '/api/v1/agents', headers: { ...AUTH, 'content-type': 'application/yaml' }, payload: 'id: tiny\nname: Tiny\ndescription: A tiny agent.\n' })
  t.equal(yaml.statusCode, 201, 'YAML as well as JSON')
  t.match(yaml.json(), { id: 'tiny', definition: { name: 'Tiny' } })
  const badYaml = await app.inject({ method: 'POST', url: '/api/v1/agents', headers: { ...AUTH, 'content-type': 'text/yaml' }, payload: 'a: [' })
  t.equal(badYaml.statusCode, 400)
  t.match(badYaml.json().message, /^body is not valid YAML: /)
  const full = await call(app, 'POST', '', { ...shop, documents: [] })
  t.equal(full.statusCode, 409)
  t.match(full.json().message, /the store holds the most agents it may \(1\); unpublish one first \(MAX_AGENTS\)/)
  t.equal((await call(app, 'POST', '/tiny/documents', { id: 'a', title: 'A', body: 'a' })).statusCode, 201)
  const past = await call(app, 'POST', '/tiny/documents', { id: 'b', title: 'B', body: 'b' })
  t.equal(past.statusCode, 409)
  t.match(past.json().message, /holds 1 documents, MAX_AGENT_DOCUMENTS/)
  t.equal((await call(app, 'GET', `/${'x'.repeat(200)}`)).statusCode, 400, 'an id past 128 characters')
  t.equal((await call(app, 'GET', '/tiny', undefined, { authorization: 'Bearer wrong-0123456789' })).statusCode, 401, 'the operator key guards them')
})

t.test('an upstream agent has no documents to add', async (t) => {
  const app = await gateway(t)
  const upstream = { id: 'up', upstream: { url: 'http://127.0.0.1:9/' } }
  t.equal((await call(app, 'POST', '', upstream)).statusCode, 201)
  const res = await call(app, 'POST', '/up/documents', { id: 'a', title: 'A', body: 'a' })
  t.equal(res.statusCode, 400)
  t.match(res.json().message, /is an upstream agent \(proxy mode\): it has no documents/)
  t.equal((await call(app, 'DELETE', '/up/documents/a')).statusCode, 404, 'nor any to remove')
  const notObject = await call(app, 'PUT', '/up', [1], { 'if-match': '"1"' })
  t.equal(notObject.statusCode, 400)
  t.match(notObject.json().message, /^agent must be object$/)
  t.equal((await call(app, 'POST', '', { ...shop, id: 'local', documents: [] })).statusCode, 201)
  const noDocument = await call(app, 'POST', '/local/documents', 'null')
  t.equal(noDocument.statusCode, 400)
  t.match(noDocument.json().message, /^agent\.documents\.0 must be object$/)
})

t.test('embedded: a published agent is served at once and after a restart; the file wins on a conflict', async (t) => {
  const dataDir = join(t.testdir(), 'data')
  const env = { STATE: 'embedded', DATA_DIR: dataDir }
  const first = await gateway(t, { env })
  t.equal((await call(first, 'POST', '', shop)).statusCode, 201)
  t.equal((await call(first, 'POST', '', { ...shop, id: 'odd', executor: 'knowledge' })).statusCode, 201)
  t.equal((await first.inject('/a2a/shop/.well-known/agent-card.json')).statusCode, 200, 'served at once')
  await first.close()

  const lines: string[] = []
  const second = await gateway(t, { env: { ...env, LOG_LEVEL: 'warn' }, loggerStream: { write: (line: string) => lines.push(line) > 0 } })
  const card = await second.inject('/a2a/shop/.well-known/agent-card.json')
  t.equal(card.statusCode, 200, 'served after a restart')
  t.equal(card.json().name, 'Shop')
  t.ok(card.json().skills.some((skill: Json) => skill.id === 'order_status'), 'its exposed routine is a skill')
  t.equal((await second.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 404, 'without AGENTS_FILE, the demo goes once the store holds agents')
  const reply = await new Client(t, second, { agent: 'shop' }).send('Can I return an item for a refund?')
  t.match(JSON.stringify(reply), /30 days/, 'its inline documents answer')
  t.match((await call(second, 'GET', '')).json().agents, [{ id: 'odd', served: 1 }, { id: 'shop', served: 1 }])
  await second.close()

  const definition = { ...shop, name: 'From the file' }
  const third = await gateway(t, { env: { ...env, LOG_LEVEL: 'warn' }, loggerStream: { write: (line: string) => lines.push(line) > 0 }, agents: [definition] })
  t.equal((await third.inject('/a2a/shop/.well-known/agent-card.json')).json().name, 'From the file')
  t.match(lines.join(''), /agent \\"shop\\" is in the state store and in AGENTS_FILE: the file's is served/)
  t.match((await call(third, 'GET', '')).json().agents, [{ id: 'shop', source: 'file' }, { id: 'odd', served: 1 }])
  const lone = await gateway(t, { env: { ...env, LOG_LEVEL: 'warn', DATA_DIR: join(t.testdir(), 'other') } })
  t.equal((await lone.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 200, 'an empty store: the demo')
})

t.test('a stored agent this gateway cannot serve is left out at start, with a warning', async (t) => {
  const dataDir = join(t.testdir(), 'data')
  const first = await gateway(t, { env: { STATE: 'embedded', DATA_DIR: dataDir, A2A_API_KEYS: 'key-a:secret-key-a-0123456789' }, executors: { mine: conversationExecutorFactory } })
  t.equal((await call(first, 'POST', '', { ...shop, auth: 'required' })).statusCode, 201)
  t.equal((await call(first, 'POST', '', { ...shop, id: 'custom', executor: 'mine', auth: 'walk-in' })).statusCode, 201)
  await first.close()
  const lines: string[] = []
  const second = await gateway(t, { env: { STATE: 'embedded', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, loggerStream: { write: (line: string) => lines.push(line) > 0 } })
  t.equal((await second.inject('/a2a/shop/.well-known/agent-card.json')).statusCode, 404)
  t.match(lines.join(''), /agent \\"shop\\" version 1 in the state store is not served: requires a credential/)
  t.match(lines.join(''), /agent \\"custom\\" version 1 in the state store is not served: executor \\"mine\\" is not one of this gateway's \(conversation, knowledge\)/)
  t.equal((await second.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 200, 'none served from the store: the demo')
  t.match((await call(second, 'GET', '/shop')).json(), { served: null, walkIn: false })
})

t.test('a change that lost a race is tried again; past the tries, 412', async (t) => {
  const store = new MemoryAgentStore()
  await store.create('a', { id: 'a', name: 'A', description: 'a' }, { by: 'operator', change: 'publish' })
  let races = 0
  const over = (methods: Partial<AgentStore>): AgentStore => ({
    maxAgents: store.maxAgents,
    list: async () => await store.list(),
    heads: async () => await store.heads(),
    get: async (id) => await store.get(id),
    create: async (...args) => await store.create(...args),
    replace: async (...args) => await store.replace(...args),
    delete: async (...args) => await store.delete(...args),
    versions: async (id) => await store.versions(id),
    close: async () => {},
    ...methods
  })
  const racing = over({
    replace: async (...args: Parameters<AgentStore['replace']>) => {
      if (races-- > 0) throw new AgentVersionConflictError('a', 99)
      return await store.replace(...args)
    }
  })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(operatorApi, {
    apiKey: OPERATOR_KEY,
    agentIds: [],
    inbox: {} as Inbox,
    agentAdmin: { store: racing, fileAgents: [], served: new Map(), executors: ['conversation'], authenticates: true, defaultAuth: 'required', maxAgentBytes: 1 << 20, maxAgentDocuments: 10 }
  })
  races = 2
  const res = await call(app, 'POST', '/a/close')
  t.equal(res.statusCode, 200)
  t.match(res.json(), { version: 2, walkIn: false })
  races = 10
  const lost = await call(app, 'POST', '/a/open')
  t.equal(lost.statusCode, 412)
  t.match(lost.json().message, /version 99/)
  races = 1
  t.equal((await call(app, 'POST', '/a/open', undefined, { 'if-match': '"2"' })).statusCode, 412, 'with If-Match, never tried again')
  const vanishing = over({ replace: async () => undefined, delete: async () => undefined })
  const other = Fastify()
  t.teardown(() => other.close())
  await other.register(operatorApi, {
    apiKey: OPERATOR_KEY,
    agentIds: [],
    inbox: {} as Inbox,
    agentAdmin: { store: vanishing, fileAgents: [], served: new Map(), executors: ['conversation'], authenticates: true, defaultAuth: 'walk-in', maxAgentBytes: 1 << 20, maxAgentDocuments: 10 }
  })
  t.equal((await call(other, 'POST', '/a/close')).statusCode, 404, 'unpublished between the read and the write')
  t.equal((await call(other, 'DELETE', '/a')).statusCode, 404)
  const down = Fastify({ logger: false })
  t.teardown(() => down.close())
  const unreachable = async (): Promise<never> => { throw new StoreUnavailableError(new Error('connection refused')) }
  await down.register(operatorApi, {
    apiKey: OPERATOR_KEY,
    agentIds: [],
    inbox: {} as Inbox,
    agentAdmin: { store: over({ list: unreachable, replace: unreachable }), fileAgents: [], served: new Map(), executors: ['conversation'], authenticates: true, defaultAuth: 'walk-in', maxAgentBytes: 1 << 20, maxAgentDocuments: 10 }
  })
  for (const path of ['', '/a/open']) {
    const res = await call(down, path === '/a/open' ? 'POST' : 'GET', path)
    t.equal(res.statusCode, 503, `the store unreachable: ${path}`)
    t.equal(res.json().message, 'the state store is unreachable; try again later')
  }
})
