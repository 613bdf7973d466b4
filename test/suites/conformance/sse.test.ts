/**
 * Conformance, both doors: SSE framing (`data: <JSON-RPC response>` + blank line, the request id on every
 * frame), the headers and the echo on streams, decoration per frame, a client that goes away, and closing
 * the door ending open streams.
 */
import t from 'tap'
import { staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { hangingExecutor, messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, open, serveDoor, URI, userMessage, type DoorAgent } from '../../fixtures/doors.js'
import { until } from '../../fixtures/a2a-app.js'

const agent = (executor: DoorAgent['executor']): DoorAgent => ({ id: 'demo', card: { name: 'Demo', description: 'd' }, executor })
const provider = staticEnvelopeProvider(ENVELOPE as never)

for (const name of DOORS) {
  t.test(`${name}: a Task stream: framing, headers, echo, every frame decorated`, async (t) => {
    const door = await serveDoor(t, name, { agents: [agent(taskExecutor())], provider })
    const reply = await call(door, 'SendStreamingMessage', { message: userMessage('q') }, { id: 'stream-9', active: true })
    t.equal(reply.status, 200)
    t.equal(reply.headers.get('content-type'), 'text/event-stream')
    t.equal(reply.headers.get('cache-control'), 'no-cache')
    t.equal(reply.headers.get('x-accel-buffering'), 'no')
    t.equal(reply.headers.get('a2a-extensions'), URI, 'the echo header on a JSON-RPC stream')
    t.match(reply.text, /^(data: \{[^\n]*\}\n\n){4}$/, 'four `data:` frames, each followed by a blank line')
    const frames = reply.text.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.slice(6)))
    t.ok(frames.every((frame) => frame.jsonrpc === '2.0' && frame.id === 'stream-9'))
    t.strictSame(frames.map((frame) => Object.keys(frame.result)[0]), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
    t.match(frames[2].result.artifactUpdate.artifact, { extensions: [URI], metadata: { [URI]: { answerCoverage: ENVELOPE.answerCoverage } } })

    const plain = await call(door, 'SendStreamingMessage', { message: userMessage('q') })
    t.equal(plain.headers.get('a2a-extensions'), null)
    t.notMatch(plain.text, URI, 'no trace of the extension on a stream that did not activate it')
  })

  t.test(`${name}: a Message stream: one frame, then the end`, async (t) => {
    const door = await serveDoor(t, name, { agents: [agent(messageExecutor())], provider })
    const reply = await call(door, 'SendStreamingMessage', { message: userMessage('hi') }, { active: true })
    t.match(reply.text, /^data: \{.*\}\n\n$/s)
    t.match(JSON.parse(reply.text.slice(6)).result.message, { parts: [{ text: 'echo: hi' }], metadata: { [URI]: { author: 'agent' } } })
  })

  t.test(`${name}: a client that goes away ends its stream; the task keeps running until canceled`, async (t) => {
    const executor = hangingExecutor()
    const door = await serveDoor(t, name, { agents: [agent(executor)], provider })
    const first = await open(door, 'SendStreamingMessage', { message: userMessage('wait') }, { active: true })
    t.equal(first.response.headers.get('a2a-extensions'), URI, 'the echo arrives with the headers, before any event')
    const working = await first.sse.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
    const taskId = working.result.statusUpdate.taskId
    const second = await open(door, 'SubscribeToTask', { id: taskId })
    await second.sse.waitFor((frame) => frame.result?.task !== undefined)
    first.abort()
    const state = async () => (await call(door, 'GetTask', { id: taskId })).json.result.status.state
    t.equal(await state(), 'TASK_STATE_WORKING')
    await call(door, 'CancelTask', { id: taskId })
    await second.sse.waitFor((frame) => frame.result?.statusUpdate?.status?.state === 'TASK_STATE_CANCELED')
    t.equal(await second.sse.ended, '', 'the other subscriber sees the end of the task')
    await until(() => executor.finished.includes(taskId))
  })

  t.test(`${name}: closing the door ends open streams`, async (t) => {
    const executor = hangingExecutor()
    const door = await serveDoor(t, name, { agents: [agent(executor)], provider })
    const stream = await open(door, 'SendStreamingMessage', { message: userMessage('wait') })
    await stream.sse.waitFor((frame) => frame.result?.statusUpdate !== undefined)
    await door.close()
    // A clean end of the response (the door ended it): a connection cut under the stream would reject instead.
    t.equal(await stream.sse.ended, '', 'the stream ended cleanly')
  })
}
