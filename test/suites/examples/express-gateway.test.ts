/** `npm run example:express`: the demo agent on Express answers like `npm start` and stops on SIGTERM. */
import t from 'tap'
import { spawn } from 'node:child_process'
import { CHILD_EXEC_ARGV } from '../../fixtures/gateway-process.js'
import { once } from 'node:events'
import { configSchema } from '../../../src/gateway/config.js'
import { URI } from '../../fixtures/doors.js'

t.test('the Express example serves the demo agent at /a2a/demo', async (t) => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(configSchema.properties)) delete env[key]
  // CHILD_EXEC_ARGV carries tap's TypeScript loader and coverage hooks into the child.
  const child = spawn(process.execPath, [...CHILD_EXEC_ARGV, 'examples/express-gateway.ts'], {
    env: { ...env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = once(child, 'exit')
  let stdout = ''
  const listening = new Promise<{ port: number }>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const line = stdout.split('\n').find((text) => text.includes('"listening"'))
      if (line !== undefined) resolve(JSON.parse(line).address)
    })
  })
  const base = `http://127.0.0.1:${(await listening).port}`
  const card: any = await (await fetch(`${base}/.well-known/agent-card.json`)).json()
  t.equal(card.supportedInterfaces[0].url, `${base}/a2a/demo`)
  const reply = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'x1', role: 'ROLE_USER', parts: [{ text: 'How long do I have to return an order?' }] } } })
  })
  t.equal(reply.headers.get('a2a-extensions'), URI)
  const message = (await reply.json() as any).result.message
  t.match(message.parts[0].text, /30 days/)
  t.match(message.metadata[URI], { answerCoverage: { coverage: 'answered', reason: 'sufficient_evidence' }, citations: [{ title: 'Returns policy' }] })
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'exits 0 on SIGTERM')
})
