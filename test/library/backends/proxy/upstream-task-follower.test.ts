/**
 * Following configured upstream tasks on its own (packages/a2a-converse/src/backends/proxy/upstream-task-follower.ts), over a scripted
 * upstream: one follow per task and caller, the bound, an upstream that cannot stream, a follow that ends when the
 * task has no configs left, an upstream failure logged, close ending every follow; with keepsCallerToken, the
 * requester's token kept on the follow, renewed by its later requests, never another caller's, the follow stopped
 * when it expires (over a clock of the test's).
 */
import t from 'tap'
import { ServerCallContext } from '@a2a-js/sdk/server'
import type { A2ABackend, BackendContext } from '../../../../packages/a2a-converse/src/protocol/backend.js'
import { callerContext } from '../../../../packages/a2a-converse/src/auth/sdk-user.js'
import { upstreamTaskFollower } from '../../../../packages/a2a-converse/src/backends/proxy/upstream-task-follower.js'
import { callerBearerToken, recordCredential } from '../../../../packages/a2a-converse/src/auth/caller-credential.js'

type Json = Record<string, any>

/** An upstream whose SubscribeToTask streams yield `events` then wait until aborted (or fail with `failure`). */
function scripted (options: { streaming?: boolean, events?: unknown[], failure?: Error } = {}) {
  const opened: string[] = []
  const callers: Array<string | undefined> = []
  const contexts: BackendContext[] = []
  const upstream: A2ABackend = {
    facts: { capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    async call () { return undefined },
    async * stream (request, context) {
      opened.push(String(request.params.id))
      callers.push(context.caller?.id)
      contexts.push(context)
      yield * options.events ?? []
      if (options.failure !== undefined) throw options.failure
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
    },
    toError () { return { code: -32603, message: 'x' } }
  }
  return { upstream, opened, callers, contexts }
}

function logger () {
  const lines: Json[] = []
  return { lines, log: { warn: (object: object, msg: string) => { lines.push({ ...object, msg }) }, error () {}, info () {} } }
}

async function settle (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20))
}

t.test('one follow per task and caller, at most maxFollowed; close ends them all', async (t) => {
  const { upstream, opened } = scripted()
  const { lines, log } = logger()
  const follower = upstreamTaskFollower({ agentId: 'shop', upstream, save: async () => {}, configured: async () => true, maxFollowed: 2, log })
  follower.follow('t1', callerContext('alice'))
  follower.follow('t1', callerContext('alice'))
  follower.follow('t1', callerContext('bob'))
  follower.follow('t2', callerContext('alice'))
  await settle()
  t.equal(follower.size, 2)
  t.same(opened, ['t1', 't1'], 'alice\'s and bob\'s t1, each once')
  t.match(lines, [{ agentId: 'shop', taskId: 't2', followed: 2, msg: 'upstream task not followed: the bound of followed tasks is reached' }])
  await follower.close()
  t.equal(follower.size, 0)
  follower.follow('t3', callerContext('alice'))
  t.equal(follower.size, 0, 'nothing follows once closed')
})

t.test('a follow asks upstream for the caller whose task it is (identity: assertion names them there)', async (t) => {
  const { upstream, callers } = scripted()
  const follower = upstreamTaskFollower({ agentId: 'shop', upstream, save: async () => {}, configured: async () => true })
  follower.follow('t1', callerContext('alice'))
  follower.follow('t2', callerContext(undefined))
  await settle()
  t.strictSame(callers, ['alice', undefined], 'a walk-in\'s task: no caller')
  await follower.close()
})

t.test('an upstream that cannot stream is not followed', async (t) => {
  const { upstream, opened } = scripted({ streaming: false })
  const follower = upstreamTaskFollower({ agentId: 'shop', upstream, save: async () => {}, configured: async () => true })
  follower.follow('t1', new ServerCallContext())
  t.equal(follower.size, 0)
  t.same(opened, [])
})

