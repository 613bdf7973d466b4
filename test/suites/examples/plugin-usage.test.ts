import t from 'tap'
import { spawnSync } from 'node:child_process'
import { CHILD_EXEC_ARGV } from '../../fixtures/gateway-process.js'

t.test('the plugin example runs and shows the envelope only when activated', async (t) => {
  // CHILD_EXEC_ARGV carries tap's TypeScript loader and coverage hooks into the child.
  const run = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, 'examples/plugin-usage.ts'], { encoding: 'utf8', timeout: 30_000 })
  t.equal(run.status, 0, run.stderr)
  t.match(run.stdout, '"activated": "https://docs.radioso.ai/reference/a2a-converse-extension/v1"')
  t.match(run.stdout, '"coverage": "answered"')
  t.match(run.stdout, '"activated": null')
  t.match(run.stdout, '"serverCardUrl"')
})
