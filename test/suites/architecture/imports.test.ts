/**
 * No import climbs back up the layers (docs/architecture.md): bindings → service → backends → runtime → stores, the
 * protocol model and the extension core below everything, the doors (Fastify, Express, MCP, gRPC, the shared HTTP
 * parts) outside, in the library (packages/a2a-converse/src/). Each of its folders lists the folders its modules may
 * import; the test reads every relative import specifier of every module (static, `export … from` and dynamic),
 * resolves it, and fails on any other folder, and on a folder that is not placed here. That the library never
 * imports the gateway app (src/, plugins/) is the compiler's to say: packages/a2a-converse/tsconfig.json's rootDir is
 * the library's src/, so such an import fails `npm run typecheck` (TS6059); the test checks that setting stays.
 * The test tree mirrors the sources: each folder of test/library/ names a library folder, test/gateway/ and
 * test/plugins/ the app's, and the cross-cutting suites live under test/suites/.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const SRC = join(ROOT, 'packages', 'a2a-converse', 'src')

/** Bottom to top: a folder may import the folders listed for it (and itself). */
// telemetry: the tracer, trace context and span attributes (packages/a2a-converse/src/telemetry/ imports nothing of src/), for every layer.
const TELEMETRY = ['telemetry']
const CORE = [...TELEMETRY, 'core']
// peers: the optional peer dependencies, loaded at import time (they import only the core's errors).
const PEERS = [...CORE, 'peers']
const PROTOCOL = [...PEERS, 'protocol']
// push: the push notification configs and deliveries, on the stores' level (a task save writes its outbox rows).
const STORES = [...PROTOCOL, 'events', 'stores', 'push']
const RUNTIME = [...STORES, 'auth', 'runtime']
const BACKENDS = [...RUNTIME, 'backends']
const SERVICE = [...PROTOCOL, 'auth', 'stores', 'a2a']
const BINDINGS = [...SERVICE, 'bindings']
const OUTSIDE = [...BACKENDS, ...BINDINGS, 'http', 'fastify', 'express', 'mcp', 'grpc']
const ALLOWED: Record<string, readonly string[]> = {
  peers: PEERS,
  telemetry: TELEMETRY,
  core: CORE,
  protocol: PROTOCOL,
  events: [...PROTOCOL, 'events'],
  stores: STORES,
  push: STORES,
  auth: [...PROTOCOL, 'auth'],
  runtime: RUNTIME,
  backends: BACKENDS,
  a2a: SERVICE,
  bindings: BINDINGS,
  // The doors and what they share.
  http: OUTSIDE,
  fastify: OUTSIDE,
  express: OUTSIDE,
  mcp: OUTSIDE,
  grpc: OUTSIDE
}

function modules (folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** The src/ folders a module imports (relative specifiers only; packages are not layers). */
function importedFolders (file: string): Array<[string, string]> {
  const text = readFileSync(file, 'utf8')
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((match) => match[1])
  return specifiers.flatMap((specifier) => {
    const target = relative(SRC, resolve(dirname(file), specifier))
    const folder = target.split('/')[0]
    return target.startsWith('..') || !target.includes('/') ? [] : [[folder, specifier] as [string, string]]
  })
}

t.test('every folder of src/ has its place in the layers', async (t) => {
  const folders = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()
  t.strictSame(folders, Object.keys(ALLOWED).sort())
})

t.test('no module imports a layer above its own', async (t) => {
  const climbs: string[] = []
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    for (const file of modules(join(SRC, folder))) {
      for (const [target, specifier] of importedFolders(file)) {
        if (!allowed.includes(target)) climbs.push(`${relative(ROOT, file)} imports ${specifier}`)
      }
    }
  }
  t.strictSame(climbs, [])
})

t.test('the library compiles on its own: an import of the app is a compile error', async (t) => {
  const config = JSON.parse(readFileSync(join(ROOT, 'packages', 'a2a-converse', 'tsconfig.json'), 'utf8'))
  t.equal(config.compilerOptions.rootDir, 'src')
  t.strictSame(config.include, ['src'])
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts
  t.match(scripts.typecheck, /tsc --noEmit -p packages\/a2a-converse/, 'npm run typecheck compiles the library alone')
  t.match(scripts.test, /npm run typecheck/)
})

/** The folders under `folder`, as paths relative to it. */
function folders (folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
}

t.test('each unit-test folder names a source folder that exists', async (t) => {
  const TEST = join(ROOT, 'test')
  // What is not a mirror: the suites across packages, the fixtures and the loader.
  const roofs = ['library', 'gateway', 'plugins', 'suites', 'fixtures', 'loader']
  t.strictSame(readdirSync(TEST, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort(), roofs.sort())
  const strays = folders(join(TEST, 'library'))
    .filter((folder) => !folder.split('/').includes('fixtures'))
    .filter((folder) => !folders(SRC).includes(folder))
  t.strictSame(strays, [], 'test/library/<folder> for packages/a2a-converse/src/<folder>')
  t.ok(folders(join(ROOT, 'src')).includes('gateway'), 'test/gateway/ for src/gateway/')
  t.strictSame(folders(join(TEST, 'gateway')), [])
  t.strictSame(folders(join(TEST, 'plugins')), [])
})

t.test('the app reaches the library only by its entries (a relative path into its sources breaks once built)', async (t) => {
  const into: string[] = []
  for (const folder of ['src', 'plugins', 'examples', 'bench']) {
    for (const file of modules(join(ROOT, folder))) {
      const text = readFileSync(file, 'utf8')
      for (const [, specifier] of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)) {
        if (resolve(dirname(file), specifier).startsWith(join(ROOT, 'packages'))) into.push(`${relative(ROOT, file)} imports ${specifier}`)
      }
    }
  }
  t.strictSame(into, [])
})