t.test('each event saved; the follow ends when the task has no configs left, or the upstream fails (logged)', async (t) => {
  const events = [{ task: { id: 't1' } }, { statusUpdate: { taskId: 't1' } }]
  const saved: unknown[] = []
  let configs = 2
  const { upstream } = scripted({ events })
  const follower = upstreamTaskFollower({
    agentId: 'shop', upstream, save: async (event) => { saved.push(event) }, configured: async () => --configs > 0
  })
  follower.follow('t1', callerContext('alice'))
  await settle()
  t.same(saved, events, 'both events saved, then no configs: stopped')
  t.equal(follower.size, 0)

  const failing = scripted({ events: [events[0]], failure: new Error('the stream was cut') })
  const { lines, log } = logger()
  const other = upstreamTaskFollower({ agentId: 'shop', upstream: failing.upstream, save: async () => {}, configured: async () => true, log })
  other.follow('t1', callerContext('alice'))
  await settle()
  t.equal(other.size, 0)
  t.match(lines, [{ agentId: 'shop', taskId: 't1', err: { message: 'the stream was cut' }, msg: 'stopped following an upstream task for its push notifications' }])
})

/** A caller as the authenticator makes one for a bearer JWT expiring at `expiresAt` (ms). */
function jwtCaller (id: string, token: string, expiresAt: number) {
  const caller = { id }
  recordCredential(caller, 'jwt', token, expiresAt)
  return caller
}

t.test('keepsCallerToken: the follow carries its caller\'s token, the newer one, never another\'s; stops when it expires', async (t) => {
  const { upstream, contexts } = scripted()
  const { lines, log } = logger()
  let clock = 1_000_000
  const follower = upstreamTaskFollower({ agentId: 'shop', upstream, save: async () => {}, configured: async () => true, keepsCallerToken: true, log, now: () => clock })
  t.teardown(follower.close)
  follower.follow('t1', callerContext('alice'), undefined, jwtCaller('alice', 'alice-1', clock + 60_000))
  await settle()
  const kept = contexts[0].caller
  t.equal(callerBearerToken(kept), 'alice-1', 'the follow asks upstream with alice\'s token')
  t.strictSame(kept, { id: 'alice' }, 'beside its own Caller, not on it')
  t.ok(follower.following('t1', callerContext('alice')))

  follower.follow('t1', callerContext('alice'), undefined, jwtCaller('alice', 'alice-2', clock + 50))
  t.equal(callerBearerToken(kept), 'alice-2', 'a later request of alice: her newer token kept')
  follower.follow('t1', callerContext('alice'), undefined, jwtCaller('mallory', 'mallory-1', clock + 60_000))
  follower.follow('t1', callerContext('alice'), undefined, { id: 'alice' })
  follower.follow('t1', callerContext('alice'))
  t.equal(callerBearerToken(kept), 'alice-2', 'never another caller\'s, nor nothing from a request without a token')

  // The clock of the test lags: the timer finds the token still valid and waits again; then it has expired.
  await settle()
  await settle()
  await settle()
  t.equal(follower.size, 1, 'still followed while the clock says the token is valid')
  clock += 100
  const deadline = Date.now() + 5000
  while (follower.size > 0 && Date.now() < deadline) await settle()
  t.equal(follower.size, 0, 'stopped once it expired')
  t.match(lines, [{ agentId: 'shop', taskId: 't1', msg: /^stopped following an upstream task for its push notifications: the caller's token it carried expired/ }])
  t.notOk(JSON.stringify(lines).includes('alice-'), 'the log names no token')
  t.ok(contexts[0].signal.aborted)

  follower.follow('t1', callerContext('alice'), undefined, jwtCaller('alice', 'alice-3', clock + 60_000))
  await settle()
  t.equal(follower.size, 1, 'the caller\'s next request follows again')
  t.equal(callerBearerToken(contexts[1].caller), 'alice-3')

  follower.follow('t2', callerContext(undefined), undefined, jwtCaller('alice', 'alice-4', clock + 60_000))
  await settle()
  t.equal(contexts[2].caller, undefined, 'a walk-in\'s task keeps nothing')
})

t.test('without keepsCallerToken nothing is kept', async (t) => {
  const { upstream, contexts } = scripted()
  const follower = upstreamTaskFollower({ agentId: 'shop', upstream, save: async () => {}, configured: async () => true })
  t.teardown(follower.close)
  follower.follow('t1', callerContext('alice'), undefined, jwtCaller('alice', 'alice-1', Date.now() + 60_000))
  await settle()
  t.equal(callerBearerToken(contexts[0].caller), undefined)
})
