/**
 * The two package.json files: the library (packages/a2a-converse, published) with the SDK pinned, its entry points,
 * its frameworks and drivers as optional peers; the gateway app (the repository's root) depending on it as a
 * workspace and on everything the app runs with; both with honest engines.
 */
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../fixtures/gateway-process.js'

const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'))
const app = read('package.json')
const library = read('packages/a2a-converse/package.json')
const lock = read('package-lock.json')

/** The optional peers: what only one door or store needs. */
const PEERS = ['fastify', 'express', '@modelcontextprotocol/server', '@grpc/grpc-js', '@bufbuild/protobuf', 'pg', 'kysely', '@electric-sql/pglite']

t.test('@a2a-js/sdk is pinned exactly: the A2A endpoint relies on parts of it a minor version may change', async (t) => {
  t.equal(library.dependencies['@a2a-js/sdk'], '1.3.0')
  t.equal(lock.packages['packages/a2a-converse'].dependencies['@a2a-js/sdk'], '1.3.0', 'the lock says the same')
  t.equal(lock.packages['node_modules/@a2a-js/sdk'].version, '1.3.0')
  t.equal(read('node_modules/@a2a-js/sdk/package.json').version, '1.3.0', 'and it is what is installed')
})

t.test('every subpath export of the library is built from a source entry; the root types match', async (t) => {
  t.same(Object.keys(library.exports), ['.', './core', './fastify', './express', './mcp', './grpc', './service', './runtime', './push', './postgres', './package.json'])
  for (const [subpath, target] of Object.entries(library.exports as Record<string, string | Record<string, string>>)) {
    if (typeof target === 'string') continue
    const name = subpath === '.' ? 'index' : subpath.slice(2)
    // The source condition (the repository's tests and type check: tsconfig.json customConditions, tap's
    // --conditions) first; what a user resolves after it.
    t.same(target, { 'a2a-converse-source': `./src/${name}.ts`, types: `./dist/${name}.d.ts`, import: `./dist/${name}.js` }, subpath)
    t.ok(existsSync(join(ROOT, 'packages', 'a2a-converse', 'src', `${name}.ts`)), `src/${name}.ts`)
  }
  t.equal(library.types, library.exports['.'].types)
  t.equal(library.main, library.exports['.'].import)
})

t.test('frameworks and drivers are optional peers of the library; its own dependencies are few', async (t) => {
  t.same(Object.keys(library.peerDependencies).sort(), [...PEERS].sort())
  for (const peer of PEERS) {
    t.same(library.peerDependenciesMeta[peer], { optional: true }, peer)
    t.notOk(peer in library.dependencies, `${peer} is not a dependency`)
  }
  t.same(Object.keys(library.dependencies).sort(), ['@a2a-js/sdk', '@fastify/error', '@opentelemetry/api', 'ajv', 'fastify-plugin', 'ipaddr.js', 'jose', 'minisearch', 'undici', 'yaml'])
})

t.test('the gateway app is a package of its own on the library, with every peer the library names that it runs with', async (t) => {
  t.equal(app.name, 'a2a-converse-gateway')
  t.equal(app.private, true)
  t.same(app.workspaces, ['packages/a2a-converse'])
  t.equal(app.dependencies['a2a-converse'], library.version)
  // The app serves Fastify, MCP, gRPC and both databases; Express only in examples and tests.
  for (const peer of PEERS.filter((name) => name !== 'express')) t.ok(peer in app.dependencies, peer)
  t.ok('express' in app.devDependencies)
  t.equal(app.scripts.start, 'node --max-semi-space-size=2 --heap-growing-percent=10 --liftoff-only --no-maglev dist/src/gateway/main.js',
    'a small young generation, a slowly grown old one, WebAssembly without tier-up, no Maglev: docs/state.md, "Memory"')
  // Packed (the Docker image and `npm pack` of the app): built first, the built app, the inbox page, the embedded
  // database's cluster template and the demo agent.
  t.equal(app.scripts.prepack, 'npm run clean && npm run build')
  t.same(app.files, ['dist/src/**/*.js', 'dist/src/**/*.d.ts', 'dist/plugins/**/*.js', 'dist/plugins/**/*.d.ts',
    'dist/web/inbox/*.js', 'dist/cluster-templates/*.tar.gz', 'web/inbox/index.html', 'web/inbox/inbox.css', 'examples/demo/'])
  t.equal(app.main, './dist/src/gateway.js')
})

t.test('npm pack of the library builds first and ships the licence and the changelog', async (t) => {
  t.equal(library.scripts.prepack, 'npm run clean && npm run build')
  t.same(library.files, ['dist/**/*.js', 'dist/**/*.d.ts', 'README.md', 'LICENSE', 'CHANGELOG.md'])
  t.match(readFileSync(join(ROOT, 'packages', 'a2a-converse', 'LICENSE'), 'utf8'), /^MIT License\n/)
  t.equal(readFileSync(join(ROOT, 'packages', 'a2a-converse', 'LICENSE'), 'utf8'), readFileSync(join(ROOT, 'LICENSE'), 'utf8'))
  t.equal(library.license, 'MIT')
  t.match(library.repository, { type: 'git', url: /^git\+https:\/\/.+\.git$/, directory: 'packages/a2a-converse' })
  t.match(readFileSync(join(ROOT, 'packages', 'a2a-converse', 'CHANGELOG.md'), 'utf8'), /^# Changelog\n[\s\S]*\n## Unreleased\n/)
})

t.test('engines: Node 20.19+ (require of ES modules) or 22.12+; no installed dependency asks for more', async (t) => {
  t.equal(app.engines.node, '^20.19.0 || >=22.12.0')
  t.equal(library.engines.node, app.engines.node)
  // Fastify's light-my-request wants cookie 2 (Node >= 22); cookie 1.1 has the same API and runs on Node 18.
  t.same(app.overrides, { 'light-my-request': { cookie: '^1.1.1' } })
  const tooNew = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
    .filter(([, entry]) => Number(/^>=\s*(\d+)/.exec(entry.engines?.node ?? '')?.[1] ?? 0) > 20)
    .map(([path, entry]) => `${path} wants node ${entry.engines?.node}`)
  t.same(tooNew, [], 'every locked package runs on Node 20')
})
