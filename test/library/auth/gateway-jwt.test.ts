/**
 * A gateway that takes JWT bearer tokens from an identity provider (A2A_JWT_*), whose JWKS this test serves on a
 * real port: two callers with tokens are kept apart, each way a token can be wrong is the same 401, and API keys
 * work next to tokens when both are configured.
 */
import t from 'tap'
import { Message, SendMessageRequest, Task, TaskState } from '@a2a-js/sdk'
import { TaskNotFoundError } from '@a2a-js/sdk/errors'
import { ALICE_KEY, API_KEYS, AUDIENCE, call, identityProvider, ISSUER, sdkClient, type TokenClaims } from '../../fixtures/auth.js'
import { logLines, startGateway, userMessage } from '../../fixtures/gateway-helpers.js'

const provider = await identityProvider(t)
const log = logLines()
const { base } = await startGateway(t, {
  A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, LOG_LEVEL: 'debug'
}, { loggerStream: log.stream })

t.test('the card declares a JWT bearer scheme', async (t) => {
  const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Record<string, any>
  t.same(card.securitySchemes, {
    jwt: {
      httpAuthSecurityScheme: {
        scheme: 'Bearer', bearerFormat: 'JWT', description: 'An access token (JWT) from the identity provider, as Authorization: Bearer <token>.'
      }
    }
  })
  t.same(card.securityRequirements, [{ schemes: { jwt: { list: [] } } }])
})

t.test('two callers with tokens, through the official SDK client: each sees only its own tasks', async (t) => {
  const carol = await sdkClient(base, await provider.token('carol'))
  const dave = await sdkClient(base, await provider.token('dave'))
  const task = await carol.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('book a table') })) as Task
  t.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  const got = await carol.getTask({ tenant: '', id: task.id, historyLength: undefined })
  t.equal(got.id, task.id, 'Carol reads her task')
  await t.rejects(dave.getTask({ tenant: '', id: task.id, historyLength: undefined }), TaskNotFoundError, 'Dave gets task not found (-32001)')
  const reply = await dave.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('What are your opening hours?') })) as Message
  t.ok(reply.messageId, 'Dave is served')
  const carolTasks = await carol.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false })
  t.ok(carolTasks.tasks.some((listed) => listed.id === task.id))
  const daveTasks = await dave.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false })
  t.notOk(daveTasks.tasks.some((listed) => listed.id === task.id), "Dave's list has none of Carol's")
})

t.test('every way a token can be wrong is the same 401', async (t) => {
  const cases: Array<[string, string]> = [
    ['expired beyond the clock tolerance', await provider.token('carol', { expSec: -120 })],
    ['not yet valid (nbf)', await provider.token('carol', { nbfSec: 120 })],
    ['another audience', await provider.token('carol', { aud: 'someone-else' })],
    ['another issuer', await provider.token('carol', { iss: 'https://evil.example.test/' })],
    ['signed by a key the provider does not publish', await provider.foreignToken('carol')],
    ['a subject that is no caller id', await provider.token('carol has spaces')],
    ['not a JWT at all', 'a.b.c'],
    ['garbage', 'x'.repeat(40)]
  ]
  const bodies = new Set<string>()
  for (const [name, token] of cases) {
    const { status, headers, body } = await call(base, 'ListTasks', {}, token)
    t.equal(status, 401, name)
    t.equal(headers.get('www-authenticate'), 'Bearer realm="a2a"', name)
    t.equal(body.error.code, -32000, name)
    bodies.add(JSON.stringify(body.error))
  }
  t.equal(bodies.size, 1, 'one and the same error whatever failed')
  const tolerated = await call(base, 'ListTasks', {}, await provider.token('carol', { expSec: -5 }))
  t.equal(tolerated.status, 200, 'a token expired within the clock tolerance (30 s) still passes')
  const raw = log.raw.join('')
  for (const [, token] of cases) t.notOk(raw.includes(token), 'no token in the log')
})

t.test('a token without exp is refused exactly like an expired one: 401, the same body, the same log line', async (t) => {
  const answer = async (token: string) => {
    const before = log.lines.length
    const { status, headers, body } = await call(base, 'ListTasks', {}, token)
    const lines = log.lines.slice(before).filter((line) => line.msg === 'A2A error reply').map(({ method, code, msg }) => ({ method, code, msg }))
    return { status, challenge: headers.get('www-authenticate'), error: body.error, lines }
  }
  const forever = await answer(await provider.token('carol', { expSec: null }))
  t.equal(forever.status, 401, 'no exp: never accepted')
  t.same(forever, await answer(await provider.token('carol', { expSec: -120 })), 'indistinguishable from an expired token')
  t.same(forever.lines, [{ method: undefined, code: -32000, msg: 'A2A error reply' }])
})

t.test('A2A_JWT_MAX_TOKEN_AGE_SEC: a token must carry iat, be issued within the age and not be minted to live longer', async (t) => {
  const { base } = await startGateway(t, {
    A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, A2A_JWT_MAX_TOKEN_AGE_SEC: '3600'
  })
  const status = async (claims: TokenClaims) => (await call(base, 'ListTasks', {}, await provider.token('carol', claims))).status
  t.equal(await status({ expSec: 600 }), 200, 'ten minutes: within the age')
  t.equal(await status({ iatSec: -3000, expSec: 300 }), 200, 'issued 50 minutes ago for an hour')
  t.equal(await status({ expSec: 7200 }), 401, 'minted to live two hours: refused from its first use')
  t.equal(await status({ iatSec: -7200, expSec: 600 }), 401, 'issued two hours ago')
  t.equal(await status({ iatSec: null }), 401, 'no iat: its age cannot be told')
  t.equal(await status({ expSec: null }), 401, 'no exp')
})

t.test('API keys and tokens together: both kinds of caller are served, the card offers both', async (t) => {
  const { base } = await startGateway(t, {
    A2A_API_KEYS: API_KEYS, A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE
  })
  t.equal((await call(base, 'ListTasks', {}, ALICE_KEY)).status, 200, 'a key')
  t.equal((await call(base, 'ListTasks', {}, await provider.token('carol'))).status, 200, 'a token')
  t.equal((await call(base, 'ListTasks', {}, 'y'.repeat(30))).status, 401, 'neither')
  const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Record<string, any>
  t.same(Object.keys(card.securitySchemes), ['apiKey', 'jwt'])
  t.same(card.securityRequirements, [{ schemes: { apiKey: { list: [] } } }, { schemes: { jwt: { list: [] } } }], 'either will do')
})

t.test('an identity provider that cannot be reached: 503 with Retry-After, a warning in the log, no token', async (t) => {
  const lines = logLines()
  const { base } = await startGateway(t, {
    A2A_JWT_JWKS_URL: 'http://127.0.0.1:1/jwks.json', A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, LOG_LEVEL: 'warn'
  }, { loggerStream: lines.stream })
  const token = await provider.token('carol')
  const { status, headers, body } = await call(base, 'ListTasks', {}, token)
  t.equal(status, 503)
  t.equal(headers.get('retry-after'), '5')
  t.same(body.error, { code: -32603, message: 'authentication is unavailable; try again later' })
  t.ok(lines.lines.some((line) => line.msg === 'A2A request not authenticated: the identity provider cannot be reached'))
  t.notOk(lines.raw.join('').includes(token))
})
