/**
 * The real entry (src/gateway/main.ts) as a process, drained by SIGTERM / SIGINT while an SSE stream is open: the
 * stream is a human-owned task held WORKING (the takeover flow through the operator API), which stays open until a
 * person replies or the app closes.
 */
import t, { type Test } from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { rpc, SEED_HEADERS, URI, userMessage } from '../fixtures/gateway-helpers.js'
import { contextIdOf } from '../fixtures/context-ids.js'
import { startMain, within, type GatewayProcess } from '../fixtures/gateway-process.js'
import { readSse } from '../fixtures/sse-reader.js'

// Every test spawns the gateway through tap's TypeScript loader: allow for slow, busy machines.
t.setTimeout(300_000)

const KEY = 'operator-key-for-shutdown-tests'
const SHUTDOWN_TIMEOUT_MS = 8000
/** How long the test waits for an exit: generous, since a child writes its coverage data as it exits. */
const EXIT_WAIT_MS = 60_000

/** A conversation taken over by a person, and a stream on its held (WORKING) task, open. */
async function openHeldStream (base: string, contextId: string, via: 'SendStreamingMessage' | 'SubscribeToTask') {
  const post = (body: string) => fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body })
  await (await post(rpc('SendMessage', { message: userMessage('Hello there', { contextId }) }))).text()
  const takeover = await fetch(`${base}/api/v1/agents/demo/conversations/${contextId}/takeover`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}` }
  })
  if (takeover.status !== 200) throw new Error(`takeover: ${takeover.status}`)
  let response: Response
  if (via === 'SendStreamingMessage') {
    response = await post(rpc('SendStreamingMessage', { message: userMessage('Is a person there?', { contextId }) }))
  } else {
    const held = await (await post(rpc('SendMessage', { message: userMessage('Is a person there?', { contextId }) }))).json() as Record<string, any>
    response = await post(rpc('SubscribeToTask', { id: held.result.task.id }))
  }
  const stream = readSse(response)
  await stream.waitFor((frame) =>
    frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING' ||
    (via === 'SubscribeToTask' && frame.result?.task?.status?.state === 'TASK_STATE_WORKING'))
  return { response, stream }
}

/**
 * A second connection with a request whose headers are not finished: the server cannot reap it as idle, so the
 * rest of the request, sent once draining started, is answered by the draining instance.
 */
async function halfSentRequest (base: string, path: string) {
  const url = new URL(base)
  const socket: Socket = connect(Number(url.port), url.hostname)
  await once(socket, 'connect')
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n`)
  let received = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
  const closed = once(socket, 'close')
  return {
    async finish () {
      socket.write('\r\n')
      await closed
      return received
    },
    destroy: () => socket.destroy()
  }
}

/** The drain, as the child logged it (its own clock): from the signal to 'closed', within the budget. */
function checkDrainTime (t: Test, child: GatewayProcess) {
  const draining = child.lines().find((line) => line.msg?.startsWith('draining'))
  const closed = child.lines().find((line) => line.msg === 'closed')
  t.ok(draining !== undefined && closed !== undefined, 'draining and closed are logged')
  t.ok(closed!.time - draining!.time < SHUTDOWN_TIMEOUT_MS, `drained in ${closed!.time - draining!.time} ms, within SHUTDOWN_TIMEOUT_MS`)
}

function checkCleanOutput (t: Test, child: GatewayProcess) {
  t.equal(child.stderr(), '', 'nothing on stderr (no uncaught error, no stack)')
  const lines = child.lines() // throws if stdout holds anything but pino JSON lines
  t.same(lines.filter((line) => line.level >= 50), [], 'no error lines in the log')
  t.notOk(/uncaught|unhandled/i.test(child.stdout()), 'no uncaught or unhandled error')
}

