/**
 * The push modules one by one: the URL policy (config time and the connect-time lookup), one webhook POST (answers,
 * timeouts, refused connections, DNS rebinding, bounded bodies), the retry schedule, and the in-process deliverer.
 */
import { createServer as createHttpServer } from 'node:http'
import t from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { createServer } from 'node:net'
import { PushUrlPolicy, type UrlVerdict } from '../../../packages/a2a-converse/src/push/url-guard.js'
import { retryAfterMs, sharedDeadlines, webhookPoster, RESPONSE_BYTES, type PostOutcome, type WebhookPoster } from '../../../packages/a2a-converse/src/push/webhook-post.js'
import { nextStep, DEFAULT_RETRY_SETTINGS } from '../../../packages/a2a-converse/src/push/retry-schedule.js'
import { PushDeliverer, webhookHost } from '../../../packages/a2a-converse/src/push/push-deliverer.js'
import { taskUpdates } from '../../../packages/a2a-converse/src/push/task-updates.js'
import { createPushNotifications, MemoryPushConfigStore } from '../../../packages/a2a-converse/src/push/index.js'
import { withPushNotifications } from '../../../packages/a2a-converse/src/push/push-notifications.js'
import { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, InMemoryTaskStore, ResultManager, ServerCallContext } from '@a2a-js/sdk/server'
import { decorateTaskStore } from '../../../packages/a2a-converse/src/stores/decorate-task-store.js'
import { registerSdk } from '../../fixtures/tracing-sdk.js'

type LookupResult = { error: NodeJS.ErrnoException | null, address: unknown, family?: number }

async function lookup (policy: PushUrlPolicy, host: string, options: { all?: boolean, family?: number } = {}): Promise<LookupResult> {
  return await new Promise((resolve) => policy.lookup(host, options, (error, address, family) => resolve({ error, address, family })))
}

t.test('the URL policy as written', async (t) => {
  const strict = new PushUrlPolicy()
  t.equal(strict.refusal('https://hooks.example.com/a'), undefined)
  t.equal(strict.refusal('https://93.184.216.34/a'), undefined, 'a public address literal')
  t.equal(strict.refusal('https://[2606:4700::1111]/a'), undefined, 'a public IPv6 literal')
  t.match(strict.refusal('not a url'), /absolute URL/)
  t.match(strict.refusal('ftp://hooks.example.com/'), /https/)
  t.match(strict.refusal('http://hooks.example.com/'), /PUSH_ALLOW_HTTP/)
  t.match(strict.refusal('https://u:p@hooks.example.com/'), /credentials/)
  t.match(strict.refusal('https://localhost./'), /this host/, 'a final dot changes nothing')
  t.match(strict.refusal('https://api.localhost/'), /this host/)
  for (const address of ['127.0.0.1', '10.1.1.1', '[::1]', '[fd00:ec2::254]', '169.254.169.254', '100.100.100.100', '[::ffff:10.0.0.1]', '[64:ff9b::a00:1]']) {
    t.match(strict.refusal(`https://${address}/`), /internal address/, address)
  }
  t.equal(strict.addressAllowed('not-an-address'), false)

  const open = new PushUrlPolicy({ allowedHosts: ['', ' Hooks.Internal. ', '127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::1'], allowHttp: true })
  t.equal(open.allowHttp, true)
  t.equal(open.refusal('http://hooks.internal:8080/a'), undefined, 'a listed name, any case')
  t.equal(open.refusal('http://127.0.0.1:9/a'), undefined, 'a listed address')
  t.equal(open.refusal('https://10.2.3.4/a'), undefined, 'in a listed CIDR')
  t.equal(open.refusal('https://[fd00::5]/a'), undefined, 'in a listed IPv6 CIDR')
  t.equal(open.refusal('https://[::1]/a'), undefined, 'a listed IPv6 address')
  t.match(open.refusal('https://192.168.0.1/a'), /internal/, 'not listed')
  for (const bad of ['10.0.0.0/33', 'x/8', '10.0.0.0/8/1', '::1/129', '10.0.0.0/a']) {
    t.throws(() => new PushUrlPolicy({ allowedHosts: [bad] }), { name: 'InvalidOptionError' }, bad)
  }
})

