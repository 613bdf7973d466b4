/** `npm start` compiles only when a source changed since the last build; a fresh clone (no dist/) still builds. */
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildIfStale, isStale, STAMP } from '../../../scripts/build-if-stale.js'
import { CHILD_EXEC_ARGV, ROOT } from '../../fixtures/gateway-process.js'

// Each build runs the TypeScript compiler on a one-file project: seconds on a busy machine.
t.setTimeout(240_000)

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

function project (t: Test) {
  return t.testdir({
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', target: 'ES2022', strict: true, outDir: 'dist', rootDir: '.', types: [] } }),
    'tsconfig.build.json': JSON.stringify({ extends: './tsconfig.json', include: ['src'] }),
    src: { 'a.ts': 'export const a: number = 1\n' }
  })
}

t.test('npm start runs the check before the gateway', async (t) => {
  t.equal(manifest.scripts.prestart, 'node scripts/build-if-stale.js')
})

t.test('no dist/: the command line builds; unchanged sources: it does not', async (t) => {
  const dir = project(t)
  t.ok(isStale(dir), 'a fresh clone is stale')
  const script = join(ROOT, 'scripts', 'build-if-stale.js')
  const first = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 120_000 })
  t.equal(first.status, 0, first.stderr)
  t.match(first.stdout, /^build: compiling to dist\//)
  t.ok(existsSync(join(dir, 'dist', 'src', 'a.js')))
  t.ok(existsSync(join(dir, STAMP)))
  const second = spawnSync(process.execPath, [...CHILD_EXEC_ARGV, script], { cwd: dir, encoding: 'utf8', timeout: 120_000 })
  t.equal(second.status, 0, second.stderr)
  t.equal(second.stdout, 'build: dist/ is up to date\n')
})

t.test('the inbox page\'s script is built too (its own project), and a change under web/ rebuilds', async (t) => {
  const dir = t.testdir({
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', target: 'ES2022', strict: true, outDir: 'dist', rootDir: '.', types: [] } }),
    'tsconfig.build.json': JSON.stringify({ extends: './tsconfig.json', include: ['src'] }),
    src: { 'a.ts': 'export const a: number = 1\n' },
    web: {
      inbox: {
        'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ES2022', target: 'ES2022', strict: true, rootDir: '.', outDir: '../../dist/web/inbox', types: [] }, include: ['page.ts'] }),
        'page.ts': 'export const page: string = "inbox"\n'
      }
    }
  })
  t.equal(buildIfStale(dir, () => {}), 0)
  t.ok(existsSync(join(dir, 'dist', 'web', 'inbox', 'page.js')), 'what `npm start` serves at /inbox/ is built')
  t.notOk(isStale(dir))
  const later = new Date(statSync(join(dir, 'web', 'inbox', 'page.ts')).mtimeMs + 5_000)
  writeFileSync(join(dir, 'web', 'inbox', 'page.ts'), 'export const page: number = "x"\n')
  utimesSync(join(dir, 'web', 'inbox', 'page.ts'), later, later)
  t.ok(isStale(dir), 'an edited page script')
  t.equal(buildIfStale(dir, () => {}), 1, 'the page\'s compile failed: no stamp')
  t.ok(isStale(dir))
})

t.test('a changed source rebuilds; a failed build leaves it stale', async (t) => {
  const dir = project(t)
  const lines: string[] = []
  t.equal(buildIfStale(dir, (line: string) => lines.push(line)), 0)
  t.notOk(isStale(dir))
  const later = new Date(statSync(join(dir, 'src', 'a.ts')).mtimeMs + 5_000)
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a: number = 2\n')
  utimesSync(join(dir, 'src', 'a.ts'), later, later)
  t.ok(isStale(dir), 'an edited source')
  t.equal(buildIfStale(dir, (line: string) => lines.push(line)), 0)
  t.notOk(isStale(dir))

  const evenLater = new Date(later.getTime() + 5_000)
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a: number = "two"\n')
  utimesSync(join(dir, 'src', 'a.ts'), evenLater, evenLater)
  t.equal(buildIfStale(dir, (line: string) => lines.push(line)), 1, 'the compiler failed')
  t.ok(isStale(dir), 'so the next start tries again')
  writeFileSync(join(dir, STAMP), 'not a time')
  t.ok(isStale(dir), 'an unreadable stamp counts as no build')
  t.same(lines.filter((line) => line.startsWith('build: compiling')).length, 3)
})

t.test('the build ends with the embedded database\'s cluster template (scripts/make-cluster-template.js); its failure fails the build', async (t) => {
  const dir = t.testdir({
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', target: 'ES2022', strict: true, outDir: 'dist', rootDir: '.', types: [] } }),
    'tsconfig.build.json': JSON.stringify({ extends: './tsconfig.json', include: ['src'] }),
    src: { 'a.ts': 'export const a: number = 1\n' },
    scripts: { 'make-cluster-template.js': 'import { writeFileSync } from "node:fs"\nwriteFileSync("dist/template-made", "")\n' }
  })
  t.equal(buildIfStale(dir, () => {}), 0)
  t.ok(existsSync(join(dir, 'dist', 'template-made')), 'run from the package root, after the compiler')
  writeFileSync(join(dir, 'scripts', 'make-cluster-template.js'), 'process.exitCode = 3\n')
  writeFileSync(join(dir, STAMP), '0')
  t.equal(buildIfStale(dir, () => {}), 1, 'the template could not be made: no stamp')
  t.ok(isStale(dir))
})
