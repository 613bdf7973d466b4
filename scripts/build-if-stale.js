// `npm start`'s prestart: compile to dist/ only when a source changed since the last build, so a restart is quick
// while `npm ci && npm start` on a fresh clone (no dist/ yet) still builds. Run from the package root.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * What the build reads: tsconfig.build.json's folders and the library it references, the inbox page's script (web/),
 * the compiler settings and the installed versions.
 */
export const INPUTS = Object.freeze([
  'src', 'plugins', 'examples', 'bench', 'web', 'packages/a2a-converse/src', 'packages/a2a-converse/package.json',
  'packages/a2a-converse/tsconfig.json', 'tsconfig.json', 'tsconfig.base.json', 'tsconfig.build.json', 'package-lock.json'
])
/** Holds the newest input time the last successful build saw (a number: mtimes have sub-millisecond parts). */
export const STAMP = join('dist', '.build-stamp')
/** The inbox page's own project (DOM types, a browser module): compiled after the gateway when present. */
const INBOX_TSCONFIG = join('web', 'inbox', 'tsconfig.json')
/** Makes the embedded database's cluster template once the library is compiled. */
const TEMPLATE_SCRIPT = join('scripts', 'make-cluster-template.js')

/** The newest modification time under `path` (the repository's own folders: no links are followed), or 0. */
function newest (path) {
  let stat
  try {
    stat = lstatSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** The newest modification time of all inputs. */
function newestInput (root) {
  return Math.max(...INPUTS.map((input) => newest(join(root, input))))
}

/** True when there is no stamp (no build yet) or an input changed since the build it records. */
export function isStale (root) {
  let built
  try {
    built = Number(readFileSync(join(root, STAMP), 'utf8'))
  } catch {
    return true
  }
  return !(newestInput(root) <= built)
}

/** Builds when stale; returns the exit code: 1 when the compiler failed (it printed why). */
export function buildIfStale (root, log = (line) => process.stdout.write(`${line}\n`)) {
  if (!isStale(root)) {
    log('build: dist/ is up to date')
    return 0
  }
  log('build: compiling to dist/ (no build yet, or sources changed since the last one)')
  // -b: the library (a project reference) first; --force: this stamp decides, not tsc's own mtime check (which a
  // build slower than a source's mtime steps fools into thinking the outputs newer). Read before compiling: a
  // source saved while the compiler runs makes the next start build again.
  const inputs = newestInput(root)
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const result = spawnSync(process.execPath, [tsc, '-b', '--force', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) return 1
  // The inbox page's script (a browser build of its own: `npm run build` does the same).
  if (existsSync(join(root, INBOX_TSCONFIG))) {
    const page = spawnSync(process.execPath, [tsc, '-p', INBOX_TSCONFIG], { cwd: root, stdio: 'inherit' })
    if (page.status !== 0) return 1
  }
  // The embedded database's cluster template (`npm run build` does the same).
  if (existsSync(join(root, TEMPLATE_SCRIPT))) {
    const template = spawnSync(process.execPath, [TEMPLATE_SCRIPT], { cwd: root, stdio: 'inherit' })
    if (template.status !== 0) return 1
  }
  writeFileSync(join(root, STAMP), String(inputs))
  return 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = buildIfStale(process.cwd())
