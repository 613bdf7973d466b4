/** The gateway's cards: interface and MCP URLs (PUBLIC_URL, TRUST_PROXY, MCP_PUBLIC_URL), the default card, unknown agents, AGENTS_FILE. */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { buildGateway } from '../../src/gateway/app.js'
import { loadConfig } from '../../src/gateway/config.js'
import { rpc, startGateway, URI, userMessage } from '../fixtures/gateway-helpers.js'

async function gateway (t: Test, env: Record<string, string> = {}) {
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', ...env }) })
  t.teardown(() => app.close())
  return app
}

type Card = Record<string, any>

function urls (card: Card) {
  const converse = card.capabilities.extensions.find((entry: Card) => entry.uri === URI)
  return {
    interface: card.supportedInterfaces[0].url as string,
    mcp: converse.params.mcp.url as string,
    serverCard: converse.params.mcp.serverCardUrl as string
  }
}

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'agents.example.com' }

t.test('the JSONRPC interface is <public base>/a2a/<agentId>, protocol 1.0; from the request by default', async (t) => {
  const app = await gateway(t)
  const res = await app.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: 'gw.local:8080' } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const card = res.json()
  t.same(card.supportedInterfaces, [
    { url: 'http://gw.local:8080/a2a/demo', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://gw.local:8080/a2a/demo/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    // A2A_VERSIONS' default serves 0.3 too: listed the 1.0 way (docs/protocol-versions.md).
    { url: 'http://gw.local:8080/a2a/demo', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    { url: 'http://gw.local:8080/a2a/demo/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' }
  ])
  t.same(urls(card), {
    interface: 'http://gw.local:8080/a2a/demo',
    mcp: 'http://gw.local:8080/mcp/a/demo',
    serverCard: 'http://gw.local:8080/mcp/a/demo/server-card'
  })
  t.equal(card.name, 'Demo shop assistant')
  t.same(card.capabilities.streaming, true)
  t.same(card.capabilities.pushNotifications, true, 'a local agent delivers push notifications (docs/push.md)')
})

t.test('the default agent card is also at /.well-known/agent-card.json', async (t) => {
  const app = await gateway(t)
  const own = await app.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: 'gw.local' } })
  const wellKnown = await app.inject({ url: '/.well-known/agent-card.json', headers: { host: 'gw.local' } })
  t.equal(wellKnown.statusCode, 200)
  t.same(wellKnown.json(), own.json())
})

t.test('PUBLIC_URL wins over the request and forwarded headers; MCP_PUBLIC_URL defaults to it', async (t) => {
  const app = await gateway(t, { PUBLIC_URL: 'https://public.example.com/base/', TRUST_PROXY: 'true' })
  const card = (await app.inject({ url: '/.well-known/agent-card.json', headers: { host: 'gw.local', ...forwarded } })).json()
  t.same(urls(card), {
    interface: 'https://public.example.com/base/a2a/demo',
    mcp: 'https://public.example.com/base/mcp/a/demo',
    serverCard: 'https://public.example.com/base/mcp/a/demo/server-card'
  })
})

t.test('MCP_PUBLIC_URL: mcp.url is <MCP_PUBLIC_URL>/mcp/a/<agentId>, serverCardUrl one segment past it', async (t) => {
  const both = await gateway(t, { PUBLIC_URL: 'https://a2a.example.com', MCP_PUBLIC_URL: 'https://mcp.example.com/' })
  t.same(urls((await both.inject('/a2a/demo/.well-known/agent-card.json')).json()), {
    interface: 'https://a2a.example.com/a2a/demo',
    mcp: 'https://mcp.example.com/mcp/a/demo',
    serverCard: 'https://mcp.example.com/mcp/a/demo/server-card'
  })
  // MCP_PUBLIC_URL alone: the A2A base still comes from the request.
  const mcpOnly = await gateway(t, { MCP_PUBLIC_URL: 'https://mcp.example.com' })
  t.same(urls((await mcpOnly.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: 'gw.local' } })).json()), {
    interface: 'http://gw.local/a2a/demo',
    mcp: 'https://mcp.example.com/mcp/a/demo',
    serverCard: 'https://mcp.example.com/mcp/a/demo/server-card'
  })
})

