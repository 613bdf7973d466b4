/**
 * The MCP client snippet of docs/clients.md, run as written (only the port changes) with Node against a listening gateway:
 * what a newcomer pastes works, and prints what its comments say.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { ROOT } from '../../fixtures/gateway-process.js'

t.test('the MCP client snippet of docs/clients.md runs against the gateway', async (t) => {
  const readme = await readFile(join(ROOT, 'docs', 'clients.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Connecting an MCP client'))
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1]
  t.ok(code?.includes('StreamableHTTPClientTransport'), 'docs/clients.md has the snippet')
  const { base } = await startGateway(t)
  // Inside the project, so that `@modelcontextprotocol/sdk` resolves as it does in the reader's project.
  const file = join(ROOT, `.mcp-client-${process.pid}.mjs`)
  await writeFile(file, (code as string).replaceAll('http://localhost:8080', base))
  t.teardown(() => rm(file, { force: true }))
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const status = await new Promise((resolve) => child.on('close', resolve))
  t.equal(status, 0, stderr)
  t.match(stdout, "[ 'ask_agent', 'book_table', 'request_refund' ]")
  t.match(stdout, /30 days of delivery/)
  t.match(stdout, 'Returns policy')
  t.match(stdout, "TASK_STATE_INPUT_REQUIRED [ 'date', 'partySize', 'notes' ] → TASK_STATE_COMPLETED")
  t.match(stdout, "{ toolName: 'book_table', outcome: 'started' }")
})
