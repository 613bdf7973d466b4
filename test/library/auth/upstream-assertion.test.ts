/**
 * The caller's assertion (auth/upstream-assertion.ts): its header and claims, one per caller reused until a fifth of
 * its life is left, never another caller's, a walk-in's without `sub`, the cache bounded; and startUpstreamAgent
 * refusing `identity: assertion` without a key to sign with.
 */
import t from 'tap'
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import { createSigningKey, startUpstreamAgent } from 'a2a-converse/service'
import { createAssertionMinter } from '../../../packages/a2a-converse/src/auth/upstream-assertion.js'
import { privatePem } from '../../fixtures/card-signing.js'

const key = createSigningKey({ privateKey: privatePem('EdDSA'), kid: 'gw-key' })
const jwks = createLocalJWKSet({ keys: key.jwks.keys as never })

t.test('claims: iss, sub, aud, act, iat, exp, jti; verified against the published JWKS', async (t) => {
  const minter = createAssertionMinter({ key, issuer: 'https://gw.example', audience: 'https://shop.internal/' })
  const token = await minter.tokenFor({ id: 'alice' })
  t.strictSame(decodeProtectedHeader(token), { alg: 'EdDSA', kid: 'gw-key', typ: 'JWT' })
  const { payload } = await jwtVerify(token, jwks, { issuer: 'https://gw.example', audience: 'https://shop.internal/' })
  t.equal(payload.sub, 'alice')
  t.strictSame(payload.act, { sub: 'https://gw.example' })
  t.equal((payload.exp as number) - (payload.iat as number), 300, 'five minutes by default')
  t.match(payload.jti, /^[0-9a-f-]{36}$/)
  const walkIn = decodeJwt(await minter.tokenFor(undefined))
  t.equal(walkIn.sub, undefined, 'a walk-in: no sub')
  t.strictSame(walkIn.act, { sub: 'https://gw.example' })
})

t.test('one assertion per caller, reused until a fifth of its life is left, never another caller\'s', async (t) => {
  let now = 1_700_000_000_000
  const minter = createAssertionMinter({ key, issuer: 'https://gw.example', audience: 'up', lifetimeSec: 100, now: () => now })
  const alice = await minter.tokenFor({ id: 'alice' })
  const [again, bob] = await Promise.all([minter.tokenFor({ id: 'alice' }), minter.tokenFor({ id: 'bob' })])
  t.equal(again, alice, 'alice again: the same token')
  t.not(bob, alice)
  t.equal(decodeJwt(bob).sub, 'bob')
  now += 79_000
  t.equal(await minter.tokenFor({ id: 'alice' }), alice, 'at 79 s of 100: still reused')
  now += 2_000
  const renewed = await minter.tokenFor({ id: 'alice' })
  t.not(renewed, alice, 'at 81 s of 100: a new one')
  t.equal(decodeJwt(renewed).iat, Math.floor(now / 1000))
  t.equal(await minter.tokenFor(undefined), await minter.tokenFor(undefined), 'the walk-ins\' one assertion, kept too')
})

t.test('the cache is bounded: past maxCached callers the oldest is signed again', async (t) => {
  const minter = createAssertionMinter({ key, issuer: 'https://gw.example', audience: 'up', maxCached: 3 })
  const first = await minter.tokenFor({ id: 'c0' })
  t.equal(await minter.tokenFor({ id: 'c0' }), first)
  for (let index = 1; index <= 3; index++) await minter.tokenFor({ id: `c${index}` })
  t.not(await minter.tokenFor({ id: 'c0' }), first)
})

t.test('startUpstreamAgent: identity assertion needs a key to sign with', async (t) => {
  await t.rejects(startUpstreamAgent({ agentId: 'shop', upstream: { url: 'http://127.0.0.1:9/', identity: { mode: 'assertion' } } }),
    /option "assertions" must be given: agent "shop" sends assertions/)
})