t.test('with TRUST_PROXY set, X-Forwarded-Proto/Host from a trusted proxy decide the URLs (PUBLIC_URL unset)', async (t) => {
  for (const trust of ['true', '127.0.0.1', '10.0.0.0/8, 127.0.0.0/8']) {
    const app = await gateway(t, { TRUST_PROXY: trust })
    const card = (await app.inject({ url: '/a2a/demo/.well-known/agent-card.json', headers: { host: 'gw.local', ...forwarded } })).json()
    t.same(urls(card), {
      interface: 'https://agents.example.com/a2a/demo',
      mcp: 'https://agents.example.com/mcp/a/demo',
      serverCard: 'https://agents.example.com/mcp/a/demo/server-card'
    }, `TRUST_PROXY=${trust}`)
  }
})

t.test('forwarded headers are ignored without TRUST_PROXY, or from a proxy not in the list', async (t) => {
  const off = await gateway(t)
  const card = (await off.inject({ url: '/.well-known/agent-card.json', headers: { host: 'gw.local', ...forwarded } })).json()
  t.equal(urls(card).interface, 'http://gw.local/a2a/demo', 'TRUST_PROXY unset')
  t.equal(urls(card).mcp, 'http://gw.local/mcp/a/demo')
  t.equal(urls((await (await gateway(t, { TRUST_PROXY: 'false' })).inject({ url: '/.well-known/agent-card.json', headers: { host: 'gw.local', ...forwarded } })).json()).interface,
    'http://gw.local/a2a/demo', 'TRUST_PROXY=false')

  // Fastify 5.12 disabled hop-count trust for X-Forwarded-* (it cannot validate the immediate peer): a hop
  // count never lets forwarded headers decide the URLs (main.ts warns about it at start).
  const hops = await gateway(t, { TRUST_PROXY: '1' })
  t.equal(urls((await hops.inject({ url: '/.well-known/agent-card.json', headers: { host: 'gw.local', ...forwarded } })).json()).interface,
    'http://gw.local/a2a/demo', 'TRUST_PROXY=1 (a hop count)')

  const listed = await gateway(t, { TRUST_PROXY: '10.0.0.0/8' })
  const untrusted = await listed.inject({
    url: '/.well-known/agent-card.json', remoteAddress: '192.0.2.7', headers: { host: 'gw.local', ...forwarded }
  })
  t.equal(urls(untrusted.json()).interface, 'http://gw.local/a2a/demo', 'a peer outside the list is not trusted')
  const trusted = await listed.inject({
    url: '/.well-known/agent-card.json', remoteAddress: '10.1.2.3', headers: { host: 'gw.local', ...forwarded }
  })
  t.equal(urls(trusted.json()).interface, 'https://agents.example.com/a2a/demo', 'a peer inside the list is trusted')
})

t.test('forwarded headers reach the URLs over a real socket too (trusted loopback proxy)', async (t) => {
  const { base } = await startGateway(t, { TRUST_PROXY: '127.0.0.1' })
  const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: forwarded })).json() as Card
  t.equal(urls(card).interface, 'https://agents.example.com/a2a/demo')
  const direct = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Card
  t.equal(urls(direct).interface, `${base}/a2a/demo`)
})

