/**
 * The caller's own token to the upstream (docs/trust.md): `passthrough` forwards the bearer JWT a caller presented
 * to the gateway, `exchange` trades it at an RFC 8693 token endpoint (a real one, test/fixtures/token-endpoint.ts)
 * for a token for the upstream. Upstreams built with the SDK verify what they get with jose — against the identity
 * provider's JWKS, or the token endpoint's — and see alice and bob. An API-key caller's key never reaches an
 * upstream, and neither it nor a walk-in is served by such an agent (-32050); the exchange is made once per caller
 * while its token lives; the endpoint's refusals are a -32050 naming its error code, never its secret.
 */
import t from 'tap'
import { join } from 'node:path'
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose'
import type { IncomingHttpHeaders } from 'node:http'
import { buildGateway } from '../../src/gateway/app.js'
import { ConfigError, loadConfig } from '../../src/gateway/config.js'
import { loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'
import { logLines, rpc, startGateway, userMessage } from '../fixtures/gateway-helpers.js'
import { OPERATOR_KEY } from '../fixtures/conversation-gateway.js'
import { operator } from '../fixtures/live-agents.js'
import { startUpstream } from '../fixtures/upstream-agent.js'
import { AUDIENCE, identityProvider, ISSUER } from '../fixtures/auth.js'
import { CLIENT_ID, CLIENT_SECRET, startTokenEndpoint, STS_ISSUER } from '../fixtures/token-endpoint.js'
import { readSse } from '../fixtures/sse-reader.js'

const CAROL_KEY = 'carol-key-0123456789abcdef'
const SHOP = 'https://shop.internal/'
const SECRET_ENV = 'TEST_UPSTREAM_STS_SECRET'

/** An upstream that verifies the bearer token of every request against `jwksUrl`, and records what it verified. */
function verifier (jwksUrl: string, issuer: string, audience: string, verified: JWTPayload[]) {
  const keys = createRemoteJWKSet(new URL(jwksUrl))
  return async (headers: IncomingHttpHeaders): Promise<boolean> => {
    const token = String(headers.authorization ?? '').replace(/^Bearer /, '')
    try {
      verified.push((await jwtVerify(token, keys, { issuer, audience, requiredClaims: ['exp'] })).payload)
      return true
    } catch {
      return false
    }
  }
}

t.test('passthrough and exchange: the upstream sees the caller by its own token; an API key never goes upstream', async (t) => {
  const provider = await identityProvider(t)
  const sts = await startTokenEndpoint({ jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE })
  t.teardown(sts.close)
  const direct: JWTPayload[] = []
  const exchanged: JWTPayload[] = []
  const passUpstream = await startUpstream({ authorize: verifier(provider.jwksUrl, ISSUER, AUDIENCE, direct) })
  t.teardown(() => passUpstream.close())
  const exUpstream = await startUpstream({ authorize: verifier(sts.jwksUrl, STS_ISSUER, SHOP, exchanged) })
  t.teardown(() => exUpstream.close())
  process.env[SECRET_ENV] = CLIENT_SECRET
  t.teardown(() => { delete process.env[SECRET_ENV] })
  const log = logLines()
  const { base } = await startGateway(t, {
    A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, A2A_API_KEYS: `carol:${CAROL_KEY}`, LOG_LEVEL: 'debug', OPERATOR_API_KEY: OPERATOR_KEY
  }, {
    loggerStream: log.stream,
    agents: [
      { id: 'pass', upstream: { url: `${passUpstream.base}/`, identity: { mode: 'passthrough' } } },
      { id: 'open', auth: 'walk-in', upstream: { url: `${passUpstream.base}/`, identity: { mode: 'passthrough' } } },
      {
        id: 'ex',
        upstream: {
          url: `${exUpstream.base}/`,
          identity: { mode: 'exchange', tokenEndpoint: sts.url, clientId: CLIENT_ID, clientSecretEnv: SECRET_ENV, audience: SHOP, scope: 'orders:read' }
        }
      }
    ]
  })
  const alice = await provider.token('alice')
  const bob = await provider.token('bob')
  const send = async (agent: string, credential: string | undefined, method = 'SendMessage') => await fetch(`${base}/a2a/${agent}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }) },
    body: rpc(method, { message: userMessage('hello') })
  })
  const echoed = { result: { message: { parts: [{ text: 'echo: hello' }] } } }

  // The cards stay true to what each agent takes: only a JWT where the caller's own token goes upstream (an API key
  // would be refused), both schemes elsewhere — for the agents of the file and one published at runtime.
  const schemesOf = async (agent: string) => Object.keys(((await (await fetch(`${base}/a2a/${agent}/.well-known/agent-card.json`)).json()) as { securitySchemes?: object }).securitySchemes ?? {})
  t.strictSame(await schemesOf('pass'), ['jwt'], 'passthrough: the JWT scheme only')
  t.strictSame(await schemesOf('ex'), ['jwt'], 'exchange: the JWT scheme only')
  t.strictSame(await schemesOf('open'), [], 'a walk-in agent names none')
  t.equal((await operator(base, 'POST', '', { id: 'later', upstream: { url: `${passUpstream.base}/`, identity: { mode: 'passthrough' } } })).status, 201)
  t.equal((await operator(base, 'POST', '', { id: 'plain', upstream: { url: `${passUpstream.base}/` } })).status, 201)
  t.strictSame(await schemesOf('later'), ['jwt'], 'published at runtime: the same')
  t.strictSame(await schemesOf('plain'), ['apiKey', 'jwt'], 'a proxied agent that sends no caller token: either credential')
  t.equal((await operator(base, 'DELETE', '/later')).status, 204)

  // passthrough: each caller's own token, as presented.
  for (const token of [alice, bob]) t.match(await (await send('pass', token)).json(), echoed)
  t.strictSame(direct.map((claims) => claims.sub), ['alice', 'bob'], 'the upstream sees alice and bob')
  t.equal(passUpstream.seen.at(-1)?.authorization, `Bearer ${bob}`, 'bob\'s own token, unchanged')
  const stream = readSse(await send('pass', alice, 'SendStreamingMessage'))
  await stream.ended
  t.match(stream.frames[0], echoed, 'a stream carries it too')
  t.equal(direct.at(-1)?.sub, 'alice')

  // An API-key caller and a walk-in have no token to forward: refused before anything goes upstream.
  const before = passUpstream.seen.length
  const noToken = { error: { code: -32050, message: 'Upstream agent unavailable: it takes the caller\'s own bearer token (a JWT), and this request has none', data: [{ reason: 'UPSTREAM_UNAVAILABLE' }] } }
  for (const [agent, credential] of [['pass', CAROL_KEY], ['open', undefined], ['ex', CAROL_KEY]] as const) {
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const refused = await send(agent, credential, method)
      t.equal(refused.status, 200, `${agent} ${method}`)
      t.match(await refused.json(), noToken)
    }
  }
  t.equal(passUpstream.seen.length, before, 'nothing reached the upstream')
  t.equal(sts.calls(), 0, 'nor the token endpoint')
  const everything = JSON.stringify([passUpstream.seen, exUpstream.seen, sts.forms.map(String)])
  t.notOk(everything.includes(CAROL_KEY), 'the API key never left the gateway')

  // exchange: one exchange per caller while the token lives; the upstream sees the exchanged token.
  for (const token of [alice, alice, bob]) t.match(await (await send('ex', token)).json(), echoed)
  const exStream = readSse(await send('ex', alice, 'SendStreamingMessage'))
  await exStream.ended
  t.match(exStream.frames[0], echoed)
  t.equal(sts.calls(), 2, 'alice exchanged once, bob once')
  t.strictSame(exchanged.map((claims) => claims.sub), ['alice', 'alice', 'bob', 'alice'])
  t.ok(exchanged.every((claims) => claims.iss === STS_ISSUER && claims.aud === SHOP && claims.scope === 'orders:read'))
  const form = Object.fromEntries(sts.forms[0])
  t.strictSame(form, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: alice,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    audience: SHOP,
    scope: 'orders:read'
  }, 'RFC 8693 §2.1\'s request')
  t.not(exUpstream.seen.at(-1)?.authorization, `Bearer ${alice}`, 'never the caller\'s own token')
  t.equal(decodeJwt(String(exUpstream.seen.at(-1)?.authorization).slice(7)).sub, 'alice')

  // The endpoint refuses (RFC 8693 §2.2.2): -32050 naming its error code; its description (here with the secret) is not passed on.
  const mallory = await provider.token('mallory')
  const refused = await send('ex', mallory)
  t.equal(refused.status, 200)
  t.match(await refused.json(), { error: { code: -32050, message: 'Upstream agent unavailable: the token exchange was refused (invalid_grant)' } })
  t.equal(sts.calls(), 3)
  t.match(log.lines.find((line) => line.cause === 'EXCHANGE_invalid_grant'), { level: 40, agentId: 'ex', code: -32050 }, 'logged at warn')
  t.notOk(log.raw.join('\n').includes(CLIENT_SECRET), 'the secret is in no log line')
  t.notOk(log.raw.join('\n').includes(mallory), 'nor the caller\'s token')

  // The endpoint down: -32050 too, never a 500.
  await sts.close()
  const down = await send('ex', await provider.token('dave'))
  t.equal(down.status, 200)
  t.match(await down.json(), { error: { code: -32050, message: 'Upstream agent unavailable: the token exchange failed: the token endpoint cannot be reached' } })
})

t.test('exchange needs its client secret in the environment; the agents file is checked', async (t) => {
  const agents = [{ id: 'ex', upstream: { url: 'http://127.0.0.1:9/', identity: { mode: 'exchange' as const, tokenEndpoint: 'http://127.0.0.1:9/token', clientId: 'gw', clientSecretEnv: 'TEST_UNSET_STS_SECRET' } } }]
  const refusal = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }), agents }).then(() => undefined, (error: unknown) => error)
  t.ok(refusal instanceof ConfigError)
  t.match((refusal as Error).message, /^TEST_UNSET_STS_SECRET must be set: agent "ex" exchanges its callers' tokens with it as client secret/)

  const exchange = { mode: 'exchange', tokenEndpoint: 'https://sts/', clientId: 'gw', clientSecretEnv: 'STS_SECRET' }
  const dir = t.testdir({
    'missing.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'exchange', tokenEndpoint: 'https://sts/', clientId: 'gw' } } }),
    'inline.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { ...exchange, clientSecret: 'written-down' } } }),
    'misplaced.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'passthrough', scope: 'x' } } }),
    'life.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'passthrough', lifetimeSec: 60 } } }),
    'twice.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', headers: { Authorization: 'Bearer k' }, identity: { mode: 'passthrough' } } }),
    'type.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { ...exchange, subjectTokenType: 'saml2' } } }),
    'good.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { ...exchange, subjectTokenType: 'jwt', resource: 'https://shop/', header: 'X-Token' } } }),
    'pass.json': JSON.stringify({ id: 'a', upstream: { url: 'http://a/', identity: { mode: 'passthrough' } } })
  })
  const message = async (file: string) => await loadAgentDefinitions(join(dir, file)).then(() => '', (error: Error) => error.message)
  t.match(await message('missing.json'), /agents\[0\]\.upstream\.identity\.clientSecretEnv is required with mode "exchange"/)
  t.match(await message('inline.json'), /agents\[0\]\.upstream\.identity must NOT have additional properties/)
  t.match(await message('misplaced.json'), /agents\[0\]\.upstream\.identity\.scope applies to mode "exchange" only/)
  t.match(await message('life.json'), /agents\[0\]\.upstream\.identity\.lifetimeSec applies to mode "assertion" only/)
  t.match(await message('twice.json'), /agents\[0\]\.upstream\.identity\.header "authorization" is in upstream\.headers too/)
  t.match(await message('type.json'), /subjectTokenType must be equal to one of the allowed values: "access_token", "jwt"/)
  t.equal(await message('good.json'), '')
  t.equal(await message('pass.json'), '')
})
