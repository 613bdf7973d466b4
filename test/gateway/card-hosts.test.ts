/**
 * What a request's Host / X-Forwarded-* may put into a card (issue 41, finding 4): every card the gateway serves
 * (an agent's, the root one, both 0.3 ones, the MCP server card) and the MCP door refuse a scheme or host that is not
 * http(s) and a host[:port] with 400, a card built from the request is `private` (no shared cache keeps one client's
 * card for all), PUBLIC_HOSTS narrows the hosts, and a fixed PUBLIC_URL keeps the cards public whatever the headers.
 * Raw requests on the listening port: a client library would not send these headers.
 */
import t from 'tap'
import { request } from 'node:http'
import { connect } from 'node:net'
import express from 'express'
import type { AddressInfo } from 'node:net'
import { configWarnings, loadConfig } from '../../src/gateway/config.js'
import { converseRouter } from 'a2a-converse/express'
import Fastify from 'fastify'
import { converse } from 'a2a-converse/fastify'
import { startGateway, URI } from '../fixtures/gateway-helpers.js'

interface Raw { status: number, headers: Record<string, string | string[] | undefined>, body: string }

async function raw (port: number, path: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<Raw> {
  return await new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => {
        resolve({ status: response.statusCode as number, headers: response.headers, body: text })
      })
    })
    sent.on('error', reject)
    sent.end(body)
  })
}

const CARDS = [
  '/a2a/demo/.well-known/agent-card.json',
  '/.well-known/agent-card.json',
  '/a2a/demo/v0.3/.well-known/agent-card.json',
  '/v0.3/.well-known/agent-card.json',
  '/mcp/a/demo/server-card'
]

/** Hosts that must not reach a URL: a path and query, user info, a list, a bad port, a bad name or address. */
const BAD_HOSTS = [
  'evil.example/p?q=', 'evil.example?x', 'evil.example#f', 'user@evil.example', 'evil.example, good.example',
  'evil.example:99999', 'evil.example:0', 'evil.example:x', '[::1', '[fe80::1%25eth0]', '[not:an:address]', '[1::2::3]',
  '-evil.example', 'evil..example', 'evil_example.com', '999.1.1.1', `${'a'.repeat(64)}.example`, 'javascript:alert(1)'
]

function mcpUrl (body: string): string {
  const card = JSON.parse(body)
  const converse = card.capabilities?.extensions?.find((entry: { uri: string }) => entry.uri === URI)
  return converse?.params.mcp.url ?? card.remotes?.[0]?.url
}

t.test('Host and X-Forwarded-*: only http(s) and a host[:port] reach a card, every card route and the MCP door', async (t) => {
  const { port } = await startGateway(t, { TRUST_PROXY: 'true' })
  for (const path of CARDS) {
    for (const host of BAD_HOSTS) {
      const direct = await raw(port, path, { host })
      t.equal(direct.status, 400, `${path}, Host ${host}`)
      t.match(JSON.parse(direct.body), { statusCode: 400, code: 'A2A_CONVERSE_REQUEST_HOST', message: /Host/ })
      t.notOk(direct.body.includes('evil'), 'the header\'s value is not echoed')
      // A forwarded list is Fastify's to read: it takes the last entry, the nearest proxy's.
      if (!host.includes(',')) t.equal((await raw(port, path, { host: 'good.example', 'x-forwarded-host': host })).status, 400, `${path}, X-Forwarded-Host ${host}`)
    }
    for (const proto of ['javascript', 'ftp', 'https://evil.example/', 'https, javascript']) {
      const refused = await raw(port, path, { host: 'good.example', 'x-forwarded-proto': proto })
      t.equal(refused.status, 400, `${path}, X-Forwarded-Proto ${proto}`)
      t.match(JSON.parse(refused.body).message, /scheme/)
    }
    const good = await raw(port, path, { host: 'Good.Example:8443', 'x-forwarded-proto': 'https', 'a2a-version': '1.0' })
    t.equal(good.status, 200, path)
    t.equal(good.headers['cache-control'], 'private, max-age=300', `${path}: built from the request, private`)
    t.match(mcpUrl(good.body), /^https:\/\/good\.example:8443\/mcp\/a\/demo/, `${path}: the checked origin, lower case`)
    for (const host of ['127.0.0.1:8080', '[::1]:8080', 'localhost']) {
      t.equal((await raw(port, path, { host })).status, 200, `${path}, Host ${host}`)
    }
  }
  // The MCP door builds the server's identity from the same URLs.
  const initialize = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }
  })
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const refused = await raw(port, '/mcp/a/demo', { ...mcpHeaders, host: 'evil.example/p?q=' }, 'POST', initialize)
  t.equal(refused.status, 400, 'MCP POST with a bad Host')
  t.match(JSON.parse(refused.body), { code: 'A2A_CONVERSE_REQUEST_HOST' })
  t.equal((await raw(port, '/mcp/a/demo', { ...mcpHeaders, host: 'good.example' }, 'POST', initialize)).status, 200, 'MCP POST with a good Host')
})

