/**
 * The build's cluster template (scripts/make-cluster-template.js, issue 43): made in dist/cluster-templates/ under the
 * installed PGlite's name, where the gateway looks for it; a second build keeps it.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { templateFile } from 'a2a-converse/postgres'
import { CHILD_EXEC_ARGV, ROOT } from '../../fixtures/gateway-process.js'

// An initdb in a child process: seconds, tens of them on a loaded 2-core machine.
t.setTimeout(300_000)

t.test('made once per PGlite, then kept', async (t) => {
  const dir = t.testdir()
  const script = join(ROOT, 'scripts', 'make-cluster-template.js')
  const first = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 240_000 })
  t.equal(first.status, 0, first.stderr)
  const file = await templateFile(join('dist', 'cluster-templates'))
  t.equal(first.stdout, `build: made ${file}\n`)
  t.strictSame(readdirSync(join(dir, 'dist', 'cluster-templates')), [file.split('/').pop()])
  const second = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 240_000 })
  t.equal(second.status, 0, second.stderr)
  t.equal(second.stdout, 'build: the embedded database\'s cluster template is up to date\n')
})
