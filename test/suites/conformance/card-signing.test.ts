/**
 * Conformance, both doors, with and without a mount path: with `cardSigning` every card served (each agent's, the
 * default, 0.3's by path and by header) carries a signature the official SDK verifies against the JWKS the door
 * publishes at `<mount>/.well-known/jwks.json` (fetched over the listening port), one byte changed fails, the ETag
 * stays while the card does; without it, cards are unsigned and there is no JWKS.
 */
import t from 'tap'
import Fastify from 'fastify'
import { converse } from 'a2a-converse/fastify'
import { converseRouter } from 'a2a-converse/express'
import { createSigningKey } from 'a2a-converse/service'
import { taskExecutor } from '../../fixtures/a2a-executors.js'
import { DOORS, get, serveDoor, type DoorAgent } from '../../fixtures/doors.js'
import { privatePem, protectedHeader, verifyCard } from '../../fixtures/card-signing.js'

const card = { name: 'Demo', description: 'A test agent', version: '1.0.0', capabilities: { streaming: true } }
const AGENTS: DoorAgent[] = [
  { id: 'demo', card, executor: taskExecutor() },
  { id: 'bare', card: { ...card, name: 'Bare' } }
]
const signing = createSigningKey({ privateKey: privatePem('ES256'), kid: 'card-key' })

for (const name of DOORS) {
  for (const mount of ['', '/v1']) {
    t.test(`${name}${mount}: every card signed, verified by the SDK against the served JWKS`, async (t) => {
      const door = await serveDoor(t, name, { agents: AGENTS, mount, cardSigning: signing })
      const jwks = await fetch(`${door.base}/.well-known/jwks.json`)
      t.equal(jwks.status, 200)
      t.equal(jwks.headers.get('content-type'), 'application/jwk-set+json; charset=utf-8')
      t.equal(jwks.headers.get('cache-control'), 'public, max-age=300')
      t.strictSame(await jwks.json(), signing.jwks)
      const reads: Array<[string, Record<string, string>?]> = [
        ['/a2a/demo/.well-known/agent-card.json'],
        ['/.well-known/agent-card.json'],
        ['/a2a/bare/.well-known/agent-card.json'],
        ['/a2a/demo/v0.3/.well-known/agent-card.json'],
        ['/v0.3/.well-known/agent-card.json'],
        ['/a2a/demo/.well-known/agent-card.json', { 'a2a-version': '0.3' }]
      ]
      for (const [path, headers] of reads) {
        const reply = await get(door, path, headers)
        t.equal(reply.status, 200, path)
        t.strictSame(protectedHeader(reply.json), { alg: 'ES256', kid: 'card-key', typ: 'JOSE', jku: `${door.base}/.well-known/jwks.json` })
        t.strictSame((await verifyCard(reply.json)).fetched, [`${door.base}/.well-known/jwks.json`], `${path}: verifies`)
        // One byte changed: the SDK refuses it.
        const tampered = { ...reply.json, description: reply.json.description.replace(/.$/, '!') }
        await t.rejects(verifyCard(tampered), /No valid signatures/, `${path}: tampered`)
        // The same card, the same signature: the ETag holds, and If-None-Match gets 304.
        const again = await get(door, path, headers)
        t.equal(again.headers.get('etag'), reply.headers.get('etag'))
        t.equal(again.text, reply.text)
        t.equal((await fetch(door.base + path, { headers: { ...headers, 'if-none-match': reply.headers.get('etag') as string } })).status, 304)
      }
      t.equal((await get(door, '/v0.3/.well-known/agent-card.json')).json.url, `${door.base}/a2a/demo`, 'the 0.3 card keeps its 0.3 fields')
    })
  }

  t.test(`${name}: without cardSigning, cards are unsigned and there is no JWKS`, async (t) => {
    const door = await serveDoor(t, name, { agents: AGENTS })
    t.equal((await get(door, '/a2a/demo/.well-known/agent-card.json')).json.signatures, undefined)
    t.equal((await fetch(`${door.base}/.well-known/jwks.json`)).status, 404)
  })
}

t.test('cardSigning takes only a key made by createSigningKey', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(converse, { agents: [{ id: 'a', card }], cardSigning: { ...signing } }) }, /option "cardSigning" must be a key made by createSigningKey/)
  t.throws(() => converseRouter({ agents: [{ id: 'a', card }], cardSigning: { ...signing } }), /option "cardSigning" must be a key made by createSigningKey/)
})
