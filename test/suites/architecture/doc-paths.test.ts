/**
 * Every repository path the documentation and the source comments name exists: the READMEs and docs/*.md, and the
 * TypeScript and JavaScript of the library (packages/a2a-converse/src/), src/, plugins/, test/, bench/, examples/,
 * scripts/ and web/. A path written as a
 * pattern (`test/library/runtime/conversation-*.test.ts`, `test/library/backends/proxy/push-{memory,postgres}.test.ts`) must match a file.
 * The CHANGELOG is history: it names what was there then. (Issue 42: 13 such paths had gone stale.)
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ROOT } from '../../fixtures/gateway-process.js'

const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((file) => file !== '')
const named = tracked.filter((file) => file === 'README.md' || file === 'packages/a2a-converse/README.md' || /^docs\/.+\.md$/.test(file) ||
  /^(packages\/a2a-converse\/src|src|plugins|test|bench|examples|scripts|web)\/.+\.(ts|js|mjs)$/.test(file))
/** A path under one of the repository's folders, as prose writes it (not part of a URL or a longer word). */
const PATH = /(?<![\w./@-])(?:packages|src|test|plugins|bench|examples|docs|scripts|deploy|web|\.ci)\/[\w.\-/*{},]*[\w}]/g

function exists (path: string, from: string): boolean {
  // A pattern: some file starts with what comes before its first wildcard.
  const wildcard = path.search(/[*{]/)
  if (wildcard >= 0) return tracked.some((file) => file.startsWith(path.slice(0, wildcard)))
  const candidates = [path, path.replace(/\.js$/, '.ts'), from.startsWith('docs/') ? join(dirname(from), path) : path]
  return candidates.some((candidate) => existsSync(join(ROOT, candidate)))
}

t.test('every path named in docs and source comments exists', async (t) => {
  t.ok(named.length > 100, `${named.length} files read`)
  const missing: string[] = []
  for (const file of named) {
    // This file's own examples are not claims.
    if (file === 'test/suites/architecture/doc-paths.test.ts') continue
    for (const [path] of readFileSync(join(ROOT, file), 'utf8').matchAll(PATH)) {
      if (!exists(path, file)) missing.push(`${file}: ${path}`)
    }
  }
  t.same(missing, [])
})
