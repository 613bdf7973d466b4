/**
 * The RFC 8693 token exchange of `upstream.identity.mode: exchange` (backends/proxy/token-exchange.ts) against a
 * real token endpoint (test/fixtures/token-endpoint.ts): the request's fields, the token kept per caller until a
 * fifth of its life is left (not kept without `expires_in`), concurrent calls sharing one exchange, the cache bounded
 * (least recently used out), and every way the endpoint can fail a -32050 naming no secret and no token.
 */
import t from 'tap'
import { Agent } from 'undici'
import { decodeJwt } from 'jose'
import { startUpstreamAgent } from 'a2a-converse/service'
import { createTokenExchange, type TokenExchangeOptions } from '../../../../packages/a2a-converse/src/backends/proxy/token-exchange.js'
import { upstreamIdentity } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-identity.js'
import { recordCredential } from '../../../../packages/a2a-converse/src/auth/caller-credential.js'
import { UpstreamError } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-errors.js'
import { AUDIENCE, identityProvider, ISSUER } from '../../../fixtures/auth.js'
import { CLIENT_ID, CLIENT_SECRET, startTokenEndpoint } from '../../../fixtures/token-endpoint.js'

const provider = await identityProvider(t)
const sts = await startTokenEndpoint({ jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE })
t.teardown(sts.close)
const dispatcher = new Agent()
t.teardown(() => dispatcher.close())

/** A caller as the authenticator makes one for a bearer JWT. */
async function jwtCaller (id: string) {
  const caller = { id }
  recordCredential(caller, 'jwt', await provider.token(id), Date.now() + 300_000)
  return caller
}

function exchanger (options: Partial<TokenExchangeOptions> = {}) {
  return createTokenExchange({ agentId: 'shop', tokenEndpoint: sts.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: 'https://shop/', dispatcher, timeoutMs: 5000, ...options })
}

/** The -32050's message of a failed exchange. */
async function failure (promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (error: unknown) => error)
  if (!(error instanceof UpstreamError)) throw new Error('not an UpstreamError')
  if (error.error.code !== -32050) throw new Error(`code ${error.error.code}`)
  return error.error.message
}

t.beforeEach(() => {
  sts.answer = undefined
  sts.lifeSec = 600
  sts.forms.length = 0
})

t.test('kept per caller until a fifth of its life is left; the request names resource and the subject token type', async (t) => {
  let now = 1_700_000_000_000
  const exchange = exchanger({ now: () => now, resource: 'https://shop/orders', subjectTokenType: 'jwt' })
  const alice = await jwtCaller('alice')
  const calls = sts.calls()
  const [first, shared] = await Promise.all([exchange.tokenFor(alice), exchange.tokenFor(alice)])
  t.equal(shared, first, 'concurrent calls share one exchange')
  t.equal(sts.calls() - calls, 1)
  t.equal(decodeJwt(first).sub, 'alice')
  t.equal(sts.forms[0].get('resource'), 'https://shop/orders')
  t.equal(sts.forms[0].get('subject_token_type'), 'urn:ietf:params:oauth:token-type:jwt')
  now += 479_000
  t.equal(await exchange.tokenFor(alice), first, 'at 479 s of 600: kept')
  now += 2_000
  t.not(await exchange.tokenFor(alice), first, 'at 481 s: exchanged again')
  t.equal(sts.calls() - calls, 2)
})

t.test('without expires_in the token is not kept; N_A and a lower-case bearer token type are taken', async (t) => {
  const exchange = exchanger()
  const bob = await jwtCaller('bob')
  sts.lifeSec = null
  const calls = sts.calls()
  await exchange.tokenFor(bob)
  await exchange.tokenFor(bob)
  t.equal(sts.calls() - calls, 2)
  for (const type of ['N_A', 'bearer']) {
    sts.answer = () => [200, JSON.stringify({ access_token: `tok-${type}`, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: type, expires_in: 0 })]
    t.equal(await exchange.tokenFor(bob), `tok-${type}`, type)
  }
})

