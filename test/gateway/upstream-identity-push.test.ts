/**
 * Push notifications of an upstream task in `passthrough` and `exchange` (docs/trust.md, "Takeover and push"): the
 * follow of a configured task (packages/a2a-converse/src/backends/proxy/upstream-task-follower.ts) keeps, in memory,
 * the token of the caller's request that started it. A real upstream built with the SDK verifies every request's
 * token with jose; a real webhook receiver; a real RFC 8693 endpoint. Alice's task is left WORKING upstream, she
 * leaves, creates a config, and the upstream then cancels the task on its own: only the follow can see that, so the
 * webhook's notification shows the follow was let in with alice's token (or her exchanged one). A short-lived token
 * stops the follow when it expires (logged, never the token) until alice's next request on the task.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { IncomingHttpHeaders } from 'node:http'
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import { logLines, startGateway } from '../fixtures/gateway-helpers.js'
import { startUpstream, type RunningUpstream } from '../fixtures/upstream-agent.js'
import { AUDIENCE, identityProvider, ISSUER } from '../fixtures/auth.js'
import { CLIENT_ID, CLIENT_SECRET, startTokenEndpoint, STS_ISSUER } from '../fixtures/token-endpoint.js'
import { webhookReceiver } from '../fixtures/webhook-receiver.js'
import { readSse } from '../fixtures/sse-reader.js'

type Json = Record<string, any>

const SHOP = 'https://shop.internal/'
const SECRET_ENV = 'TEST_PUSH_STS_SECRET'
/** The test's own requests to the upstream (the upstream moving a task on by itself), outside the gateway. */
const ADMIN = 'upstream-admin-0123456789'
const LOOPBACK = { PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', PUSH_RETRY_BASE_MS: '20', PUSH_RETRY_MAX_DELAY_MS: '300', LOG_LEVEL: 'debug' }

/** An upstream verifying every request's bearer token against `jwksUrl` (or the test's admin header), recording what it verified. */
async function verifyingUpstream (t: Test, jwksUrl: string, issuer: string, audience: string) {
  const keys = createRemoteJWKSet(new URL(jwksUrl))
  const verified: JWTPayload[] = []
  const upstream = await startUpstream({
    authorize: async (headers: IncomingHttpHeaders) => {
      if (headers['x-upstream-admin'] === ADMIN) return true
      try {
        verified.push((await jwtVerify(String(headers.authorization ?? '').replace(/^Bearer /, ''), keys, { issuer, audience, requiredClaims: ['exp'] })).payload)
        return true
      } catch {
        return false
      }
    }
  })
  t.teardown(() => upstream.close())
  return { upstream, verified }
}

async function until (what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function client (base: string, agent: string) {
  const post = async (method: string, params: Json, token: string, signal?: AbortSignal) => await fetch(`${base}/a2a/${agent}`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
  })
  return {
    rpc: async (method: string, params: Json, token: string): Promise<Json> => await (await post(method, params, token)).json() as Json,
    /** A task left WORKING upstream ("hold"), the caller's stream then gone: nobody relays the task. */
    async heldTask (token: string): Promise<string> {
      const caller = new AbortController()
      const sse = readSse(await post('SendStreamingMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hold the line' }] } }, token, caller.signal))
      const taskId = (await sse.waitFor((frame) => frame.result?.task !== undefined)).result.task.id as string
      await sse.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
      caller.abort()
      return taskId
    }
  }
}