t.test('SIGTERM during an open SSE stream (SendStreamingMessage): the stream ends cleanly, ready is 503, exit 0 in time', async (t) => {
  const child = startMain(t, { OPERATOR_API_KEY: KEY, SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), LOG_LEVEL: 'info' })
  const base = await child.listening()
  const { response, stream } = await openHeldStream(base, contextIdOf('ctx-sigterm'), 'SendStreamingMessage')
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^text\/event-stream/)
  t.equal(response.headers.get('a2a-extensions'), URI)
  const held = stream.frames.at(-1)!
  t.match(held.result.statusUpdate.status.message.metadata[URI], { ownership: { state: 'human_owned', suppressed: true } })

  const ready = await halfSentRequest(base, '/health/ready')
  t.teardown(ready.destroy)
  child.kill('SIGTERM')
  await child.waitForLine((line) => line.msg?.startsWith('draining') === true, 'draining')
  const answer = await ready.finish()
  t.match(answer, /^HTTP\/1\.1 503 /, '/health/ready answers 503 while draining')

  const rest = await stream.ended // rejects if the connection broke instead of ending
  t.equal(rest, '', 'the stream ended on a frame boundary')
  const exit = await within(child.exited, EXIT_WAIT_MS)
  t.same(exit, { code: 0, signal: null }, 'exit code 0 (the SHUTDOWN_TIMEOUT_MS timer exits with 1)')
  checkDrainTime(t, child)
  t.match(child.lines().find((line) => line.msg?.startsWith('draining')), { level: 30, signal: 'SIGTERM' })
  t.ok(child.lines().some((line) => line.msg === 'closed'))
  checkCleanOutput(t, child)
})

t.test('SIGINT twice (as `npm start` forwards Ctrl-C) during a SubscribeToTask stream: one drain, exit 0', async (t) => {
  const child = startMain(t, { OPERATOR_API_KEY: KEY, SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), LOG_LEVEL: 'info' })
  const base = await child.listening()
  const { response, stream } = await openHeldStream(base, contextIdOf('ctx-sigint'), 'SubscribeToTask')
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^text\/event-stream/)

  // A half-sent request holds the drain open, so the second signal surely arrives while draining (two signals sent
  // at once may be merged into one by the kernel).
  const pending = await halfSentRequest(base, '/health/ready')
  t.teardown(pending.destroy)
  child.kill('SIGINT')
  await child.waitForLine((line) => line.msg?.startsWith('draining') === true, 'draining')
  t.equal(await stream.ended, '', 'the stream ended cleanly')
  child.kill('SIGINT')
  await child.waitForLine((line) => line.msg === 'already draining', 'the second signal')
  t.match(await pending.finish(), /^HTTP\/1\.1 503 /, 'a request finishing during the drain gets 503')
  t.same(await within(child.exited, EXIT_WAIT_MS), { code: 0, signal: null }, 'exit code 0, not killed by the second signal')
  checkDrainTime(t, child)
  const lines = child.lines()
  t.equal(lines.filter((line) => line.msg?.startsWith('draining')).length, 1, 'one drain')
  t.match(lines.find((line) => line.msg?.startsWith('draining')), { signal: 'SIGINT' })
  t.match(lines.find((line) => line.msg === 'already draining'), { signal: 'SIGINT' })
  checkCleanOutput(t, child)
})

t.test('a request that never finishes: the drain gives up after SHUTDOWN_TIMEOUT_MS with exit code 1', async (t) => {
  const child = startMain(t, { SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'info' })
  const base = await child.listening()
  const stuck = await halfSentRequest(base, '/health/live')
  t.teardown(stuck.destroy)
  const sent = Date.now()
  child.kill('SIGTERM')
  t.same(await within(child.exited, EXIT_WAIT_MS), { code: 1, signal: null })
  t.ok(Date.now() - sent >= 300, 'it waited for the budget')
  const draining = child.lines().find((line) => line.msg?.startsWith('draining'))
  const timedOut = child.lines().find((line) => line.msg === 'shutdown timed out')
  t.ok(timedOut!.time - draining!.time >= 300, 'gave up after the budget, not before')
  t.match(child.lines().find((line) => line.level === 50), { msg: 'shutdown timed out', timeoutMs: 300 })
  t.equal(child.stderr(), '')
})