t.test('the connect-time lookup checks every address the name resolves to', async (t) => {
  const strict = new PushUrlPolicy()
  const refused = await lookup(strict, 'localhost')
  t.equal(refused.error?.name, 'ForbiddenAddressError', 'loopback: refused however it was named')
  t.match(refused.error?.message, /localhost/)
  t.equal((await lookup(strict, 'nonexistent.invalid')).error?.code, 'ENOTFOUND', 'a DNS failure is the connection\'s')
  const named = new PushUrlPolicy({ allowedHosts: ['localhost'] })
  t.match(await lookup(named, 'localhost', { all: true }), { error: null, address: [{ address: '127.0.0.1' }] })
  t.match(await lookup(named, '[localhost]', { family: 4 }), { error: null, address: '127.0.0.1', family: 4 })
  const byAddress = new PushUrlPolicy({ allowedHosts: ['127.0.0.0/8'] })
  t.match(await lookup(byAddress, 'localhost', { family: 4 }), { error: null, address: '127.0.0.1' })
})

t.test('one POST: answers, retries, refusals, timeouts, DNS rebinding, bounded bodies', async (t) => {
  const app = Fastify()
  app.addContentTypeParser('application/a2a+json', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })
  app.post('/:status', async (request, reply) => {
    const status = Number((request.params as { status: string }).status)
    if (status === 299) return await reply.code(200).send('x'.repeat(RESPONSE_BYTES * 4))
    if (status === 599) return await new Promise(() => {})
    if (status === 598) {
      // An answer whose body trickles forever, a byte at a time, each well within the Agent's bodyTimeout.
      reply.raw.writeHead(200, { 'content-type': 'text/plain' })
      const trickle = setInterval(() => reply.raw.write('x'), 50)
      reply.raw.on('close', () => { clearInterval(trickle) })
      return await reply.hijack()
    }
    if (status === 429) reply.header('retry-after', '2')
    return await reply.code(status).send({ headers: request.headers })
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const poster = webhookPoster(new PushUrlPolicy({ allowedHosts: ['127.0.0.1'], allowHttp: true }), { timeoutMs: 500 })
  t.teardown(() => poster.close())
  const target = (status: number) => ({ url: `${base}/${status}`, authentication: { scheme: 'Token', credentials: '' } })
  t.strictSame(await poster.post(target(204), '{}', 'id-1'), { kind: 'delivered', status: 204 })
  t.strictSame(await poster.post(target(299), '{}', 'id-1'), { kind: 'delivered', status: 200 }, 'a long answer is read only in part')
  t.match(await poster.post(target(500), '{}', 'id'), { kind: 'retry', reason: 'HTTP 500', retryAfterMs: undefined })
  t.match(await poster.post(target(429), '{}', 'id'), { kind: 'retry', reason: 'HTTP 429', retryAfterMs: 2000 })
  t.match(await poster.post(target(408), '{}', 'id'), { kind: 'retry' })
  t.strictSame(await poster.post(target(404), '{}', 'id'), { kind: 'refused', reason: 'HTTP 404' })
  t.strictSame(await poster.post(target(302), '{}', 'id'), { kind: 'refused', reason: 'HTTP 302' })
  t.match(await poster.post(target(599), '{}', 'id'), { kind: 'retry' }, 'a webhook that never answers: the timeout')
  t.strictSame(await poster.post(target(598), '{}', 'id'), { kind: 'delivered', status: 200 },
    'an answer that never ends: the attempt ends at its time, its status stands')
  t.match(await poster.post({ url: 'https://10.0.0.1/' }, '{}', 'id'), { kind: 'refused', reason: /url must not point/ })

  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  t.match(await poster.post({ url: `http://127.0.0.1:${port}/` }, '{}', 'id'), { kind: 'retry', reason: 'ECONNREFUSED' })

  // A name that passed when the config was made and now resolves to this host (DNS rebinding): refused at connect.
  const rebinding = new PushUrlPolicy({ allowHttp: true })
  rebinding.verdict = (url) => ({ refusal: undefined, origin: new URL(url).origin, path: new URL(url).pathname, attributes: {} })
  const rebound = webhookPoster(rebinding, { timeoutMs: 500 })
  t.teardown(() => rebound.close())
  t.match(await rebound.post({ url: `${base.replace('127.0.0.1', 'localhost')}/204` }, '{}', 'id'), { kind: 'refused', reason: /resolves to an address/ })
})

t.test('attempts that start within one slot share a deadline: each ends between its time and its time plus a slot', async (t) => {
  // 100 ms: slots of 10 ms.
  const deadline = sharedDeadlines(100)
  const started = performance.now()
  const first = deadline()
  t.equal(deadline(), first, 'an attempt started in the same slot shares its signal')
  t.equal(first.aborted, false)
  // The deadline's timer does not hold the process open (an attempt's socket does): this test's interval does.
  const open = setInterval(() => {}, 1000)
  await new Promise<void>((resolve) => first.addEventListener('abort', () => { resolve() }))
  clearInterval(open)
  const after = performance.now() - started
  t.ok(after >= 99 && after < 200, `aborted after its time and a slot (${after.toFixed(0)} ms)`)
  t.match(first.reason, { name: 'TimeoutError' }, 'the reason AbortSignal.timeout gives')
  const next = deadline()
  t.not(next, first, 'a later attempt: a slot of its own')
  t.equal(next.aborted, false)
})

t.test('a URL\'s verdict and parts are the policy\'s, kept there (one cache for configs and POSTs); its query goes with the POST', async (t) => {
  const app = Fastify()
  app.addContentTypeParser('application/a2a+json', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })
  const seen: string[] = []
  app.post('/hook', async (request) => { seen.push(request.url); return {} })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const policy = new PushUrlPolicy({ allowedHosts: ['127.0.0.1'], allowHttp: true })
  const asked: Array<{ url: string, verdict: UrlVerdict }> = []
  const verdict = policy.verdict.bind(policy)
  policy.verdict = (url) => { const answer = verdict(url); asked.push({ url, verdict: answer }); return answer }
  const poster = webhookPoster(policy, { timeoutMs: 500 })
  t.teardown(() => poster.close())
  const hook = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/hook?for=a%20b`
  t.equal(policy.refusal(hook), undefined, 'the config\'s check')
  t.strictSame(await poster.post({ url: hook }, '{}', 'id-1'), { kind: 'delivered', status: 200 })
  t.strictSame(await poster.post({ url: hook }, '{}', 'id-2'), { kind: 'delivered', status: 200 })
  t.strictSame(seen, ['/hook?for=a%20b', '/hook?for=a%20b'], 'the path and query as written')
  t.equal(asked.length, 3, 'the check and each POST ask the policy')
  t.ok(asked.every(({ verdict }) => verdict === asked[0].verdict), 'one verdict, judged once and kept, for the check and the POSTs')
  t.match(asked[0].verdict, { refusal: undefined, path: '/hook?for=a%20b', attributes: { 'http.request.method': 'POST', 'server.address': '127.0.0.1' } })
  t.match(await poster.post({ url: 'https://10.0.0.1/' }, '{}', 'id'), { kind: 'refused', reason: /url must not point/ })
  t.match(await poster.post({ url: 'not a url' }, '{}', 'id'), { kind: 'refused', reason: 'url must be an absolute URL' })
})

t.test('Retry-After and the retry schedule', async (t) => {
  t.equal(retryAfterMs(undefined), undefined)
  t.equal(retryAfterMs(' 3 '), 3000)
  t.equal(retryAfterMs('soon'), undefined)
  t.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000)
  t.equal(retryAfterMs(new Date(1_000).toUTCString(), 4_000), 0, 'a date in the past: now')
  const settings = { ...DEFAULT_RETRY_SETTINGS, maxAttempts: 3, maxAgeMs: 10_000, baseDelayMs: 100, maxDelayMs: 1000 }
  const retry: PostOutcome = { kind: 'retry', reason: 'HTTP 503' }
  t.strictSame(nextStep({ kind: 'delivered', status: 200 }, 1, 0, 0, settings), { kind: 'done' })
  t.strictSame(nextStep({ kind: 'refused', reason: 'HTTP 400' }, 1, 0, 0, settings), { kind: 'give-up', reason: 'HTTP 400' })
  t.strictSame(nextStep(retry, 1, 0, 0, settings, () => 0), { kind: 'retry', atMs: 50 }, 'half the backoff at least')
  t.strictSame(nextStep(retry, 2, 0, 0, settings, () => 1), { kind: 'retry', atMs: 200 }, 'doubling')
  t.strictSame(nextStep({ ...retry, retryAfterMs: 5000 }, 1, 0, 0, settings, () => 1), { kind: 'retry', atMs: 5000 }, 'Retry-After honoured')
  t.match(nextStep({ ...retry, retryAfterMs: 50_000 }, 1, 0, 0, settings), { kind: 'give-up', reason: /PUSH_MAX_AGE_MS/ })
  t.match(nextStep(retry, 3, 0, 0, settings), { kind: 'give-up', reason: 'HTTP 503 after 3 attempts' })
})

t.test('the in-process deliverer: order per queue, bounded queues, give-ups logged, close', async (t) => {
  const posted: string[] = []
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const poster: WebhookPoster = {
    async post (target, body) {
      posted.push(`${target.url} ${body}`)
      if (target.url.endsWith('/slow')) await held
      if (target.url.endsWith('/broken')) throw new Error('never')
      return target.url.endsWith('/gone') ? { kind: 'refused', reason: 'HTTP 410' } : { kind: 'delivered', status: 200 }
    },
    async close () {}
  }
  const warnings: Array<Record<string, unknown>> = []
  const deliverer = new PushDeliverer({ poster, maxQueued: 2, log: { warn: (object) => { warnings.push(object as Record<string, unknown>) } } })
  await deliverer.idle()
  const config = (url: string) => ({ config: { id: url, url, token: 'secret-token', authentication: undefined }, converse: false })
  deliverer.enqueue('a', 't1', [config('https://h.example/slow')], [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }])
  deliverer.enqueue('a', 't2', [config('https://h.example/gone'), config('https://h.example/broken')], [{ n: 1 }])
  t.equal(warnings.filter((warning) => /waiting/.test(String(warning.reason))).length, 2, 'past maxQueued the oldest waiting one is given up')
  t.equal(deliverer.pending, 4)
  release()
  await deliverer.idle()
  t.strictSame(posted.filter((line) => line.includes('/slow')), ['https://h.example/slow {"n":3}', 'https://h.example/slow {"n":4}'], 'in order')
  t.strictSame(deliverer.stats, { delivered: 2, retried: 0, gaveUp: 4 })
  deliverer.enqueue('a', 't1', [config('https://h.example/slow')], [{ n: 5 }, { n: 6 }, { n: 7 }])
  await deliverer.idle()
  t.equal(posted.at(-1), 'https://h.example/slow {"n":7}', 'a running queue keeps the one being posted')
  t.match(warnings.find((warning) => warning.reason === 'HTTP 410'), { taskId: 't2', webhookHost: 'h.example', attempts: 1 })
  t.match(warnings.find((warning) => /could not be built/.test(String(warning.reason))), { webhookHost: 'h.example' })
  t.notOk(JSON.stringify(warnings).includes('secret-token'), 'the token is never logged')
  t.equal(webhookHost('::bad'), '(unreadable url)')

  const retrying = new PushDeliverer({ poster: { post: async () => ({ kind: 'retry', reason: 'HTTP 503' }), close: async () => {} }, retry: { baseDelayMs: 60_000 } })
  retrying.enqueue('a', 't', [config('https://h.example/x')], [{ n: 1 }])
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(retrying.stats.retried, 1)
  await retrying.close()
  retrying.enqueue('a', 't', [config('https://h.example/x')], [{ n: 2 }])
  t.pass('closed: nothing more is queued or posted')
})

t.test('task updates: a status change, new or changed artifacts; nothing else', async (t) => {
  const base = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] })
  t.match(taskUpdates(undefined, base), [{ statusUpdate: { taskId: 't', contextId: 'c' } }, { artifactUpdate: { artifact: { artifactId: 'a' }, append: false, lastChunk: true } }])
  t.strictSame(taskUpdates(base, { ...base, history: [] }), [], 'history alone: nothing')
  const changed = Task.fromJSON({ ...Task.toJSON(base) as object, artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }, { artifactId: 'b', parts: [{ text: 'y' }] }] })
  t.match(taskUpdates(base, changed), [{ artifactUpdate: { artifact: { artifactId: 'b' } } }])
  t.strictSame(taskUpdates(base, { ...base, status: undefined }), [], 'no status: nothing to report')
  t.strictSame(taskUpdates({ ...base, status: undefined }, base).map((update) => Object.keys(update)), [['statusUpdate']], 'a status where there was none')
  const bare = { id: 't', contextId: 'c', status: base.status } as Task
  t.strictSame(taskUpdates(undefined, bare).map((update) => Object.keys(update)), [['statusUpdate']], 'a task without artifacts: its status alone')
  t.strictSame(taskUpdates(bare, base).map((update) => Object.keys(update)), [['artifactUpdate']], 'artifacts where there were none')
  t.strictSame(taskUpdates(base, { ...base, history: [{ messageId: 'm', role: 1, parts: [] } as never] }), [], 'a longer history alone: nothing')
})

t.test('createPushNotifications wires an agent: an SDK store by default, updates reported only with configs', async (t) => {
  const push = createPushNotifications()
  t.teardown(() => push.close())
  const { taskStore, push: agent } = push.forAgent('demo')
  const context = new ServerCallContext()
  const task = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } })
  await taskStore.save(task, context)
  t.equal(push.deliverer.pending, 0, 'no config: nothing queued')
  await agent.configs.save('t', context, { tenant: '', id: '', taskId: '', url: 'https://h.example/x', token: '', authentication: undefined })
  await taskStore.save(task, context)
  t.equal(push.deliverer.pending, 0, 'no update: nothing queued')
  t.match(await taskStore.list({ tenant: '', contextId: '', pageSize: 10, pageToken: '', historyLength: 0, includeArtifacts: false } as never, context), { tasks: [{ id: 't' }] })
})

t.test('a request\'s later saves of a task are told from its own last save, not from a load; after another\'s, a load', async (t) => {
  const inner = new InMemoryTaskStore()
  const loads: string[] = []
  const counted = decorateTaskStore(inner, { load: async (id: string, context: ServerCallContext) => { loads.push(id); return await inner.load(id, context) } })
  const configs = new MemoryPushConfigStore()
  const enqueued: unknown[][] = []
  const deliverer = { enqueue: (_agentId: string, _taskId: string, _configs: unknown, events: readonly unknown[]) => { enqueued.push([...events]) } }
  const taskStore = withPushNotifications(counted, 'demo', configs, deliverer as unknown as PushDeliverer, 2)
  const config = (url: string) => ({ tenant: '', id: '', taskId: '', url, token: '', authentication: undefined })
  const request = new ServerCallContext()
  await configs.save('t', request, config('https://h.example/x'))
  const submitted = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } })
  const artifact = Task.fromJSON({ ...Task.toJSON(submitted) as object, artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] })
  const working = Task.fromJSON({ ...Task.toJSON(artifact) as object, status: { state: 'TASK_STATE_WORKING' } })
  for (const task of [submitted, artifact, working]) await taskStore.save(task, request)
  t.strictSame(loads, ['t'], 'one load, before the request\'s first save')
  t.strictSame(enqueued, [taskUpdates(undefined, submitted), taskUpdates(submitted, artifact), taskUpdates(artifact, working)],
    'the updates a load before each save would have told')

  const sibling = new ServerCallContext()
  const changed = Task.fromJSON({ ...Task.toJSON(working) as object, artifacts: [{ artifactId: 'a', parts: [{ text: 'y' }] }] })
  await taskStore.save(changed, sibling)
  t.strictSame(loads, ['t', 't'], 'another request\'s save: it loads')
  await taskStore.save(changed, request)
  t.strictSame(loads, ['t', 't', 't'], 'the first request\'s next save, after the other\'s: it loads')
  t.strictSame(enqueued.slice(3), [taskUpdates(working, changed)], 'told from the stored task: the sibling\'s change is not told twice')

  const completed = Task.fromJSON({ ...Task.toJSON(changed) as object, status: { state: 'TASK_STATE_COMPLETED' } })
  await taskStore.save(completed, request)
  t.strictSame(await configs.configsOf('t', request), [], 'finished: its configs went')
  await configs.save('t', request, config('https://h.example/y'))
  await taskStore.save(completed, request)
  t.strictSame(loads, ['t', 't', 't', 't'], 'a finished task\'s last save is not remembered')

  // At most two tasks remembered (the bound given): the oldest goes.
  for (const id of ['u', 'v', 'w']) {
    await configs.save(id, request, config('https://h.example/z'))
    await taskStore.save(Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }), request)
  }
  loads.length = 0
  for (const id of ['w', 'u']) await taskStore.save(Task.fromJSON({ id, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }), request)
  t.strictSame(loads, ['u'], 'the newest remembered, the oldest past the bound loaded')

  await configs.dropTask('w', request)
  await taskStore.save(Task.fromJSON({ id: 'w', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }), request)
  await configs.save('w', request, config('https://h.example/z'))
  await taskStore.save(Task.fromJSON({ id: 'w', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }), request)
  t.strictSame(loads, ['u', 'w'], 'a save without configs forgets the task\'s last save')
})

t.test('a save that fails: nothing queued, and the request\'s next save of the task loads the stored task', async (t) => {
  const inner = new InMemoryTaskStore()
  const loads: string[] = []
  let failing = false
  const flaky = decorateTaskStore(inner, {
    load: async (id: string, context: ServerCallContext) => { loads.push(id); return await inner.load(id, context) },
    save: async (task: Task, context: ServerCallContext) => {
      if (failing) throw new Error('the store is unreachable')
      await inner.save(task, context)
    }
  })
  const configs = new MemoryPushConfigStore()
  const enqueued: unknown[][] = []
  const deliverer = { enqueue: (_agentId: string, _taskId: string, _configs: unknown, events: readonly unknown[]) => { enqueued.push([...events]) } }
  const taskStore = withPushNotifications(flaky, 'demo', configs, deliverer as unknown as PushDeliverer)
  const request = new ServerCallContext()
  await configs.save('t', request, { tenant: '', id: '', taskId: '', url: 'https://h.example/x', token: '', authentication: undefined })
  const submitted = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } })
  const working = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } })
  await taskStore.save(submitted, request)
  failing = true
  await t.rejects(taskStore.save(working, request), /unreachable/, 'the store\'s error, as it was')
  t.equal(enqueued.length, 1, 'nothing queued for the save that failed')
  failing = false
  await taskStore.save(working, request)
  t.strictSame(loads, ['t', 't'], 'the failing save told from the request\'s last save; after it, the next save loads the stored task')
  t.strictSame(enqueued.slice(1), [taskUpdates(submitted, working)], 'told from what is stored')
})

t.test('the SDK\'s ResultManager saves a request\'s events with its one call context: one load of the push path per request', async (t) => {
  // Fails when the SDK stops passing its call context to each save: the push path would load before every save again.
  const loadsOf = async (configured: boolean): Promise<number> => {
    const inner = new InMemoryTaskStore()
    let loads = 0
    const counted = decorateTaskStore(inner, { load: async (id: string, context: ServerCallContext) => { loads++; return await inner.load(id, context) } })
    const configs = new MemoryPushConfigStore()
    const taskStore = withPushNotifications(counted, 'demo', configs, { enqueue: () => {} } as unknown as PushDeliverer)
    const request = new ServerCallContext()
    if (configured) await configs.save('t', request, { tenant: '', id: '', taskId: '', url: 'https://h.example/x', token: '', authentication: undefined })
    const results = new ResultManager(taskStore, request)
    await results.processEvent(AgentEvent.task(Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } })))
    await results.processEvent(AgentEvent.artifactUpdate(TaskArtifactUpdateEvent.fromJSON({ taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } })))
    await results.processEvent(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({ taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } })))
    return loads
  }
  t.equal(await loadsOf(true) - await loadsOf(false), 1, 'the SDK\'s own loads, and one of the push path\'s')
})

t.test('a queue that is posting: past maxQueued the oldest waiting one goes, never the one being posted', async (t) => {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const posted: string[] = []
  const poster: WebhookPoster = {
    async post (_target, body) {
      posted.push(body)
      await held
      return { kind: 'delivered', status: 200 }
    },
    async close () {}
  }
  const deliverer = new PushDeliverer({ poster, maxQueued: 2 })
  const config = { config: { id: 'c', url: 'https://h.example/hook', token: 'secret-token', authentication: undefined }, converse: false }
  deliverer.enqueue('a', 't', [config], [{ n: 1 }])
  while (posted.length === 0) await new Promise((resolve) => setImmediate(resolve))
  deliverer.enqueue('a', 't', [config], [{ n: 2 }, { n: 3 }])
  release()
  await deliverer.idle()
  t.strictSame(posted, ['{"n":1}', '{"n":3}'], 'n=2 waited and went; n=1, being posted, stayed')
  t.equal(deliverer.stats.gaveUp, 1)
})

t.test('an answer whose body breaks off: the notification is delivered all the same (the body is not used)', async (t) => {
  const server = createHttpServer((_request, response) => {
    response.writeHead(200, { 'content-length': '1000' })
    response.write('x'.repeat(10), () => { response.socket?.destroy() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const poster = webhookPoster(new PushUrlPolicy({ allowedHosts: ['127.0.0.1'], allowHttp: true }), { timeoutMs: 2000 })
  t.teardown(() => poster.close())
  const port = (server.address() as AddressInfo).port
  t.strictSame(await poster.post({ url: `http://127.0.0.1:${port}/` }, '{}', 'id-broken'), { kind: 'delivered', status: 200 })
})

