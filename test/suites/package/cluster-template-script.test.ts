/**
 * The build's cluster template (scripts/make-cluster-template.js, issue 43): made in dist/cluster-templates/ under the
 * installed PGlite's and the migrations' name, where the gateway looks for it; a second build keeps it, and the
 * templates it replaces (another PGlite's, another migration set's) are removed.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { templateFile } from 'a2a-converse/postgres'
import { CHILD_EXEC_ARGV, ROOT } from '../../fixtures/gateway-process.js'

// An initdb in a child process: seconds, tens of them on a loaded 2-core machine.
t.setTimeout(300_000)

t.test('made once per PGlite and migration set, then kept; the ones it replaces removed', async (t) => {
  const dir = t.testdir()
  mkdirSync(join(dir, 'dist', 'cluster-templates'), { recursive: true })
  for (const name of ['cluster-pglite-0.0.1.tar.gz', 'cluster-pglite-0.0.1-000000000000.tar.gz', 'notes.txt']) {
    writeFileSync(join(dir, 'dist', 'cluster-templates', name), '')
  }
  const script = join(ROOT, 'scripts', 'make-cluster-template.js')
  const first = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 240_000 })
  t.equal(first.status, 0, first.stderr)
  const file = await templateFile(join('dist', 'cluster-templates'))
  t.equal(first.stdout, `build: made ${file}\n`)
  t.strictSame(readdirSync(join(dir, 'dist', 'cluster-templates')).sort(), [file.split('/').pop(), 'notes.txt'].sort(), 'the older templates removed, nothing else')
  const second = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 240_000 })
  t.equal(second.status, 0, second.stderr)
  t.equal(second.stdout, 'build: the embedded database\'s cluster template is up to date\n')
})