t.test('PUBLIC_HOSTS: only the listed hosts (any port, or the one named) make cards', async (t) => {
  const { port } = await startGateway(t, { TRUST_PROXY: 'true', PUBLIC_HOSTS: ' agents.example.com , Other.Example:8443 ' })
  for (const path of CARDS) {
    t.equal((await raw(port, path, { host: 'agents.example.com' })).status, 200, `${path}: listed`)
    t.equal((await raw(port, path, { host: 'agents.example.com:9000' })).status, 200, `${path}: listed without a port, any port`)
    t.equal((await raw(port, path, { host: 'other.example:8443' })).status, 200, `${path}: listed with its port, any case`)
    t.equal((await raw(port, path, { host: 'other.example' })).status, 400, `${path}: listed with a port, not without`)
    const unlisted = await raw(port, path, { host: 'evil.example' })
    t.equal(unlisted.status, 400, `${path}: not listed`)
    t.match(JSON.parse(unlisted.body).message, /not a public host/)
    t.equal((await raw(port, path, { host: 'agents.example.com', 'x-forwarded-host': 'evil.example' })).status, 400, `${path}: forwarded, not listed`)
  }
  for (const bad of [',', 'evil.example/p', 'a:99999']) {
    t.throws(() => loadConfig({ PUBLIC_HOSTS: bad }), { name: 'ConfigError', variable: 'PUBLIC_HOSTS' }, bad)
  }
})

t.test('a fixed PUBLIC_URL: the headers are not read, the cards stay public', async (t) => {
  const { port } = await startGateway(t, { PUBLIC_URL: 'https://agents.example.com', TRUST_PROXY: 'true' })
  for (const path of CARDS) {
    const reply = await raw(port, path, { host: 'evil.example/p?q=', 'x-forwarded-proto': 'javascript' })
    t.equal(reply.status, 200, path)
    t.equal(reply.headers['cache-control'], 'public, max-age=300', path)
    t.match(mcpUrl(reply.body), /^https:\/\/agents\.example\.com\/mcp\/a\/demo/)
  }
})

t.test('the warning at start: PUBLIC_URL unset with NODE_ENV=production', async (t) => {
  const [warning] = configWarnings(loadConfig({}), { NODE_ENV: 'production' })
  t.match(warning, /PUBLIC_URL is unset.*any valid host.*private/)
  t.match(configWarnings(loadConfig({ PUBLIC_HOSTS: 'a.example' }), { NODE_ENV: 'production' })[0], /one of PUBLIC_HOSTS/)
  t.same(configWarnings(loadConfig({ PUBLIC_URL: 'https://a.example' }), { NODE_ENV: 'production' }), [])
  t.same(configWarnings(loadConfig({}), { NODE_ENV: 'development' }), [])
})