t.test('bounded: past maxCached callers the least recently used is exchanged again', async (t) => {
  const exchange = exchanger({ maxCached: 2 })
  const [a, b, c] = [await jwtCaller('a1'), await jwtCaller('b1'), await jwtCaller('c1')]
  const calls = sts.calls()
  await exchange.tokenFor(a)
  await exchange.tokenFor(b)
  await exchange.tokenFor(a) // a used last: b is the least recently used
  await exchange.tokenFor(c)
  t.equal(sts.calls() - calls, 3)
  await exchange.tokenFor(a)
  t.equal(sts.calls() - calls, 3, 'a kept')
  await exchange.tokenFor(b)
  t.equal(sts.calls() - calls, 4, 'b dropped')
  // An exchange pushed out while under way (no expires_in, or failing) leaves its successor alone.
  const one = exchanger({ maxCached: 1 })
  sts.lifeSec = null
  await Promise.all([one.tokenFor(a), one.tokenFor(b)])
  sts.answer = () => [400, JSON.stringify({ error: 'invalid_grant' })]
  const both = await Promise.allSettled([one.tokenFor(a), one.tokenFor(b)])
  t.strictSame(both.map((settled) => settled.status), ['rejected', 'rejected'])
})

t.test('every failure is a -32050 naming no secret and no token', async (t) => {
  const exchange = exchanger()
  const carol = await jwtCaller('carol')
  const cases: Array<[string, [number, string] | undefined, string]> = [
    ['an RFC 6749 error', [400, JSON.stringify({ error: 'invalid_target', error_description: `secret ${CLIENT_SECRET}` })], 'the token exchange was refused (invalid_target)'],
    ['an error code out of RFC 6749\'s characters', [400, JSON.stringify({ error: 'bad "code"' })], 'the token exchange failed (HTTP 400)'],
    ['not JSON', [502, '<html>bad gateway</html>'], 'the token exchange failed (HTTP 502)'],
    ['JSON but no object', [500, 'null'], 'the token exchange failed (HTTP 500)'],
    ['no access_token', [200, JSON.stringify({ issued_token_type: 'x', token_type: 'Bearer' })], 'the token exchange failed: not a token exchange response'],
    ['no issued_token_type', [200, JSON.stringify({ access_token: 'x', token_type: 'Bearer' })], 'the token exchange failed: not a token exchange response'],
    ['no token_type', [200, JSON.stringify({ access_token: 'x', issued_token_type: 'x' })], 'the token exchange failed: not a token exchange response'],
    ['an array', [200, '[]'], 'the token exchange failed: not a token exchange response'],
    ['a token bound to a key', [200, JSON.stringify({ access_token: 'x', issued_token_type: 'x', token_type: 'DPoP' })], 'the token exchange failed: a token of type "DPoP"'],
    ['too large', [200, JSON.stringify({ access_token: 'x'.repeat(70_000) })], 'the token exchange failed: not a token exchange response']
  ]
  for (const [name, answer, message] of cases) {
    sts.answer = () => answer
    const text = await failure(exchange.tokenFor(carol))
    t.equal(text, `Upstream agent unavailable: ${message}`, name)
    t.notOk(text.includes(CLIENT_SECRET))
  }
  sts.answer = undefined
  t.match(await failure(exchanger({ clientSecret: 'wrong-secret' }).tokenFor(carol)), /refused \(invalid_client\)$/, 'the endpoint refuses the gateway')
  t.match(await failure(exchange.tokenFor({ id: 'carol' })), /this request has none$/, 'a caller without a bearer token')
  t.match(await failure(exchanger({ tokenEndpoint: 'http://127.0.0.1:9/token' }).tokenFor(carol)), /the token endpoint cannot be reached$/)
})

t.test('upstreamIdentity and startUpstreamAgent refuse a mode without its settings', async (t) => {
  const context = { agentId: 'shop', url: 'http://127.0.0.1:9/', dispatcher, timeoutMs: 1000 }
  t.equal(upstreamIdentity(undefined, context), undefined)
  t.equal(upstreamIdentity({ mode: 'none' }, context), undefined)
  t.throws(() => upstreamIdentity({ mode: 'delegate' as never }, context), /option "upstream.identity.mode" must be one of none, assertion, passthrough, exchange/)
  t.throws(() => upstreamIdentity({ mode: 'exchange', tokenEndpoint: sts.url, clientId: 'gw', clientSecret: '' }, context),
    /option "upstream.identity.clientSecret" must be given: agent "shop" exchanges tokens/)
  await t.rejects(startUpstreamAgent({ agentId: 'shop', dispatcher, upstream: { url: 'http://127.0.0.1:9/', identity: { mode: 'exchange', clientId: 'gw' } } }),
    /option "upstream.identity.tokenEndpoint" must be given/)
})
