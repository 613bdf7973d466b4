/**
 * The caller's identity to the upstream (docs/trust.md, `upstream.identity.mode: assertion`): an upstream built with
 * the SDK that verifies every request's JWT with jose against the gateway's JWKS (fetched over the gateway's port)
 * sees alice's and bob's calls as alice and bob, the gateway as actor, on calls and streams, each caller's assertion
 * reused; it refuses one past `exp`, for another audience or signed by another key. A walk-in agent's assertion has
 * no `sub`. Without SIGNING_KEY or PUBLIC_URL such an agent stops the start; a bad header in the agents file too.
 */
import t from 'tap'
import { join } from 'node:path'
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose'
import { createSigningKey } from 'a2a-converse/service'
import { buildGateway } from '../../src/gateway/app.js'
import { ConfigError, loadConfig } from '../../src/gateway/config.js'
import { loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'
import { createAssertionMinter } from '../../packages/a2a-converse/src/auth/upstream-assertion.js'
import { freePort, rpc, startGateway, userMessage } from '../fixtures/gateway-helpers.js'
import { startUpstream } from '../fixtures/upstream-agent.js'
import { privatePem } from '../fixtures/card-signing.js'
import { readSse } from '../fixtures/sse-reader.js'

const ALICE = 'alice-key-0123456789'
const BOB = 'bob-key-0123456789ab'

t.test('alice and bob reach the upstream as themselves, the gateway as actor; bad assertions are refused there', async (t) => {
  const port = await freePort()
  const gateway = `http://127.0.0.1:${port}`
  const jwks = createRemoteJWKSet(new URL(`${gateway}/.well-known/jwks.json`))
  const verified: JWTPayload[] = []
  let audience = ''
  /** The upstream's own check: the JWT in the header, against the gateway's JWKS, its issuer and this audience. */
  const verifier = (header: string) => async (headers: Record<string, string | string[] | undefined>): Promise<boolean> => {
    const value = String(headers[header] ?? '')
    const token = header === 'authorization' ? value.replace(/^Bearer /, '') : value
    try {
      verified.push((await jwtVerify(token, jwks, { issuer: gateway, audience, requiredClaims: ['exp', 'iat'] })).payload)
      return true
    } catch {
      return false
    }
  }
  const shop = await startUpstream({ authorize: verifier('authorization') })
  t.teardown(() => shop.close())
  audience = `${shop.base}/`
  const open = await startUpstream({ authorize: verifier('x-caller-assertion') })
  t.teardown(() => open.close())
  const pem = privatePem('ES256')
  const { base } = await startGateway(t, { PORT: String(port), PUBLIC_URL: gateway, SIGNING_KEY: pem, SIGNING_KEY_ID: 'gw', A2A_API_KEYS: `alice:${ALICE},bob:${BOB}` }, {
    agents: [
      { id: 'shop', upstream: { url: `${shop.base}/`, identity: { mode: 'assertion' } } },
      { id: 'open', auth: 'walk-in', upstream: { url: `${open.base}/`, headers: { authorization: 'Bearer static' }, identity: { mode: 'assertion', header: 'X-Caller-Assertion', audience: 'open-upstream' } } }
    ]
  })
  const send = async (agent: string, key: string | undefined, method = 'SendMessage') => await fetch(`${base}/a2a/${agent}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: rpc(method, { message: userMessage('hello') })
  })
  for (const key of [ALICE, ALICE, BOB]) {
    const reply = await (await send('shop', key)).json() as { result?: unknown }
    t.match(reply.result, { message: { parts: [{ text: 'echo: hello' }] } })
  }
  const stream = readSse(await send('shop', ALICE, 'SendStreamingMessage'))
  await stream.ended
  t.match(stream.frames[0], { result: { message: { parts: [{ text: 'echo: hello' }] } } }, 'a stream is forwarded too')
  t.strictSame(verified.map((claims) => claims.sub), ['alice', 'alice', 'bob', 'alice'], 'the upstream sees each caller')
  t.ok(verified.every((claims) => (claims.act as { sub: string }).sub === gateway), 'and the gateway acting for them')
  t.equal(verified[1].jti, verified[0].jti, 'alice\'s assertion reused')
  t.equal(verified[3].jti, verified[0].jti, 'on her stream too')
  t.not(verified[2].jti, verified[0].jti, 'bob has his own')
  t.ok(verified.every((claims) => (claims.exp as number) - (claims.iat as number) <= 300))

  // A walk-in agent: an assertion without sub, in the header named; the static authorization header still sent.
  audience = 'open-upstream'
  verified.length = 0
  t.equal((await send('open', undefined)).status, 200)
  t.equal(verified[0].sub, undefined)
  t.equal(open.seen.at(-1)?.authorization, 'Bearer static')

  // The upstream refuses (here: it expects another audience): the caller gets -32050, on a call and a stream.
  audience = 'https://elsewhere.example/'
  for (const method of ['SendMessage', 'SendStreamingMessage']) {
    const refused = await send('shop', BOB, method)
    t.equal(refused.status, 200, method)
    t.match(await refused.json(), { error: { code: -32050, message: 'Upstream agent unavailable: refused the request (HTTP 401)' } })
  }

  // Refused by the upstream: past exp, another audience, another key (with the gateway's kid).
  audience = `${shop.base}/`
  const key = createSigningKey({ privateKey: pem, kid: 'gw' })
  const direct = async (token: string) => (await fetch(`${shop.base}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${token}` },
    body: rpc('SendMessage', { message: userMessage('direct') })
  })).status
  const mint = async (options: Partial<Parameters<typeof createAssertionMinter>[0]>) => await createAssertionMinter({ key, issuer: gateway, audience, ...options }).tokenFor({ id: 'alice' })
  t.equal(await direct(await mint({})), 200, 'a good one passes')
  t.equal(await direct(await mint({ now: () => Date.now() - 600_000 })), 401, 'past exp')
  t.equal(await direct(await mint({ audience: 'https://other.example/' })), 401, 'another audience')
  const stranger = createSigningKey({ privateKey: privatePem('ES256'), kid: 'gw' })
  t.equal(await direct(await mint({ key: stranger })), 401, 'another key')
  t.equal(decodeJwt(await mint({ key: stranger })).sub, 'alice')
})

t.test('assertion mode needs SIGNING_KEY and PUBLIC_URL; its header is checked in the agents file', async (t) => {
  const agents = [{ id: 'shop', upstream: { url: 'http://127.0.0.1:9/', identity: { mode: 'assertion' as const } } }]
  const refusal = async (env: Record<string, string>) => await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', ...env }), agents }).then(() => undefined, (error: unknown) => error)
  const noKey = await refusal({ PUBLIC_URL: 'https://gw.example' })
  t.ok(noKey instanceof ConfigError)
  t.match((noKey as Error).message, /^SIGNING_KEY must be set: agent "shop" sends the caller's identity upstream/)
  const noUrl = await refusal({ SIGNING_KEY: privatePem('EdDSA') })
  t.match((noUrl as Error).message, /^PUBLIC_URL must be set: agent "shop"/)

  const dir = t.testdir({
    'reserved.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'assertion', header: 'A2A-Version' } } }),
    'twice.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', headers: { Authorization: 'Bearer k' }, identity: { mode: 'assertion' } } }),
    'badname.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'assertion', header: 'x caller' } } }),
    'life.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'assertion', lifetimeSec: 3600 } } }),
    'mode.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'delegate' } } }),
    'none.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', headers: { authorization: 'Bearer k' }, identity: { mode: 'none' } } }),
    'own.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', headers: { authorization: 'Bearer k' }, identity: { mode: 'assertion', header: 'X-Caller-Assertion' } } }),
    'bare.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'assertion' } } })
  })
  const message = async (file: string) => await loadAgentDefinitions(join(dir, file)).then(() => '', (error: Error) => error.message)
  t.match(await message('reserved.json'), /agents\[0\]\.upstream\.identity\.header "a2a-version" is a header the gateway writes itself/)
  t.match(await message('twice.json'), /agents\[0\]\.upstream\.identity\.header "authorization" is in upstream\.headers too/)
  t.match(await message('badname.json'), /agents\[0\]\.upstream\.identity\.header must match pattern/)
  t.match(await message('life.json'), /agents\[0\]\.upstream\.identity\.lifetimeSec must be <= 300/)
  t.match(await message('mode.json'), /agents\[0\]\.upstream\.identity\.mode must be equal to one of the allowed values: "none", "assertion", "passthrough", "exchange"/)
  t.equal(await message('none.json'), '', 'mode none: the configured headers as before')
  t.equal(await message('own.json'), '', 'an assertion in a header of its own, beside the configured ones')
  t.equal(await message('bare.json'), '', 'an assertion in Authorization, no other header configured')
})
