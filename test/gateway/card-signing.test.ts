/**
 * Signed cards (docs/signing.md): with SIGNING_KEY(_FILE) every card the gateway serves — the default, each agent's,
 * 0.3's, a proxied agent's after the rewrite — carries a signature the official SDK verifies against the JWKS the
 * gateway serves (fetched over its listening port); the JWKS publishes the rotation's keys too, so a card signed with
 * the previous key still verifies; ES256, EdDSA and RS256 keys, PEM or JWK, inline or in a file; and each bad
 * setting stops the start naming its variable, never the key.
 */
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/gateway/config.js'
import { createSigningKey } from 'a2a-converse/service'
import { createCardSigner } from '../../packages/a2a-converse/src/auth/card-signer.js'
import { logLines, startGateway } from '../fixtures/gateway-helpers.js'
import { startUpstream } from '../fixtures/upstream-agent.js'
import { privateKey, privatePem, protectedHeader, verifyCard } from '../fixtures/card-signing.js'

type Card = Record<string, any>

t.test('every card served is signed after its rewrite; the SDK verifies each against the served JWKS', async (t) => {
  const upstream = await startUpstream({ card: { name: 'Shop upstream', description: 'The shop', signatures: [{ protected: 'e30', signature: 'upstream' }] } })
  t.teardown(() => upstream.close())
  const old = privateKey('ES256')
  const { d: _d, ...oldPublic } = { ...old.export({ format: 'jwk' }), kid: 'previous' }
  const dir = t.testdir({ 'signing.pem': privatePem('EdDSA'), 'previous.json': JSON.stringify({ keys: [oldPublic] }) })
  const log = logLines()
  const { app, base } = await startGateway(t, {
    LOG_LEVEL: 'info', SIGNING_KEY_FILE: join(dir, 'signing.pem'), SIGNING_KEY_ID: 'current', SIGNING_PUBLIC_KEYS_FILE: join(dir, 'previous.json')
  }, { agents: [{ id: 'demo', name: 'Demo', description: 'A demo' }, { id: 'shop', upstream: { url: `${upstream.base}/` } }], loggerStream: log.stream })
  t.equal(log.lines.find((line) => line.msg === 'gateway configured')?.cardSigning, 'current', 'the start line names the key id')

  const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json() as { keys: Card[] }
  t.strictSame(jwks.keys.map((key) => [key.kid, key.alg, key.d]), [['current', 'EdDSA', undefined], ['previous', 'ES256', undefined]])
  const jku = `${base}/.well-known/jwks.json`
  for (const path of [
    '/.well-known/agent-card.json', '/a2a/demo/.well-known/agent-card.json', '/a2a/shop/.well-known/agent-card.json',
    '/v0.3/.well-known/agent-card.json', '/a2a/demo/v0.3/.well-known/agent-card.json', '/a2a/shop/v0.3/.well-known/agent-card.json'
  ]) {
    const reply = await fetch(base + path)
    const card = await reply.json() as Card
    t.strictSame(protectedHeader(card), { alg: 'EdDSA', kid: 'current', typ: 'JOSE', jku }, path)
    t.equal(card.signatures.length, 1, `${path}: one signature, the gateway's`)
    t.strictSame((await verifyCard(card)).fetched, [jku], `${path}: the SDK verifies it`)
    await t.rejects(verifyCard({ ...card, name: `${card.name as string}.` }), /No valid signatures/, `${path}: one byte more fails`)
  }
  const shop = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Card
  t.equal(shop.name, 'Shop upstream')
  t.equal(shop.supportedInterfaces[0].url, `${base}/a2a/shop`, 'the proxied card as rewritten: the gateway\'s interfaces')

  // Rotation: a card signed with the previous key (held by a client since before the switch) still verifies; one
  // signed by a key the JWKS does not publish does not.
  const unsigned = { ...shop, signatures: undefined }
  const byPrevious = await createCardSigner(createSigningKey({ privateKey: old.export({ format: 'pem', type: 'pkcs8' }) as string, kid: 'previous' })).sign(unsigned, jku)
  await verifyCard(byPrevious)
  const byStranger = await createCardSigner(createSigningKey({ privateKey: privatePem('ES256'), kid: 'stranger' })).sign(unsigned, jku)
  await t.rejects(verifyCard(byStranger), /No valid signatures/)

  // A proxied agent's card changes (a refresh): the new card is signed anew, the ETag with it.
  const before = await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)
  app.converse.extension.setCard('shop', { name: 'Shop renamed', description: 'The shop' })
  const after = await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)
  const renamed = await after.json() as Card
  t.equal(renamed.name, 'Shop renamed')
  t.not(after.headers.get('etag'), before.headers.get('etag'))
  await verifyCard(renamed)
})

