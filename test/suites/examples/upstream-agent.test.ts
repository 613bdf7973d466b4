/**
 * examples/upstream-agent.ts behind the gateway as docs/library.md's proxy section shows: the example's agents file (the
 * minimal upstream form) with the example agent's URL, the extension added, its tasks and the takeover inbox.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { CHILD_EXEC_ARGV } from '../../fixtures/gateway-process.js'
import { once } from 'node:events'
import { loadAgentDefinitions } from '../../../src/gateway/agent-definitions.js'
import { startGateway, URI } from '../../fixtures/gateway-helpers.js'

t.test('the example upstream agent behind the gateway', async (t) => {
  const [declared] = await loadAgentDefinitions('examples/proxy/agents.json')
  t.same(declared, { id: 'shop', upstream: { url: 'http://127.0.0.1:9000/' } }, 'the minimal form')
  // CHILD_EXEC_ARGV carries tap's TypeScript loader and coverage hooks into the child.
  const child = spawn(process.execPath, [...CHILD_EXEC_ARGV, 'examples/upstream-agent.ts'], {
    env: { ...process.env, UPSTREAM_PORT: '0', UPSTREAM_HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = once(child, 'exit')
  let stdout = ''
  const { port } = await new Promise<{ port: number }>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const line = stdout.split('\n').find((text) => text.includes('"listening"'))
      if (line !== undefined) resolve(JSON.parse(line).address)
    })
  })
  const { base } = await startGateway(t, {}, { agents: [{ ...declared, upstream: { url: `http://127.0.0.1:${port}/` } }] })
  const card = await (await fetch(`${base}/a2a/shop/.well-known/agent-card.json`)).json() as Record<string, any>
  t.equal(card.name, 'Warehouse')
  t.ok(card.capabilities.extensions.some((entry: any) => entry.uri === URI))
  let id = 0
  const send = async (text: string, extra: Record<string, unknown> = {}, method = 'SendMessage') => {
    const response = await fetch(`${base}/a2a/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: method === 'SendMessage' ? { message: { messageId: `ex-${id}`, role: 'ROLE_USER', parts: [{ text }], ...extra } } : extra })
    })
    return (await response.json() as Record<string, any>).result
  }
  t.equal((await send('stock kettle')).message.parts[0].text, '12 × kettle in stock.')
  t.match((await send('stock kettle')).message.metadata[URI], { author: 'agent', answerCoverage: { availability: 'not_recorded' } })
  t.equal((await send('stock piano')).message.parts[0].text, 'No piano in the catalogue.')
  t.equal((await send('hello')).message.parts[0].text, 'Ask "stock <item>" or "order <item>".')
  const order = (await send('order blender')).task
  t.equal(order.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(order.status.message.parts[0].text, 'How many blender?')
  const done = (await send('2', { taskId: order.id, contextId: order.contextId })).task
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
  t.equal(done.status.message.parts[0].text, 'Ordered: 2.')
  const open = (await send('order')).task
  t.equal(open.status.message.parts[0].text, 'How many items?')
  const canceled = await send('', { id: open.id }, 'CancelTask')
  t.equal(canceled.status.state, 'TASK_STATE_CANCELED')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'stops on SIGTERM')
})
