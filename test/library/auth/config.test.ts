/** The identity settings of the gateway: validated at start, each error naming the variable and never a key. */
import t from 'tap'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { buildGateway } from '../../../src/gateway/app.js'
import { ConfigError, loadConfig } from '../../../src/gateway/config.js'
import { helpText } from '../../../src/gateway/help.js'
import { ALICE_KEY, API_KEYS, AUDIENCE, BOB_KEY, ISSUER } from '../../fixtures/auth.js'

const JWT = { A2A_JWT_JWKS_URL: 'https://idp.example.test/jwks.json', A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE }

t.test('defaults: walk-in without credentials, required with them', async (t) => {
  t.same(loadConfig({}).auth, { mode: 'walk-in', apiKeys: [], jwt: undefined })
  t.same(loadConfig({ A2A_API_KEYS: API_KEYS }).auth, {
    mode: 'required', apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: BOB_KEY }], jwt: undefined
  })
  t.same(loadConfig(JWT).auth, {
    mode: 'required',
    apiKeys: [],
    jwt: { jwksUrl: JWT.A2A_JWT_JWKS_URL, issuer: ISSUER, audience: AUDIENCE, callerClaim: 'sub', clockToleranceSec: 30 }
  })
  t.equal(loadConfig({ ...JWT, A2A_AUTH: 'walk-in', A2A_JWT_CALLER_CLAIM: 'client_id' }).auth.mode, 'walk-in')
  t.same(loadConfig({ A2A_API_KEYS: ` alice:${ALICE_KEY} , ,bob:${BOB_KEY}:with-colon ` }).auth.apiKeys,
    [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: `${BOB_KEY}:with-colon` }], 'the key is all after the first colon')
  t.match(helpText(), /A2A_API_KEYS/)
  t.same(loadConfig({ RATE_LIMIT_MAX: '0', RATE_LIMIT_WINDOW_MS: '1000', REDIS_URL: 'rediss://cache:6380/2', REDIS_KEY_PREFIX: 'shop:' }).rateLimit,
    { max: 0, operatorMax: 600, windowMs: 1000, redisUrl: 'rediss://cache:6380/2', redisKeyPrefix: 'shop:' })
})

t.test('invalid settings name the variable and never show a key', async (t) => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ A2A_AUTH: 'open' }, 'A2A_AUTH', /must be one of walk-in, required/],
    [{ A2A_AUTH: 'required' }, 'A2A_AUTH', /needs A2A_API_KEYS or A2A_JWT_JWKS_URL/],
    [{ A2A_API_KEYS: 'alice' }, 'A2A_API_KEYS', /entry 1 must be callerId:key/],
    [{ A2A_API_KEYS: `alice:${ALICE_KEY},:${BOB_KEY}` }, 'A2A_API_KEYS', /entry 2: the caller id/],
    [{ A2A_API_KEYS: 'alice:tooshort-secret' }, 'A2A_API_KEYS', /entry 1 \(caller "alice"\): the key must be 16 or more/],
    [{ A2A_API_KEYS: `alice:${ALICE_KEY},alice:${BOB_KEY}` }, 'A2A_API_KEYS', /caller "alice" is listed twice/],
    [{ A2A_API_KEYS: `alice:${ALICE_KEY},bob:${ALICE_KEY}` }, 'A2A_API_KEYS', /the key is another caller's/],
    [{ A2A_JWT_JWKS_URL: JWT.A2A_JWT_JWKS_URL }, 'A2A_JWT_ISSUER', /is required with A2A_JWT_JWKS_URL/],
    [{ A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE }, 'A2A_JWT_JWKS_URL', /is required with A2A_JWT_ISSUER, A2A_JWT_AUDIENCE/],
    [{ ...JWT, A2A_JWT_JWKS_URL: 'idp/jwks' }, 'A2A_JWT_JWKS_URL', /must match pattern/],
    [{ ...JWT, A2A_JWT_CLOCK_TOLERANCE_SEC: '900' }, 'A2A_JWT_CLOCK_TOLERANCE_SEC', /must be <= 300/],
    [{ ...JWT, A2A_JWT_CALLER_CLAIM: 'no spaces please' }, 'A2A_JWT_CALLER_CLAIM', /must match pattern/],
    [{ RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX', /must be >= 0/],
    [{ RATE_LIMIT_WINDOW_MS: '10' }, 'RATE_LIMIT_WINDOW_MS', /must be >= 1000/],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL', /must match pattern/],
    [{ REDIS_KEY_PREFIX: 'has space' }, 'REDIS_KEY_PREFIX', /must match pattern/]
  ]
  for (const [env, variable, problem] of cases) {
    const error = (() => { try { loadConfig(env) } catch (error) { return error } })() as ConfigError
    t.ok(error instanceof ConfigError, variable)
    t.equal(error.variable, variable, variable)
    t.match(error.message, problem, variable)
    t.notOk(error.message.includes(ALICE_KEY) || error.message.includes(BOB_KEY) || error.message.includes('tooshort-secret'), 'no key in the message')
  }
})

t.test('an agent that requires authentication with no credentials configured stops the start', async (t) => {
  const root = join(import.meta.dirname, '../../..')
  const demo = JSON.parse(await readFile(join(root, 'examples/demo/agent.json'), 'utf8')) as Record<string, unknown>
  demo.documents = join(root, 'examples/demo/documents')
  const dir = t.testdir({ 'agents.json': JSON.stringify([{ ...demo, auth: 'required' }]) })
  const config = loadConfig({ STATE: 'memory', AGENTS_FILE: join(dir, 'agents.json'), LOG_LEVEL: 'silent' })
  await t.rejects(buildGateway({ config }), { name: 'ConfigError', message: /agent "demo" requires authentication/ })
})