t.test('PUBLIC_URL: the jku is under it; ES256 inline on one line, RS256 as a JWK', async (t) => {
  const rsa = { ...privateKey('RS256').export({ format: 'jwk' }), kid: 'rsa-key' }
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ SIGNING_KEY: privatePem('ES256').trim().replaceAll('\n', '\\n') }, 'ES256', ''],
    [{ SIGNING_KEY: JSON.stringify(rsa) }, 'RS256', 'rsa-key'],
    [{ SIGNING_KEY: JSON.stringify(rsa), SIGNING_ALG: 'PS256' }, 'PS256', 'rsa-key']
  ]
  for (const [env, alg, kid] of cases) {
    const { base } = await startGateway(t, { ...env, PUBLIC_URL: 'https://agents.example.com/base' })
    const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Card
    const header = protectedHeader(card)
    t.equal(header.alg, alg)
    t.equal(header.jku, 'https://agents.example.com/base/.well-known/jwks.json')
    if (kid !== '') t.equal(header.kid, kid)
    const { fetched } = await verifyCard(card, (jku) => jku.replace('https://agents.example.com/base', base))
    t.strictSame(fetched, ['https://agents.example.com/base/.well-known/jwks.json'])
  }
})

t.test('bad signing settings stop the start naming the variable, never the key', async (t) => {
  const pem = privatePem('ES256')
  const publicJwk = { ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: 'p' }
  const dir = t.testdir({
    'key.pem': pem,
    'public.pem': generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }) as string,
    'notjson.json': 'keys: []',
    'nokeys.json': '{"keys": 3}',
    'null.json': 'null',
    'private.json': JSON.stringify({ keys: [{ ...privateKey('EdDSA').export({ format: 'jwk' }), kid: 'x' }] }),
    'good.json': JSON.stringify({ keys: [publicJwk] })
  })
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ SIGNING_KEY: pem, SIGNING_KEY_FILE: join(dir, 'key.pem') }, 'SIGNING_KEY', /and SIGNING_KEY_FILE are both set/],
    [{ SIGNING_KEY_ID: 'k' }, 'SIGNING_KEY_ID', /is set, but SIGNING_KEY \(or SIGNING_KEY_FILE\) is not/],
    [{ SIGNING_ALG: 'ES256' }, 'SIGNING_ALG', /is set, but SIGNING_KEY/],
    [{ SIGNING_PUBLIC_KEYS_FILE: join(dir, 'good.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /is set, but SIGNING_KEY/],
    [{ SIGNING_KEY_FILE: join(dir, 'missing.pem') }, 'SIGNING_KEY_FILE', /cannot be read: .*missing\.pem \(ENOENT\)/],
    [{ SIGNING_KEY_FILE: join(dir, 'public.pem') }, 'SIGNING_KEY_FILE', /is a public key/],
    [{ SIGNING_KEY: 'secret-ish' }, 'SIGNING_KEY', /must be a PEM private key/],
    [{ SIGNING_KEY: pem, SIGNING_ALG: 'EdDSA' }, 'SIGNING_ALG', /alg "EdDSA" does not fit this key \(ES256\)/],
    [{ SIGNING_KEY: pem, SIGNING_ALG: 'HS256' }, 'SIGNING_ALG', /must be one of ES256, ES384/],
    [{ SIGNING_KEY: JSON.stringify({ ...privateKey('ES256').export({ format: 'jwk' }), alg: 'RS256' }) }, 'SIGNING_KEY', /alg "RS256" does not fit/],
    [{ SIGNING_KEY: pem, SIGNING_KEY_ID: 'two words' }, 'SIGNING_KEY_ID', /must match pattern/],
    [{ SIGNING_KEY: pem, SIGNING_PUBLIC_KEYS_FILE: join(dir, 'missing.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /cannot be read/],
    [{ SIGNING_KEY: pem, SIGNING_PUBLIC_KEYS_FILE: join(dir, 'notjson.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /is not JSON/],
    [{ SIGNING_KEY: pem, SIGNING_PUBLIC_KEYS_FILE: join(dir, 'nokeys.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /must hold a JWKS/],
    [{ SIGNING_KEY: pem, SIGNING_PUBLIC_KEYS_FILE: join(dir, 'null.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /must hold a JWKS/],
    [{ SIGNING_KEY: pem, SIGNING_PUBLIC_KEYS_FILE: join(dir, 'private.json') }, 'SIGNING_PUBLIC_KEYS_FILE', /holds private material/]
  ]
  for (const [env, variable, message] of cases) {
    const error = (() => {
      try {
        loadConfig({ STATE: 'memory', ...env })
      } catch (error) {
        return error
      }
    })()
    t.ok(error instanceof ConfigError, JSON.stringify(Object.keys(env)))
    t.equal((error as ConfigError).variable, variable, String(message))
    t.match((error as Error).message, message)
    t.notOk((error as Error).message.includes(pem.split('\n')[1]), 'no key material')
  }
  const config = loadConfig({ STATE: 'memory', SIGNING_KEY_FILE: join(dir, 'key.pem'), SIGNING_PUBLIC_KEYS_FILE: join(dir, 'good.json') })
  t.strictSame(config.signing?.jwks.keys.map((key) => key.kid).slice(1), ['p'])
  t.equal(loadConfig({ STATE: 'memory' }).signing, undefined, 'no key: cards unsigned')
})
