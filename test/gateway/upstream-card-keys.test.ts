/**
 * Upstream cards checked (docs/trust.md, `upstream.cardKeys`): an upstream built with the SDK that signs its card
 * (generateAgentCardSignature) is served, re-signed by the gateway after the rewrite, with its keys inline or at a
 * JWKS URL; one signed by another key, an unsigned one, or keys that cannot be read: the card is not used, the agent
 * not ready, /health/ready says why, and calls are -32050 until a card verifies.
 */
import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { join } from 'node:path'
import { generateAgentCardSignature, type AgentCard } from '@a2a-js/sdk'
import { loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'
import { rpc, startGateway, userMessage } from '../fixtures/gateway-helpers.js'
import { startUpstream } from '../fixtures/upstream-agent.js'
import { privatePem, verifyCard } from '../fixtures/card-signing.js'

type Json = Record<string, any>

function keyPair (kid: string): { privateKey: KeyObject, jwk: Json } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256' } }
}

function signer (privateKey: KeyObject, kid: string, jku?: string) {
  const sign = generateAgentCardSignature(privateKey, { alg: 'ES256', kid, typ: 'JOSE', ...(jku === undefined ? {} : { jku }) })
  return async (card: Record<string, unknown>) => await sign(card as unknown as AgentCard) as unknown as Record<string, unknown>
}

/** A JWKS at a URL of its own; `status` / `body` change what it answers. */
async function jwksServer (t: Test, jwks: Json) {
  const answer = { status: 200, body: JSON.stringify(jwks), hang: false }
  const server: Server = createServer((_request, response) => {
    if (!answer.hang) response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, answer }
}

t.test('a card signed with the configured keys is served, re-signed by the gateway; others are not used', async (t) => {
  const upstreamKey = keyPair('upstream-1')
  const other = keyPair('upstream-1')
  const signed = await startUpstream({ signCard: signer(upstreamKey.privateKey, 'upstream-1') })
  const forged = await startUpstream({ signCard: signer(other.privateKey, 'upstream-1') })
  const unsigned = await startUpstream()
  for (const upstream of [signed, forged, unsigned]) t.teardown(() => upstream.close())
  // An entry that is no key at all is skipped.
  const remote = await jwksServer(t, { keys: [null, upstreamKey.jwk] })
  const jwks = { keys: [upstreamKey.jwk] }
  const { base } = await startGateway(t, { SIGNING_KEY: privatePem('EdDSA') }, {
    agents: [
      { id: 'inline', upstream: { url: `${signed.base}/`, cardKeys: { jwks } } },
      { id: 'remote', upstream: { url: `${signed.base}/`, cardKeys: { jwksUrl: remote.url } } },
      { id: 'forged', upstream: { url: `${forged.base}/`, cardKeys: { jwks } } },
      { id: 'unsigned', upstream: { url: `${unsigned.base}/`, cardKeys: { jwks } } },
      { id: 'nokeys', upstream: { url: `${signed.base}/`, cardKeys: { jwksUrl: 'http://127.0.0.1:9/jwks.json' } } }
    ]
  })
  for (const id of ['inline', 'remote']) {
    const card = await (await fetch(`${base}/a2a/${id}/.well-known/agent-card.json`)).json() as Json
    t.equal(card.name, 'Shop upstream', `${id}: the upstream's card`)
    t.equal(card.supportedInterfaces[0].url, `${base}/a2a/${id}`, 'as rewritten')
    await verifyCard(card)
    await t.rejects(verifyCard({ ...card, name: `${card.name as string}!` }), /No valid signatures/, `${id}: one byte more fails`)
  }
  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 503)
  t.strictSame(await ready.json(), {
    status: 'unavailable',
    checks: { 'upstream:inline': 'ok', 'upstream:remote': 'ok', 'upstream:forged': 'failing', 'upstream:unsigned': 'failing', 'upstream:nokeys': 'failing' },
    reasons: {
      'upstream:forged': 'card signature does not verify with the configured keys',
      'upstream:unsigned': 'card is not signed',
      'upstream:nokeys': 'card keys not read: ECONNREFUSED'
    }
  })
  const forgedCard = await (await fetch(`${base}/a2a/forged/.well-known/agent-card.json`)).json() as Json
  t.equal(forgedCard.name, 'forged', 'not the upstream\'s card: the agents file\'s placeholder')
  const call = await (await fetch(`${base}/a2a/forged`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: rpc('SendMessage', { message: userMessage('hi') })
  })).json() as Json
  t.equal(call.error.code, -32050, 'no call goes to an upstream whose card did not verify')
})

