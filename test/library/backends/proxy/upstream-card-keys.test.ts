/**
 * A card source with `verify` (upstream-card.ts, upstream-card-keys.ts): a card that does not verify is not used,
 * `problem()` says why, and it is read again; once one verifies it is used and the problem cleared; a refreshed card
 * that does not verify leaves the last verified one in use.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent } from 'undici'
import { upstreamCardSource } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-card.js'
import { UpstreamCardSignatureError } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-card-keys.js'

t.test('verify decides whether a card read is used', async (t) => {
  let name = 'First'
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      name, supportedInterfaces: [{ url: '/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]
    }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.close())
  let accept = false
  const checked: string[] = []
  const source = upstreamCardSource({
    agentId: 'shop',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    dispatcher,
    timeoutMs: 1000,
    ttlMs: 20,
    retryMs: 5,
    verify: async (card) => {
      checked.push((card as { name: string }).name)
      if (!accept) throw new UpstreamCardSignatureError('card is not signed')
    }
  })
  t.teardown(() => source.close())
  t.equal(await source.start(), undefined, 'not verified: not used')
  t.equal(source.problem(), 'card is not signed')
  while (checked.length < 3) await sleep(5)
  t.equal(source.current(), undefined, 'read again, still not used')
  accept = true
  while (source.current() === undefined) await sleep(5)
  t.equal(source.current()?.served.name, 'First')
  t.equal(source.problem(), undefined)
  accept = false
  name = 'Forged'
  const before = checked.length
  while (checked.length < before + 2) await sleep(5)
  t.equal(source.current()?.served.name, 'First', 'the last verified card stays')
  t.equal(source.problem(), 'card is not signed')
})
