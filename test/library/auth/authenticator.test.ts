/**
 * The authenticator alone: options checked with the option named, API keys kept only as digests, the JWKS fetched
 * again for a rotated key, a provider that cannot be reached told apart (503, not the caller's fault).
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  AuthenticationError, AuthenticationUnavailableError, bearerCredential, createAuthenticator, isCallerId
} from '../../../packages/a2a-converse/src/auth/authenticator.js'
import { InvalidOptionError } from 'a2a-converse'
import { ALICE_KEY, AUDIENCE, identityProvider, ISSUER } from '../../fixtures/auth.js'

const jwt = { jwksUrl: 'http://127.0.0.1:1/jwks.json', issuer: ISSUER, audience: AUDIENCE }

t.test('options are checked and errors name the option', async (t) => {
  const cases: Array<[unknown, string]> = [
    [null, 'authentication'],
    [{}, 'authentication'],
    [{ apiKeys: 'alice:key' }, 'apiKeys'],
    [{ apiKeys: [null] }, 'apiKeys[0]'],
    [{ apiKeys: [{ callerId: 'has space', key: ALICE_KEY }] }, 'apiKeys[0].callerId'],
    [{ apiKeys: [{ callerId: 'a'.repeat(129), key: ALICE_KEY }] }, 'apiKeys[0].callerId'],
    [{ apiKeys: [{ callerId: 'alice', key: 'short' }] }, 'apiKeys[0].key'],
    [{ apiKeys: [{ callerId: 'alice', key: 'with a space in it ok' }] }, 'apiKeys[0].key'],
    [{ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'alice', key: `${ALICE_KEY}2` }] }, 'apiKeys[1].callerId'],
    [{ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: ALICE_KEY }] }, 'apiKeys[1].key'],
    [{ jwt: null }, 'jwt'],
    [{ jwt: { ...jwt, jwksUrl: 'not a url' } }, 'jwt.jwksUrl'],
    [{ jwt: { ...jwt, jwksUrl: 'ftp://idp/jwks' } }, 'jwt.jwksUrl'],
    [{ jwt: { ...jwt, issuer: '' } }, 'jwt.issuer'],
    [{ jwt: { ...jwt, audience: 7 } }, 'jwt.audience'],
    [{ jwt: { ...jwt, callerClaim: 'a claim' } }, 'jwt.callerClaim'],
    [{ jwt: { ...jwt, clockToleranceSec: 301 } }, 'jwt.clockToleranceSec'],
    [{ jwt: { ...jwt, jwksTimeoutMs: 0 } }, 'jwt.jwksTimeoutMs'],
    [{ jwt: { ...jwt, jwksCooldownMs: -1 } }, 'jwt.jwksCooldownMs'],
    [{ jwt: { ...jwt, maxTokenAgeSec: 0 } }, 'jwt.maxTokenAgeSec'],
    [{ jwt: { ...jwt, maxTokenAgeSec: 1.5 } }, 'jwt.maxTokenAgeSec']
  ]
  for (const [options, option] of cases) {
    t.throws(() => createAuthenticator(options as never), InvalidOptionError, option)
    t.throws(() => createAuthenticator(options as never), { option } as never, option)
  }
})

t.test('the bearer credential: the scheme word in any case, exactly one credential', async (t) => {
  t.equal(bearerCredential('Bearer abc'), 'abc')
  t.equal(bearerCredential('bEaReR   abc'), 'abc')
  t.equal(bearerCredential('Bearer abc def'), undefined)
  t.equal(bearerCredential('Basic abc'), undefined)
  t.equal(bearerCredential(['Bearer a', 'Bearer b']), undefined, 'two headers')
  t.equal(bearerCredential(`Bearer ${'a'.repeat(9000)}`), undefined, 'too long to look at')
  t.ok(isCallerId('user@example.com'))
  t.notOk(isCallerId(''))
  t.notOk(isCallerId('unknown'), "the walk-ins' owner is no caller's")
  t.notOk(isCallerId(42))
})

t.test('API keys: the caller of a key; nothing else is a caller', async (t) => {
  const authenticator = createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: `${ALICE_KEY}-bob` }] })
  t.same(authenticator.accepts, { apiKeys: true, jwt: false })
  t.same(await authenticator.authenticate({ authorization: `Bearer ${ALICE_KEY}` }), { id: 'alice' })
  t.same(await authenticator.authenticate({ authorization: `Bearer ${ALICE_KEY}-bob` }), { id: 'bob' })
  t.equal(await authenticator.authenticate({}), undefined, 'no header: a walk-in')
  await t.rejects(authenticator.authenticate({ authorization: 'Bearer a.b.c' }), AuthenticationError, 'a token, and no JWT configured')
  const error = await authenticator.authenticate({ authorization: 'Bearer nope-nope-nope-nope' }).catch((error: unknown) => error) as AuthenticationError
  t.equal(error.code, 'A2A_CONVERSE_UNAUTHENTICATED')
  t.notOk(JSON.stringify({ ...error, message: error.message }).includes('nope'), 'the error keeps nothing of the credential')
})

t.test('one authentication per request: the same headers object is answered once', async (t) => {
  const authenticator = createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }] })
  let reads = 0
  const headers = { get authorization () { reads++; return `Bearer ${ALICE_KEY}` } }
  t.same(await authenticator.authenticate(headers), { id: 'alice' })
  t.same(await authenticator.authenticate(headers), { id: 'alice' })
  t.equal(reads, 1, 'the header was read once')
  const bad = { authorization: 'Bearer not-a-known-key-at-all' }
  await t.rejects(authenticator.authenticate(bad), AuthenticationError)
  await t.rejects(authenticator.authenticate(bad), AuthenticationError, 'a refusal is the same the second time')
})

t.test('JWT: a rotated signing key is fetched when a token names it', async (t) => {
  const provider = await identityProvider(t)
  const authenticator = createAuthenticator({ jwt: { jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE, jwksCooldownMs: 0 } })
  t.same(await authenticator.authenticate({ authorization: `Bearer ${await provider.token('carol')}` }), { id: 'carol' })
  t.equal(provider.fetches(), 1)
  t.same(await authenticator.authenticate({ authorization: `Bearer ${await provider.token('dave')}` }), { id: 'dave' })
  t.equal(provider.fetches(), 1, 'the keys are cached')
  await provider.rotate()
  t.same(await authenticator.authenticate({ authorization: `Bearer ${await provider.token('carol')}` }), { id: 'carol' }, 'a token of the new key')
  t.equal(provider.fetches(), 2, 'fetched again for the new kid')
})

t.test('JWT: the caller id from another claim; a token without it names nobody', async (t) => {
  const provider = await identityProvider(t)
  const authenticator = createAuthenticator({ jwt: { jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE, callerClaim: 'client_id' } })
  t.same(await authenticator.authenticate({ authorization: `Bearer ${await provider.token('carol', { client_id: 'shop-frontend' })}` }), { id: 'shop-frontend' })
  await t.rejects(authenticator.authenticate({ authorization: `Bearer ${await provider.token('carol')}` }), AuthenticationError)
})

t.test('JWT: a provider that cannot be reached or answers nonsense is not the caller\'s fault', async (t) => {
  const provider = await identityProvider(t)
  const token = await provider.token('carol')
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const unreachable = createAuthenticator({ jwt: { jwksUrl: `http://127.0.0.1:${port}/jwks.json`, issuer: ISSUER, audience: AUDIENCE } })
  await t.rejects(unreachable.authenticate({ authorization: `Bearer ${token}` }), AuthenticationUnavailableError, 'connection refused')

  const nonsense = createServer((_request, response) => { response.setHeader('content-type', 'application/json'); response.end('{"keys": 7}') })
  await new Promise<void>((resolve) => nonsense.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => nonsense.close(() => resolve())))
  const broken = createAuthenticator({ jwt: { jwksUrl: `http://127.0.0.1:${(nonsense.address() as AddressInfo).port}/`, issuer: ISSUER, audience: AUDIENCE } })
  await t.rejects(broken.authenticate({ authorization: `Bearer ${token}` }), AuthenticationUnavailableError, 'an invalid JWKS document')
})
