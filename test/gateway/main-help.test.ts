/** The real entry as a process: --help prints the variables and does not start; a start logs where the cards are. */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { helpText } from '../../src/gateway/help.js'
import { CHILD_EXEC_ARGV, ROOT, startMain, within } from '../fixtures/gateway-process.js'

// Each child loads the sources through tap's TypeScript loader, which takes a while on a busy machine.
t.setTimeout(300_000)

t.test('--help prints the environment variables and exits 0 without starting', async (t) => {
  // PORT is invalid on purpose: with --help nothing is read or started.
  const run = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, 'src/gateway/main.ts', '--help'], {
    cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PORT: 'eighty' }
  })
  t.equal(run.status, 0, run.stderr)
  t.equal(run.stdout, helpText())
  t.equal(run.stderr, '')
})

t.test('a start logs where the cards are, after the configured line', async (t) => {
  const child = startMain(t, { LOG_LEVEL: 'info' })
  const base = await child.listening()
  const line = await child.waitForLine((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('agent cards: '), 'the cards line')
  t.match(line, { level: 30, cards: [`${base}/.well-known/agent-card.json`, `${base}/a2a/demo/.well-known/agent-card.json`] })
  t.equal(line.msg, `agent cards: ${base}/.well-known/agent-card.json ${base}/a2a/demo/.well-known/agent-card.json`)
  t.ok(child.lines().some((entry) => entry.msg === 'gateway configured'))
  child.kill('SIGTERM')
  t.same(await within(child.exited, 10_000), { code: 0, signal: null })
})