t.test('an unknown agent id answers 404 with a JSON body', async (t) => {
  const app = await gateway(t)
  const card = await app.inject('/a2a/nobody/.well-known/agent-card.json')
  t.equal(card.statusCode, 404)
  t.match(card.headers['content-type'], /^application\/json/)
  t.same(card.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' })

  const post = await app.inject({
    method: 'POST',
    url: '/a2a/unknown',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    payload: rpc('SendMessage', { message: userMessage('hello') })
  })
  t.equal(post.statusCode, 404)
  t.match(post.headers['content-type'], /^application\/json/)
  t.same(post.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "unknown"' })
  t.equal(post.headers['a2a-extensions'], undefined, 'nothing is activated for an unknown agent')

  const tools = await app.inject('/api/v1/mcp/converse/tools?agentId=unknown')
  t.equal(tools.statusCode, 404)
  t.same(tools.json().error, 'Not Found')

  const route = await app.inject('/no/such/route')
  t.equal(route.statusCode, 404)
  t.match(route.headers['content-type'], /^application\/json/)
})

const documents = {
  'hours.md': '---\nid: hours\ntitle: Opening hours\n---\n\n# Opening hours\n\nThe library is open from 9 to 17 on weekdays.\n'
}

t.test('AGENTS_FILE with two agents (YAML): both served, the first is the default', async (t) => {
  const dir = t.testdir({
    docs: documents,
    'agents.yaml': [
      'agents:',
      '  - id: library',
      '    name: Library desk',
      '    description: Answers questions about the library.',
      '    executor: knowledge',
      '    documents: ./docs',
      '  - id: concierge',
      '    name: Concierge',
      '    description: Books rooms.',
      '    version: 2.1.0',
      '    routines:',
      '      - name: Book a room',
      '        toolName: book_room',
      '        description: Book a meeting room.',
      '        exposed: true',
      '        triggers: [book a room]',
      '        slots:',
      '          - { key: room, type: string, required: true, description: Which room. }',
      ''
    ].join('\n')
  })
  const app = await gateway(t, { AGENTS_FILE: join(dir, 'agents.yaml'), PUBLIC_URL: 'https://gw.example.com' })

  const library = (await app.inject('/a2a/library/.well-known/agent-card.json')).json()
  t.equal(library.name, 'Library desk')
  t.equal(library.supportedInterfaces[0].url, 'https://gw.example.com/a2a/library')
  t.same((await app.inject('/.well-known/agent-card.json')).json(), library, 'the first agent is the default')
  const concierge = (await app.inject('/a2a/concierge/.well-known/agent-card.json')).json()
  t.equal(concierge.name, 'Concierge')
  t.equal(concierge.version, '2.1.0')
  t.equal(concierge.supportedInterfaces[0].url, 'https://gw.example.com/a2a/concierge')
  t.same(urls(concierge).mcp, 'https://gw.example.com/mcp/a/concierge')
  t.same(concierge.capabilities.extensions[0].params.tools.map((tool: Card) => tool.toolName), ['book_room'])
  t.equal((await app.inject('/a2a/demo/.well-known/agent-card.json')).statusCode, 404, 'the demo is not served then')

  const ask = (agentId: string, text: string) => app.inject({
    method: 'POST',
    url: `/a2a/${agentId}`,
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    payload: rpc('SendMessage', { message: userMessage(text) })
  })
  const answer = (await ask('library', 'When is the library open?')).json()
  t.match(answer.result.message.parts[0].text, /9 to 17/)
  t.equal(answer.result.message.metadata[URI].citations[0].title, 'Opening hours')
  const routine = (await ask('concierge', 'Book a room please')).json()
  t.equal(routine.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.match(routine.result.task.status.message.metadata[URI].routine, { toolName: 'book_room', status: 'waiting_for_input' })
})

t.test('an AGENTS_FILE naming an unknown executor fails at start, naming the agent', async (t) => {
  const dir = t.testdir({
    'agents.json': JSON.stringify([
      { id: 'fine', name: 'Fine', description: 'd' },
      { id: 'odd', name: 'Odd', description: 'd', executor: 'telepathy' }
    ])
  })
  await t.rejects(
    buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', AGENTS_FILE: join(dir, 'agents.json') }) }),
    /agent "odd": unknown executor "telepathy" \(known: conversation, knowledge\)/
  )
})

t.test('agents and executors given as options replace AGENTS_FILE and extend the built-in executors', async (t) => {
  const calls: Array<{ id: string, services: string[] }> = []
  const app = await buildGateway({
    config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', AGENTS_FILE: '/no/such/file.json' }),
    agents: [{ id: 'custom', name: 'Custom', description: 'd', executor: 'canned' }],
    executors: {
      canned: (definition, services) => {
        calls.push({ id: definition.id, services: Object.keys(services).sort() })
        return { async execute () {}, async cancelTask () {} }
      }
    }
  })
  t.teardown(() => app.close())
  t.same(calls, [{ id: 'custom', services: ['conversations', 'events', 'maxReadChars', 'taskStore'] }])
  t.equal((await app.inject('/.well-known/agent-card.json')).json().name, 'Custom')
})

t.test('A2A_ROOT_ENDPOINT=true: the default agent also answers JSON-RPC posted to / (off by default)', async (t) => {
  const body = rpc('SendMessage', { message: userMessage('How long do I have to return an order?') })
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI }
  const off = await gateway(t)
  t.equal((await off.inject({ method: 'POST', url: '/', headers, payload: body })).statusCode, 404, 'off by default')
  const on = await gateway(t, { A2A_ROOT_ENDPOINT: 'true' })
  const base = await on.listen({ port: 0, host: '127.0.0.1' })
  const response = await fetch(`${base}/`, { method: 'POST', headers, body })
  t.equal(response.status, 200)
  t.equal(response.headers.get('a2a-extensions'), URI)
  const answer = await response.json() as Card
  t.match(answer.result.message.parts[0].text, /30 days/)
  t.equal(answer.result.message.metadata[URI].answerCoverage.coverage, 'answered')
})