t.test('the Express router checks the same, with its publicHosts', async (t) => {
  const app = express()
  app.set('trust proxy', true)
  app.use(converseRouter({ agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }], publicHosts: ['good.example'] }))
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const { port } = server.address() as AddressInfo
  for (const path of ['/a2a/demo/.well-known/agent-card.json', '/.well-known/agent-card.json']) {
    t.equal((await raw(port, path, { host: 'evil.example/p?q=' })).status, 400, path)
    t.equal((await raw(port, path, { host: 'good.example', 'x-forwarded-proto': 'javascript' })).status, 400, path)
    t.equal((await raw(port, path, { host: 'evil.example' })).status, 400, `${path}: not on publicHosts`)
    const good = await raw(port, path, { host: 'good.example' })
    t.equal(good.status, 200, path)
    t.equal(good.headers['cache-control'], 'private, max-age=300')
  }
  // HTTP/1.0 may leave the Host out: nothing to build a URL from, the same 400.
  const socket = connect(port, '127.0.0.1')
  socket.end('GET /.well-known/agent-card.json HTTP/1.0\r\n\r\n')
  let answer = ''
  for await (const chunk of socket) answer += String(chunk)
  t.match(answer, /^HTTP\/1\.1 400 [\s\S]*A2A_CONVERSE_REQUEST_HOST/, 'no Host at all: 400')
  t.throws(() => converseRouter({ agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }], publicHosts: ['a/b'] }), { name: 'InvalidOptionError' })
  t.throws(() => converseRouter({ agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }], publicHosts: 'a' as never }), { name: 'InvalidOptionError' })
  t.throws(() => converseRouter({ agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }], publicHosts: [] }), { name: 'InvalidOptionError' })
  t.throws(() => converseRouter({ agents: [{ id: 'demo', card: { name: 'D', description: 'd' } }], publicHosts: [3 as never] }), { name: 'InvalidOptionError' })
})

t.test('the Fastify plugin: a publicUrl function of the user\'s that throws is its own failure (500), not a host refusal', async (t) => {
  const app = Fastify()
  await app.register(converse, { agents: [{ id: 'demo', card: { name: 'Demo', description: 'd' } }], publicUrl: () => { throw new Error('no tenant') } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const reply = await raw((app.server.address() as AddressInfo).port, '/.well-known/agent-card.json', { host: 'good.example' })
  t.equal(reply.status, 500)
  t.equal(reply.headers['cache-control'], undefined)
})

// The Express router with a fixed publicUrl: the headers are not read, the cards public; a function mcpPublicUrl: private.
const agents = [{ id: 'demo', card: { name: 'Demo', description: 'd' } }]
for (const [options, cacheControl] of [
  [{ publicUrl: 'https://agents.example.com' }, 'public, max-age=300'],
  [{ publicUrl: 'https://agents.example.com', mcpPublicUrl: 'https://mcp.example.com' }, 'public, max-age=300'],
  [{ publicUrl: 'https://agents.example.com', mcpPublicUrl: () => 'https://mcp.example.com' }, 'private, max-age=300']
] as const) {
  t.test(`the Express router, ${Object.entries(options).map(([name, value]) => `${name} ${typeof value}`).join(', ')}: ${cacheControl}`, async (t) => {
    const app = express()
    app.use(converseRouter({ agents, ...options }))
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    t.teardown(() => new Promise((resolve) => server.close(resolve)))
    const reply = await raw((server.address() as AddressInfo).port, '/.well-known/agent-card.json', { host: 'evil.example/p?q=' })
    t.equal(reply.status, 200, 'the Host is not read')
    t.equal(reply.headers['cache-control'], cacheControl)
    t.match(mcpUrl(reply.body), /^https:\/\/(mcp|agents)\.example\.com\/mcp\/a\/demo/)
  })
}
