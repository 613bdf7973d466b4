/**
 * The compatible card at the well-known path (an agent's `wellKnownCard: 'compat'`, the gateway's WELL_KNOWN_CARD;
 * docs/protocol-versions.md, "The card"), both doors: a request without `A2A-Version` gets 0.3's card (0.3's fields
 * beside the 1.0 interfaces), signed, with its own ETag, so the official 0.3.14 client works from the agent's
 * well-known URL, where it fails on the default strict card; the 1.0 client still picks a 1.0 interface, and a
 * request naming 1.0 still gets the strict card.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { ClientFactory } from 'a2a-sdk-v03/client'
import { ClientFactory as V1ClientFactory } from '@a2a-js/sdk/client'
import { AgentCard, SendMessageRequest } from '@a2a-js/sdk'
import { createSigningKey } from 'a2a-converse/service'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { DOORS, get, serveDoor } from '../../fixtures/doors.js'
import { privatePem, verifyCard } from '../../fixtures/card-signing.js'

const key = createSigningKey({ privateKey: privatePem('ES256'), kid: 'compat-1' })

for (const name of DOORS) {
  t.test(`${name}: the compatible card for a request without A2A-Version; the 0.3.14 client from the well-known URL`, async (t) => {
    const door = await serveDoor(t, name, {
      agents: [
        { id: 'echo', card: { name: 'Echo', description: 'message agent' }, executor: messageExecutor(), wellKnownCard: 'compat' },
        { id: 'strict', card: { name: 'Strict', description: 'message agent' }, executor: messageExecutor() }
      ],
      cardSigning: key
    })
    const rpc = `${door.base}/a2a/echo`
    const compat = await get(door, '/a2a/echo/.well-known/agent-card.json')
    t.match(compat.json, {
      name: 'Echo',
      protocolVersion: '0.3.0',
      url: rpc,
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: rpc, transport: 'JSONRPC' }, { url: `${rpc}/rest`, transport: 'HTTP+JSON' }],
      supportedInterfaces: [{ url: rpc, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url: `${rpc}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }]
    }, '0.3\'s fields beside the 1.0 interfaces')
    t.equal(compat.headers.get('vary'), 'A2A-Version')
    await verifyCard(compat.json)
    await t.rejects(verifyCard({ ...compat.json, name: 'Echo!' }), /No valid signatures/, 'one byte more fails')
    // The SDK's canonical form (canonicalizeAgentCard: through 1.0's AgentCard) leaves out members 1.0 does not know:
    // 0.3's fields are not covered by the signature (docs/signing.md, "What a signature covers").
    await verifyCard({ ...compat.json, url: 'https://elsewhere.example/' })
    t.match(await get(door, '/a2a/echo/v0.3/.well-known/agent-card.json'), { json: { url: rpc, protocolVersion: '0.3.0' } }, 'the same card the /v0.3/ path serves')

    const strict = await get(door, '/a2a/echo/.well-known/agent-card.json', { 'a2a-version': '1.0' })
    t.strictSame(Object.keys(strict.json).filter((member) => !(member in AgentCard.fromJSON({}))), [], 'A2A-Version: 1.0: the strict card')
    await verifyCard(strict.json)
    t.not(strict.headers.get('etag'), compat.headers.get('etag'), 'each card its own ETag')
    t.equal((await fetch(`${rpc}/.well-known/agent-card.json`, { headers: { 'if-none-match': String(compat.headers.get('etag')) } })).status, 304)
    t.equal((await fetch(`${rpc}/.well-known/agent-card.json`, { headers: { 'if-none-match': String(compat.headers.get('etag')), 'a2a-version': '1.0' } })).status, 200)
    t.notOk('url' in (await get(door, '/a2a/strict/.well-known/agent-card.json')).json, 'the default: the strict card')

    // The official 0.3.14 client, given the agent's URL as a new user would.
    const v03 = await new ClientFactory().createFromUrl(`${rpc}/`)
    const reply = await v03.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi' }] } }) as any
    t.match(reply, { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'echo: hi' }] })
    await t.rejects(new ClientFactory().createFromUrl(`${door.base}/a2a/strict/`), 'the strict card: the 0.3 client finds no endpoint')

    // The 1.0 client on the same URL picks the 1.0 interface.
    const v1 = await new V1ClientFactory().createFromUrl(`${rpc}/.well-known/agent-card.json`, '')
    const answer = await v1.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'v1' }] } })) as any
    t.match(answer, { parts: [{ content: { $case: 'text', value: 'echo: v1' } }] }, 'a 1.0 reply')
  })
}
