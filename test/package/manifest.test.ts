/** package.json as a published package: the SDK pinned exactly, the entry points, the licence, honest engines. */
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../fixtures/gateway-process.js'

const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'))
const manifest = read('package.json')
const lock = read('package-lock.json')

t.test('@a2a-js/sdk is pinned exactly: the A2A endpoint relies on parts of it a minor version may change', async (t) => {
  t.equal(manifest.dependencies['@a2a-js/sdk'], '1.3.0')
  t.equal(lock.packages[''].dependencies['@a2a-js/sdk'], '1.3.0', 'the lock says the same')
  t.equal(lock.packages['node_modules/@a2a-js/sdk'].version, '1.3.0')
  t.equal(read('node_modules/@a2a-js/sdk/package.json').version, '1.3.0', 'and it is what is installed')
})

t.test('every subpath export is built from a source entry; the root types match', async (t) => {
  t.same(Object.keys(manifest.exports), ['.', './fastify', './express', './service', './runtime', './gateway', './postgres', './grpc', './package.json'])
  for (const [subpath, target] of Object.entries(manifest.exports as Record<string, string | Record<string, string>>)) {
    if (typeof target === 'string') continue
    const name = subpath === '.' ? 'index' : subpath.slice(2)
    t.same(target, { types: `./dist/src/${name}.d.ts`, import: `./dist/src/${name}.js` }, subpath)
    t.ok(existsSync(join(ROOT, 'src', `${name}.ts`)), `src/${name}.ts`)
  }
  t.equal(manifest.types, manifest.exports['.'].types)
  t.equal(manifest.main, manifest.exports['.'].import)
})

t.test('npm pack builds first and ships the demo agent, the licence and the changelog', async (t) => {
  t.equal(manifest.scripts.prepack, 'npm run clean && npm run build')
  t.ok(manifest.files.includes('examples/demo/'))
  t.ok(manifest.files.includes('CHANGELOG.md'))
  t.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /^MIT License\n/)
  t.equal(manifest.license, 'MIT')
  t.match(manifest.repository, { type: 'git', url: /^git\+https:\/\/.+\.git$/ })
  t.match(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), /^# Changelog\n[\s\S]*\n## Unreleased\n/)
})

t.test('engines: Node 20.19+ (require of ES modules) or 22.12+; no installed dependency asks for more', async (t) => {
  t.equal(manifest.engines.node, '^20.19.0 || >=22.12.0')
  // Fastify's light-my-request wants cookie 2 (Node >= 22); cookie 1.1 has the same API and runs on Node 18.
  t.same(manifest.overrides, { 'light-my-request': { cookie: '^1.1.1' } })
  const tooNew = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
    .filter(([, entry]) => Number(/^>=\s*(\d+)/.exec(entry.engines?.node ?? '')?.[1] ?? 0) > 20)
    .map(([path, entry]) => `${path} wants node ${entry.engines?.node}`)
  t.same(tooNew, [], 'every locked package runs on Node 20')
})

t.test('express is an optional peer dependency: only the Express door needs it', async (t) => {
  t.same(manifest.peerDependencies, { express: '^5.0.0' })
  t.same(manifest.peerDependenciesMeta, { express: { optional: true } })
  t.notOk('express' in manifest.dependencies)
})