t.test('the webhook POST span: exactly the attributes docs/observability.md names, never the URL\'s path or query', async (t) => {
  const exporter = registerSdk(t, undefined, { withoutContextManager: true })
  const app = Fastify()
  app.addContentTypeParser('application/a2a+json', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })
  app.post('/hook/:status', async (request, reply) => await reply.code(Number((request.params as { status: string }).status)).send())
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = (app.server.address() as AddressInfo).port
  const poster = webhookPoster(new PushUrlPolicy({ allowedHosts: ['127.0.0.1'], allowHttp: true }), { timeoutMs: 2000 })
  t.teardown(() => poster.close())
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const closedPort = (closed.address() as AddressInfo).port
  await new Promise((resolve) => closed.close(resolve))
  const base = { 'http.request.method': 'POST', 'server.address': '127.0.0.1' }
  const cases = [
    [`http://127.0.0.1:${port}/hook/204?key=s3cret#frag`, { ...base, 'server.port': port, 'http.response.status_code': 204 }],
    [`http://127.0.0.1:${port}/hook/503?key=s3cret`, { ...base, 'server.port': port, 'http.response.status_code': 503 }],
    [`http://127.0.0.1:${closedPort}/hook/s3cret`, { ...base, 'server.port': closedPort }]
  ] as const
  for (const [url, attributes] of cases) {
    exporter.reset()
    await poster.post({ url, token: 'tok-s3cret' }, '{}', 'id')
    const [span] = exporter.getFinishedSpans()
    t.equal(span?.name, 'push.webhook POST')
    t.strictSame({ ...span?.attributes }, attributes, url)
  }
})