/** The upstream cancels the task on its own (not through the gateway). */
async function cancelUpstream (upstream: RunningUpstream, taskId: string): Promise<void> {
  const canceled = await fetch(`${upstream.base}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-upstream-admin': ADMIN },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: taskId } })
  })
  t.equal(((await canceled.json()) as Json).result.status.state, 'TASK_STATE_CANCELED')
}

async function filesUnder (dir: string): Promise<Buffer[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return await Promise.all(entries.filter((entry) => entry.isFile()).map(async (entry) => await readFile(join(entry.parentPath, entry.name))))
}

t.test('passthrough and exchange: the follow of a configured upstream task carries the caller\'s token', async (t) => {
  const provider = await identityProvider(t)
  const sts = await startTokenEndpoint({ jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE })
  t.teardown(sts.close)
  const pass = await verifyingUpstream(t, provider.jwksUrl, ISSUER, AUDIENCE)
  const ex = await verifyingUpstream(t, sts.jwksUrl, STS_ISSUER, SHOP)
  process.env[SECRET_ENV] = CLIENT_SECRET
  t.teardown(() => { delete process.env[SECRET_ENV] })
  const receiver = await webhookReceiver(t)
  const log = logLines()
  const { base } = await startGateway(t, { A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, ...LOOPBACK }, {
    loggerStream: log.stream,
    agents: [
      { id: 'pass', upstream: { url: `${pass.upstream.base}/`, identity: { mode: 'passthrough' } } },
      { id: 'ex', upstream: { url: `${ex.upstream.base}/`, identity: { mode: 'exchange', tokenEndpoint: sts.url, clientId: CLIENT_ID, clientSecretEnv: SECRET_ENV, audience: SHOP } } }
    ]
  })
  const alice = await provider.token('alice')

  // passthrough: the follow asks upstream with alice's own token.
  const shop = client(base, 'pass')
  const passTask = await shop.heldTask(alice)
  const before = pass.upstream.seen.length
  const verifiedBefore = pass.verified.length
  t.equal((await shop.rpc('CreateTaskPushNotificationConfig', { taskId: passTask, url: receiver.url }, alice)).error, undefined)
  // A request is seen when it arrives, verified once its token's check (asynchronous) ends: both awaited.
  await until('the follow on the upstream', () => pass.upstream.seen.length >= before + 2 && pass.verified.length >= verifiedBefore + 2)
  t.strictSame(pass.upstream.seen.slice(before).map((headers) => headers.authorization), [`Bearer ${alice}`, `Bearer ${alice}`], 'GetTask, then the follow: alice\'s token')
  t.ok(pass.verified.slice(-2).every((claims) => claims.sub === 'alice'), 'verified upstream as alice')
  await cancelUpstream(pass.upstream, passTask)
  const [passed] = await receiver.waitFor(1)
  t.equal(passed.body.statusUpdate?.taskId, passTask)
  t.equal(passed.body.statusUpdate?.status?.state, 'TASK_STATE_CANCELED', 'what the upstream did on its own, delivered')
  t.notOk(log.lines.some((line) => /stopped following/.test(String(line.msg))), 'the follow was not refused')

  // exchange: the follow carries alice's exchanged token, from the cache (one exchange for everything).
  const exShop = client(base, 'ex')
  const exTask = await exShop.heldTask(alice)
  const exBefore = ex.upstream.seen.length
  t.equal((await exShop.rpc('CreateTaskPushNotificationConfig', { taskId: exTask, url: receiver.url }, alice)).error, undefined)
  await until('the follow on the upstream', () => ex.upstream.seen.length >= exBefore + 2 && ex.verified.length >= 3)
  t.ok(ex.verified.length >= 3 && ex.verified.every((claims) => claims.sub === 'alice' && claims.iss === STS_ISSUER), 'the stream, GetTask and the follow: alice, exchanged')
  t.equal(sts.calls(), 1, 'no extra exchange while cached')
  await cancelUpstream(ex.upstream, exTask)
  const notified = await receiver.waitFor(2)
  t.equal(notified[1].body.statusUpdate?.taskId, exTask)
  t.equal(notified[1].body.statusUpdate?.status?.state, 'TASK_STATE_CANCELED')

  const tokens = [alice, ...ex.upstream.seen.map((headers) => String(headers.authorization ?? '').slice(7)).filter((token) => token !== '')]
  t.notOk(tokens.some((token) => log.raw.join('\n').includes(token)), 'no token in any log line')
})

t.test('a short-lived token: the follow stops when it expires (warn, no token), and resumes at the caller\'s next request', async (t) => {
  t.setTimeout(60_000)
  const provider = await identityProvider(t)
  const pass = await verifyingUpstream(t, provider.jwksUrl, ISSUER, AUDIENCE)
  const receiver = await webhookReceiver(t)
  const dataDir = await mkdtemp(join(tmpdir(), 'identity-push-'))
  t.teardown(async () => await rm(dataDir, { recursive: true, force: true }))
  const log = logLines()
  const { app, base } = await startGateway(t, {
    A2A_JWT_JWKS_URL: provider.jwksUrl, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, STATE: 'embedded', DATA_DIR: dataDir, ...LOOPBACK
  }, {
    loggerStream: log.stream,
    agents: [{ id: 'pass', upstream: { url: `${pass.upstream.base}/`, identity: { mode: 'passthrough' } } }]
  })
  const shop = client(base, 'pass')
  const short = await provider.token('alice', { expSec: 6 })
  const taskId = await shop.heldTask(short)
  const before = pass.upstream.seen.length
  t.equal((await shop.rpc('CreateTaskPushNotificationConfig', { taskId, url: receiver.url, token: 'hook-token' }, short)).error, undefined)
  await until('the follow on the upstream', () => pass.upstream.seen.length >= before + 2)

  const expired = (): Json | undefined => log.lines.find((line) => /the caller's token it carried expired/.test(String(line.msg)))
  await until('the follow stopped at the token\'s exp', () => expired() !== undefined)
  t.match(expired(), { level: 40, agentId: 'pass', taskId }, 'a warn naming the agent and the task')

  // Alice's next request on the task (a newer token): followed again, and the upstream's own cancel is delivered.
  const fresh = await provider.token('alice')
  const again = pass.upstream.seen.length
  t.equal((await shop.rpc('GetTask', { id: taskId }, fresh)).result?.status?.state, 'TASK_STATE_WORKING')
  await until('the follow again', () => pass.upstream.seen.length >= again + 2)
  t.equal(pass.upstream.seen.at(-1)?.authorization, `Bearer ${fresh}`, 'the follow carries the newer token')
  await cancelUpstream(pass.upstream, taskId)
  const [notified] = await receiver.waitFor(1)
  t.equal(notified.body.statusUpdate?.status?.state, 'TASK_STATE_CANCELED')

  const raw = log.raw.join('\n')
  t.notOk(raw.includes(short) || raw.includes(fresh), 'no token in any log line')
  await app.close()
  const files = await filesUnder(dataDir)
  t.ok(files.some((file) => file.includes(Buffer.from(taskId))), 'the embedded database\'s files hold the task\'s rows')
  for (const token of [short, fresh]) {
    const signature = Buffer.from(token.split('.')[2])
    t.notOk(files.some((file) => file.includes(signature)), 'no token in any stored row')
  }
})
