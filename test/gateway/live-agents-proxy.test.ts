/**
 * A proxied agent published, replaced and unpublished at runtime (docs/agents.md, docs/proxy.md): served at once with
 * the upstream's card (read before the switch) and relaying to it; replaced, its new overrides served and the
 * version before's card no longer followed; unpublished, 404 — on a memory gateway with a real upstream agent.
 */
import t from 'tap'
import { AUTH, Client, gateway } from '../fixtures/conversation-gateway.js'
import { startUpstream } from '../fixtures/upstream-agent.js'

async function change (app: Awaited<ReturnType<typeof gateway>>, method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) {
  return await app.inject({
    method,
    url,
    headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })
}

t.test('a proxied agent published, replaced and unpublished while the gateway runs', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const app = await gateway(t)
  t.equal((await change(app, 'POST', '/api/v1/agents', { id: 'relay', upstream: { url: upstream.base } })).statusCode, 201)
  const card = await app.inject('/a2a/relay/.well-known/agent-card.json')
  t.equal(card.statusCode, 200)
  t.equal(card.json().name, 'Shop upstream', "the upstream's card, read before the switch")
  const reply = await new Client(t, app, { agent: 'relay' }).send('hello there')
  t.match(JSON.stringify(reply), /hello there/, 'relayed to the upstream')

  t.equal((await change(app, 'PUT', '/api/v1/agents/relay', { upstream: { url: upstream.base }, name: 'Relay two' }, { 'if-match': '"1"' })).statusCode, 200)
  t.equal((await app.inject('/a2a/relay/.well-known/agent-card.json')).json().name, 'Relay two', 'the new version\'s override')
  t.match(JSON.stringify(await new Client(t, app, { agent: 'relay' }).send('again')), /again/)

  t.equal((await change(app, 'DELETE', '/api/v1/agents/relay')).statusCode, 204)
  t.equal((await app.inject('/a2a/relay/.well-known/agent-card.json')).statusCode, 404)
})