t.test('a JWKS URL that answers badly: the reason says so', async (t) => {
  const upstreamKey = keyPair('k')
  const signed = await startUpstream({ signCard: signer(upstreamKey.privateKey, 'k') })
  t.teardown(() => signed.close())
  const cases: Array<[number, string, string]> = [
    [404, '{}', 'card keys not read: HTTP 404 from the JWKS URL'],
    [200, JSON.stringify({ keys: [{ kid: 'other' }] }), 'card signature does not verify with the configured keys'],
    [0, '', 'card keys not read: TimeoutError'],
    [200, 'not json', 'card keys not read: the JWKS URL answered no JSON'],
    [200, '{"keys": 1}', 'card keys not read: the JWKS URL answered no {"keys": [...]}'],
    [200, 'null', 'card keys not read: the JWKS URL answered no {"keys": [...]}'],
    [200, JSON.stringify({ keys: [{ kid: 'x' }], pad: 'p'.repeat(300_000) }), 'card keys not read: the JWKS exceeds 262144 bytes']
  ]
  const remote = await jwksServer(t, {})
  for (const [status, body, reason] of cases) {
    remote.answer.status = status
    remote.answer.body = body
    remote.answer.hang = status === 0
    const { base } = await startGateway(t, {}, { agents: [{ id: 'shop', upstream: { url: `${signed.base}/`, timeoutMs: 300, cardKeys: { jwksUrl: remote.url } } }] })
    t.strictSame((await (await fetch(`${base}/health/ready`)).json() as Json).reasons, { 'upstream:shop': reason })
  }
})

t.test('jkuHost: the keys the signature\'s jku names, read only from the configured host (https unless loopback)', async (t) => {
  const upstreamKey = keyPair('upstream-1')
  const ghost = keyPair('ghost')
  const remote = await jwksServer(t, { keys: [upstreamKey.jwk] })
  const host = new URL(remote.url).host
  const sign = signer(upstreamKey.privateKey, 'upstream-1', remote.url)
  const ghostFirst = signer(ghost.privateKey, 'ghost', remote.url)
  // Two signatures naming one jku (the first by a key the JWKS lacks): the JWKS read once, the second verifies.
  const twice = await startUpstream({ signCard: async (card) => await sign(await ghostFirst(card)) })
  const noJku = await startUpstream({ signCard: signer(upstreamKey.privateKey, 'upstream-1') })
  const plainHttp = await startUpstream({ signCard: signer(upstreamKey.privateKey, 'upstream-1', 'http://keys.example.test/jwks.json') })
  for (const upstream of [twice, noJku, plainHttp]) t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { SIGNING_KEY: privatePem('EdDSA') }, {
    agents: [
      { id: 'shop', upstream: { url: `${twice.base}/`, cardKeys: { jkuHost: host } } },
      { id: 'elsewhere', upstream: { url: `${twice.base}/`, cardKeys: { jkuHost: 'keys.example.test' } } },
      { id: 'nojku', upstream: { url: `${noJku.base}/`, cardKeys: { jkuHost: host } } },
      { id: 'http', upstream: { url: `${plainHttp.base}/`, cardKeys: { jkuHost: 'KEYS.example.test' } } }
    ]
  })
  const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Json
  t.equal(card.name, 'Shop upstream', 'verified with the keys at its jku')
  await verifyCard(card)
  t.strictSame((await (await fetch(`${base}/health/ready`)).json() as Json).reasons, {
    'upstream:elsewhere': 'card keys not read: a signature\'s jku is not on the configured host',
    'upstream:nojku': 'card keys not read: a signature names no jku URL',
    'upstream:http': 'card keys not read: a signature\'s jku is not https'
  })
})

t.test('cardKeys in the agents file: exactly one of jwks and jwksUrl, keys with a kid', async (t) => {
  const files: Record<string, unknown> = {
    'both.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jwks: { keys: [{ kid: 'k' }] }, jwksUrl: 'http://a/jwks' } } },
    'none.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: {} } },
    'nokid.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jwks: { keys: [{ kty: 'EC' }] } } } },
    'url.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jwksUrl: 'jwks.json' } } },
    'good.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jwksUrl: 'https://a.example/jwks.json' } } },
    'host-and-url.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jkuHost: 'a.example', jwksUrl: 'https://a.example/jwks.json' } } },
    'badhost.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jkuHost: 'https://a.example/' } } },
    'host.json': { id: 'a', upstream: { url: 'http://a/', cardKeys: { jkuHost: 'keys.a.example:8443' } } }
  }
  const dir = t.testdir(Object.fromEntries(Object.entries(files).map(([name, value]) => [name, JSON.stringify(value)])))
  const message = async (file: string) => await loadAgentDefinitions(join(dir, file)).then(() => '', (error: Error) => error.message)
  t.match(await message('both.json'), /agents\[0\]\.upstream\.cardKeys must have one of jwks \(a JWKS\), jwksUrl \(where to read one\) and jkuHost \(the host the card's jku must be on\), not two/)
  t.match(await message('host-and-url.json'), /agents\[0\]\.upstream\.cardKeys must have one of jwks/)
  t.match(await message('badhost.json'), /agents\[0\]\.upstream\.cardKeys\.jkuHost must match pattern/)
  t.equal(await message('host.json'), '')
  t.match(await message('none.json'), /agents\[0\]\.upstream\.cardKeys must have one of jwks/)
  t.match(await message('nokid.json'), /agents\[0\]\.upstream\.cardKeys\.jwks\.keys\.0 must have required property 'kid'/)
  t.match(await message('url.json'), /agents\[0\]\.upstream\.cardKeys\.jwksUrl must match pattern/)
  t.equal(await message('good.json'), '')
})
