/**
 * Open streams per caller (issue 23, finding 4): with `maxStreamsPerCaller`, a caller — or, without a credential, a
 * client address — holds at most that many open SSE streams (SendStreamingMessage and SubscribeToTask together) at
 * each door. One more is HTTP 429 with Retry-After and a JSON-RPC -32000 (TOO_MANY_STREAMS) before any stream opens;
 * another caller is not affected; a stream's slot is free again once it ends, whether the task finished or the
 * client went away. The gateway sets it from MAX_STREAMS_PER_CALLER.
 */
import t from 'tap'
import { createAuthenticator } from '../../../packages/a2a-converse/src/auth/authenticator.js'
import { loadConfig } from '../../../src/gateway/config.js'
import { until } from '../../fixtures/a2a-app.js'
import { hangingExecutor } from '../../fixtures/a2a-executors.js'
import { ALICE_KEY, BOB_KEY } from '../../fixtures/auth.js'
import { call, DOORS, open, serveDoor, userMessage, type Door } from '../../fixtures/doors.js'

const card = { name: 'Demo', description: 'd', capabilities: { streaming: true } }
const authenticator = createAuthenticator({ apiKeys: [{ callerId: 'alice', key: ALICE_KEY }, { callerId: 'bob', key: BOB_KEY }] })
const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })

/** A SendStreamingMessage on the hanging agent: open until its task is canceled or the client goes away. */
async function stream (door: Door, key: string) {
  const opened = await open(door, 'SendStreamingMessage', { message: userMessage('hold on') }, as(key))
  return { ...opened, task: opened.response.status === 200 ? (await opened.sse.waitFor((frame) => frame.result?.task !== undefined)).result.task : undefined }
}

for (const name of DOORS) {
  t.test(`${name}: a caller at the limit is refused with 429 before a stream opens; another caller is not`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: hangingExecutor() }], authenticator, maxStreamsPerCaller: 2 })
    const first = await stream(door, ALICE_KEY)
    const second = await stream(door, ALICE_KEY)
    t.same([first.response.status, second.response.status], [200, 200])

    const refused = await call(door, 'SendStreamingMessage', { message: userMessage('one more') }, { ...as(ALICE_KEY), id: 'third' })
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('retry-after'), '5')
    t.equal(refused.headers.get('content-type')?.startsWith('application/json'), true, 'a JSON answer, no stream')
    t.match(refused.json, {
      jsonrpc: '2.0',
      id: 'third',
      error: { code: -32000, data: [{ reason: 'TOO_MANY_STREAMS', metadata: { maxStreams: '2', retryAfterSeconds: '5' } }] }
    })
    const subscribe = await call(door, 'SubscribeToTask', { id: first.task.id }, as(ALICE_KEY))
    t.equal(subscribe.status, 429, 'SubscribeToTask counts too')
    t.equal((await call(door, 'GetTask', { id: first.task.id }, as(ALICE_KEY))).status, 200, 'other methods are not limited')

    const bobs = await stream(door, BOB_KEY)
    t.equal(bobs.response.status, 200, 'another caller opens a stream')
    bobs.abort()

    // The task ends: its stream ends, and its slot is free.
    t.equal((await call(door, 'CancelTask', { id: first.task.id }, as(ALICE_KEY))).json.result.status.state, 'TASK_STATE_CANCELED')
    await first.sse.ended
    const third = await stream(door, ALICE_KEY)
    t.equal(third.response.status, 200, 'a finished stream frees its slot')

    // The client goes away: its slot is free once the door has seen it go.
    second.abort()
    let status = 429
    await until(async () => {
      const next = await open(door, 'SubscribeToTask', { id: third.task.id }, as(ALICE_KEY))
      status = next.response.status
      next.abort()
      return status === 200
    })
    t.equal(status, 200, 'a stream whose client went away frees its slot')
    third.abort()
  })

  t.test(`${name}: walk-ins are counted per client address`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: hangingExecutor() }], maxStreamsPerCaller: 1 })
    const first = await open(door, 'SendStreamingMessage', { message: userMessage('hold on') })
    t.equal(first.response.status, 200)
    t.equal((await call(door, 'SendStreamingMessage', { message: userMessage('again') })).status, 429, 'the same address, refused')
    first.abort()
  })
}

t.test('no limit by default at a library door', async (t) => {
  const door = await serveDoor(t, 'fastify', { agents: [{ id: 'demo', card, executor: hangingExecutor() }] })
  const streams = await Promise.all([1, 2, 3].map(async () => await open(door, 'SendStreamingMessage', { message: userMessage('hold on') })))
  t.same(streams.map((opened) => opened.response.status), [200, 200, 200])
  for (const opened of streams) opened.abort()
})

t.test('the option is checked at registration', async (t) => {
  for (const value of [-1, 1.5, '2']) {
    await t.rejects(serveDoor(t, 'fastify', { agents: [{ id: 'demo', card, executor: hangingExecutor() }], maxStreamsPerCaller: value as number }),
      { message: /maxStreamsPerCaller/ })
  }
})

t.test('MAX_STREAMS_PER_CALLER: 100 by default, 0 for no limit', async (t) => {
  t.equal(loadConfig({}).maxStreamsPerCaller, 100)
  t.equal(loadConfig({ MAX_STREAMS_PER_CALLER: '0' }).maxStreamsPerCaller, 0)
  t.throws(() => loadConfig({ MAX_STREAMS_PER_CALLER: '-1' }), { name: 'ConfigError', message: /^MAX_STREAMS_PER_CALLER / })
})
