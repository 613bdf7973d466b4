/**
 * examples/conformance/: the executor plays the conformance kit's scenarios (kit/scenarios/*.feature) by messageId
 * prefix through both doors, and the example's entry serves it from the gateway as `npm run tck` starts it.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { conformanceExecutor, prefixOf, scenarioOf } from '../../../examples/conformance/executor.js'
import { call, DOORS, open, serveDoor, type Door } from '../../fixtures/doors.js'

const card = { name: 'TCK', description: 'The kit\'s agent', capabilities: { streaming: true } }
const session = 'a1b2c3d4'
const send = (door: Door, prefix: string, extra: Record<string, unknown> = {}) =>
  call(door, 'SendMessage', { message: { messageId: `${prefix}-${session}`, role: 'ROLE_USER', parts: [{ text: 'hi' }], ...extra } }, { agent: 'tck' })
const texts = (parts: Array<{ text?: string }>) => parts.map((part) => part.text)

t.test('prefixes: the longest match wins, the kit\'s session suffix is not part of the prefix', async (t) => {
  t.equal(scenarioOf('tck-artifact-file-url-1234abcd'), scenarioOf('tck-artifact-file-url'))
  t.not(scenarioOf('tck-artifact-file-url-1234abcd'), scenarioOf('tck-artifact-file-1234abcd'))
  t.equal(scenarioOf('tck-something-else'), undefined)
  t.equal(prefixOf('tck-dm-test-001-1234abcd'), 'tck-dm-test-001')
  t.equal(prefixOf('no-suffix'), 'no-suffix')
})

for (const name of DOORS) {
  t.test(`${name}: the core scenarios`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'tck', card, executor: conformanceExecutor() }] })
    const complete = (await send(door, 'tck-complete-task')).json.result.task
    t.equal(complete.status.state, 'TASK_STATE_COMPLETED')
    t.strictSame(texts(complete.status.message.parts), ['Hello from TCK'])
    const artifacts = {
      'tck-artifact-text': [{ text: 'Generated text content' }],
      'tck-artifact-file': [{ raw: Buffer.from('Generated file content').toString('base64'), filename: 'output.txt', mediaType: 'text/plain' }],
      'tck-artifact-file-url': [{ url: 'https://example.com/output.txt', filename: 'output.txt', mediaType: 'text/plain' }],
      'tck-artifact-data': [{ data: { key: 'value', count: 42 } }]
    }
    for (const [prefix, parts] of Object.entries(artifacts)) {
      const task = (await send(door, prefix)).json.result.task
      t.equal(task.status.state, 'TASK_STATE_COMPLETED', prefix)
      t.match(task.artifacts, [{ parts }], prefix)
    }
    const message = (await send(door, 'tck-message-response')).json.result.message
    t.strictSame(texts(message.parts), ['Direct message response'])
    t.equal((await send(door, 'tck-reject-task')).json.result.task.status.state, 'TASK_STATE_REJECTED')
    const other = (await send(door, 'tck-dm-test-001')).json.result.task
    t.equal(other.status.state, 'TASK_STATE_COMPLETED')
    t.strictSame(texts(other.status.message.parts), ['Unhandled messageId prefix: tck-dm-test-001'])
    const waiting = (await send(door, 'tck-input-required')).json.result.task
    t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const resumed = (await send(door, 'tck-complete-task', { taskId: waiting.id, contextId: waiting.contextId })).json.result.task
    t.equal(resumed.status.state, 'TASK_STATE_COMPLETED', 'the follow-up on the same task plays its own prefix')
    const again = (await send(door, 'tck-input-required')).json.result.task
    const canceled = await call(door, 'CancelTask', { id: again.id }, { agent: 'tck' })
    t.equal(canceled.json.result.status.state, 'TASK_STATE_CANCELED', 'a task waiting for input is canceled')
  })

  t.test(`${name}: the streaming scenarios, in order`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'tck', card, executor: conformanceExecutor() }] })
    const stream = async (prefix: string) => {
      const { sse } = await open(door, 'SendStreamingMessage', { message: { messageId: `${prefix}-${session}`, role: 'ROLE_USER', parts: [{ text: 'go' }] } }, { agent: 'tck' })
      await sse.ended
      return sse.frames.map((frame) => {
        const result = frame.result
        if (result.task !== undefined) return `task:${result.task.status.state}`
        if (result.statusUpdate !== undefined) return `status:${result.statusUpdate.status.state}`
        const { artifact, append, lastChunk } = result.artifactUpdate
        return `artifact:${texts(artifact.parts).join('')}${append === true ? ':append' : ''}${lastChunk === true ? ':last' : ''}`
      })
    }
    t.strictSame(await stream('tck-stream-001'), [
      'task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_WORKING', 'artifact:Stream hello from TCK:last', 'status:TASK_STATE_COMPLETED'
    ])
    t.strictSame(await stream('tck-stream-002'), ['task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_COMPLETED'])
    t.strictSame(await stream('tck-stream-artifact-chunked'), [
      'task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_WORKING', 'artifact:chunk-1 ', 'artifact:chunk-2:append:last', 'status:TASK_STATE_COMPLETED'
    ])
    t.strictSame(await stream('tck-stream-artifact-file'), [
      'task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_WORKING', 'artifact::last', 'status:TASK_STATE_COMPLETED'
    ])
  })
}

t.test('the resubscription scenario stays WORKING for twice the streaming timeout, unless canceled', async (t) => {
  const door = await serveDoor(t, 'fastify', { agents: [{ id: 'tck', card, executor: conformanceExecutor({ streamingTimeoutMs: 1 }) }] })
  const { sse } = await open(door, 'SendStreamingMessage', { message: { messageId: `test-resubscribe-message-id-${session}`, role: 'ROLE_USER', parts: [{ text: 'go' }] } }, { agent: 'tck' })
  await sse.ended
  t.strictSame(sse.frames.map((frame) => Object.keys(frame.result)[0]), ['task', 'statusUpdate', 'statusUpdate'])
  t.equal(sse.frames[2].result.statusUpdate.status.state, 'TASK_STATE_COMPLETED')

  const slow = await serveDoor(t, 'fastify', { agents: [{ id: 'tck', card, executor: conformanceExecutor({ streamingTimeoutMs: 60_000 }) }] })
  const opened = await open(slow, 'SendStreamingMessage', { message: { messageId: `test-resubscribe-message-id-${session}`, role: 'ROLE_USER', parts: [{ text: 'go' }] } }, { agent: 'tck' })
  const working = (await opened.sse.waitFor((frame) => frame.result.statusUpdate?.status.state === 'TASK_STATE_WORKING', 'WORKING')).result.statusUpdate
  const canceled = await call(slow, 'CancelTask', { id: working.taskId }, { agent: 'tck' })
  t.equal(canceled.json.result.status.state, 'TASK_STATE_CANCELED')
  await opened.sse.ended
  const states = opened.sse.frames.slice(1).map((frame) => frame.result.statusUpdate.status.state)
  t.strictSame(states, ['TASK_STATE_WORKING', 'TASK_STATE_CANCELED'], 'no COMPLETED after the cancel')
})

t.test('the example\'s entry: the gateway serving the agent at /a2a/tck, stopped by SIGTERM', async (t) => {
  // process.execArgv carries tap's TypeScript loader and coverage hooks into the child.
  const child = spawn(process.execPath, [...process.execArgv, 'examples/conformance/agent.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', TCK_STREAMING_TIMEOUT: undefined }, stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = once(child, 'exit')
  let stdout = ''
  const { url } = await new Promise<{ url: string }>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const line = stdout.split('\n').find((text) => text.includes('"listening"'))
      if (line !== undefined) resolve(JSON.parse(line))
    })
  })
  const card = await (await fetch(`${url}/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(card.name, 'TCK conformance agent')
  const reply = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { message_id: `tck-complete-task-${session}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] } } })
  })
  const task = (await reply.json() as Record<string, any>).result.task
  t.strictSame(texts(task.status.message.parts), ['Hello from TCK'], 'the kit\'s way: a trailing slash, proto names')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'stops on SIGTERM')
})
