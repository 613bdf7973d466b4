/**
 * WELL_KNOWN_CARD (docs/protocol-versions.md, "The card"): `compat` serves, at the well-known path, for a request
 * without A2A-Version, the compatible card — signed with SIGNING_KEY like every card — and an agent's
 * `wellKnownCard` wins over it; the default stays 1.0's strict card. The library refuses another value.
 */
import t from 'tap'
import { join } from 'node:path'
import { createConverseExtension } from 'a2a-converse'
import { loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'
import { ConfigError, loadConfig } from '../../src/gateway/config.js'
import { startGateway } from '../fixtures/gateway-helpers.js'
import { privatePem, verifyCard } from '../fixtures/card-signing.js'

const agent = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: id, description: `${id} agent`, ...extra })

t.test('WELL_KNOWN_CARD=compat: the compatible card, signed; an agent\'s wellKnownCard wins', async (t) => {
  const { base } = await startGateway(t, { WELL_KNOWN_CARD: 'compat', SIGNING_KEY: privatePem('EdDSA') }, {
    agents: [agent('shop'), agent('kit', { wellKnownCard: 'v1' })]
  })
  const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.match(card, { protocolVersion: '0.3.0', url: `${base}/a2a/shop`, preferredTransport: 'JSONRPC', supportedInterfaces: [{ protocolVersion: '1.0' }] })
  await verifyCard(card)
  const fallback = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.equal(fallback.url, `${base}/a2a/shop`, 'the default agent\'s card at the root too')
  const strict = await (await fetch(`${base}/a2a/kit/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.notOk('url' in strict, 'wellKnownCard: v1 keeps the strict card')
  await verifyCard(strict)
})

t.test('the default is the strict card; bad values are refused', async (t) => {
  const { base } = await startGateway(t, {}, { agents: [agent('shop', { wellKnownCard: 'compat' }), agent('plain')] })
  t.equal((await (await fetch(`${base}/a2a/plain/.well-known/agent-card.json`)).json() as Record<string, unknown>).url, undefined)
  t.equal((await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, unknown>).url, `${base}/a2a/shop`)
  t.throws(() => loadConfig({ WELL_KNOWN_CARD: '0.3' }), ConfigError)
  const dir = t.testdir({ 'bad.json': JSON.stringify(agent('a', { wellKnownCard: 'legacy' })) })
  await t.rejects(loadAgentDefinitions(join(dir, 'bad.json')), /agents\[0\]\.wellKnownCard must be equal to one of the allowed values: "v1", "compat"/)
  t.throws(() => createConverseExtension({ agents: [{ id: 'a', card: { name: 'a', description: 'a' }, wellKnownCard: 'legacy' as never }] }),
    /option "agents\[0\]\.wellKnownCard" must be "v1" or "compat"/)
})
