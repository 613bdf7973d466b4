/**
 * The extended card signed (docs/signing.md): with `cardSigning`, what GetExtendedAgentCard answers on both doors —
 * JSON-RPC and HTTP+JSON — carries the door's signature, made after the user's callback (any signature it carried is
 * replaced), which the official SDK's verifyAgentCardSignature checks against the door's JWKS; one byte changed
 * fails. A 0.3 reader's extended card (`agent/getAuthenticatedExtendedCard`: 0.3's fields added after) carries none.
 */
import t from 'tap'
import { createSigningKey } from 'a2a-converse/service'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, get, post, serveDoor } from '../../fixtures/doors.js'
import { privatePem, protectedHeader, verifyCard } from '../../fixtures/card-signing.js'

const key = createSigningKey({ privateKey: privatePem('ES256'), kid: 'ext-1' })

for (const name of DOORS) {
  t.test(`${name}: the extended card is signed last`, async (t) => {
    const door = await serveDoor(t, name, {
      agents: [{
        id: 'demo',
        card: { name: 'Demo', description: 'demo agent', capabilities: { extendedAgentCard: true } },
        executor: messageExecutor(),
        extendedCard: () => ({ name: 'Demo', description: 'for callers only', version: '1.0.0', signatures: [{ protected: 'eyJ9', signature: 'stale' }] })
      }],
      cardSigning: key
    })
    const rpc = await call(door, 'GetExtendedAgentCard', {})
    const card = rpc.json.result
    t.equal(card.description, 'for callers only')
    t.equal(card.signatures.length, 1, 'the callback\'s own signature replaced')
    t.match(protectedHeader(card), { alg: 'ES256', kid: 'ext-1', jku: `${door.base}/.well-known/jwks.json` })
    await verifyCard(card)
    await t.rejects(verifyCard({ ...card, description: `${card.description as string}!` }), /No valid signatures/, 'one byte more fails')

    const rest = await get(door, '/a2a/demo/rest/extendedAgentCard', { 'a2a-version': '1.0' })
    t.equal(rest.status, 200)
    await verifyCard(rest.json)

    const v03 = await post(door, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agent/getAuthenticatedExtendedCard' }), { headers: { 'a2a-version': [] } })
    t.match(v03.json.result, { description: 'for callers only', protocolVersion: '0.3.0' })
    t.notOk('signatures' in v03.json.result, '0.3\'s extended card: unsigned (its fields were added after)')
  })
}
