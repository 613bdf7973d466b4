/**
 * No import climbs back up the layers (docs/architecture.md): bindings → service → backends → runtime → stores, the
 * protocol model and the extension core below everything, the doors (Fastify, Express, MCP, the shared HTTP parts)
 * and the gateway outside. Each folder of src/ lists the folders its modules may import; the test reads every
 * import specifier of every module (static, `export … from` and dynamic), resolves it, and fails on any other
 * folder, and on a folder that is not placed here.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SRC = join(ROOT, 'src')

/** Bottom to top: a folder may import the folders listed for it (and itself). */
// telemetry: the tracer, trace context and span attributes (src/telemetry/ imports nothing of src/), for every layer.
const TELEMETRY = ['telemetry']
const CORE = [...TELEMETRY, 'core']
const PROTOCOL = [...CORE, 'protocol']
// push: the push notification configs and deliveries, on the stores' level (a task save writes its outbox rows).
const STORES = [...PROTOCOL, 'events', 'stores', 'push']
const RUNTIME = [...STORES, 'auth', 'runtime']
const BACKENDS = [...RUNTIME, 'backends']
const SERVICE = [...PROTOCOL, 'auth', 'stores', 'a2a']
const BINDINGS = [...SERVICE, 'bindings']
const OUTSIDE = [...BACKENDS, ...BINDINGS, 'http', 'fastify', 'express', 'mcp', 'grpc']
const ALLOWED: Record<string, readonly string[]> = {
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
  // The doors and what they share: everything but the gateway app.
  http: OUTSIDE,
  fastify: OUTSIDE,
  express: OUTSIDE,
  mcp: OUTSIDE,
  grpc: OUTSIDE,
  gateway: [...OUTSIDE, 'gateway']
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
