/**
 * No import climbs back up the layers (docs/architecture.md): bindings → service → backends → runtime → stores, the
 * extension core below everything, the doors (Fastify, Express, MCP) and the gateway outside. Each rule names a
 * folder of src/ and the folders its modules must not import; the test reads every import specifier of every
 * module (static, `export … from` and dynamic) and resolves it. Known climbs that other work removes are not yet
 * rules (see "not yet" below); a rule is added when its folder is clean.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SRC = join(ROOT, 'src')
const DOORS = ['fastify', 'express', 'mcp', 'grpc']

/** folder of src/ → folders of src/ its modules must not import. */
const RULES: Record<string, readonly string[]> = {
  core: ['a2a', 'auth', 'bindings', 'events', 'gateway', 'http', 'jsonrpc', 'proxy', 'runtime', 'stores', ...DOORS],
  auth: ['bindings', 'gateway', 'http', 'jsonrpc', 'proxy', 'runtime', 'stores', ...DOORS],
  events: ['a2a', 'bindings', 'gateway', 'http', 'jsonrpc', 'proxy', 'runtime', ...DOORS],
  bindings: ['gateway', 'http', 'proxy', 'runtime', ...DOORS],
  a2a: ['bindings', 'gateway', 'http', 'proxy', 'runtime', ...DOORS],
  jsonrpc: ['bindings', 'gateway', 'http', 'proxy', 'runtime', ...DOORS],
  runtime: ['bindings', 'gateway', 'http', 'proxy', ...DOORS],
  stores: ['a2a', 'bindings', 'gateway', 'http', 'jsonrpc', 'proxy', ...DOORS],
  // Not yet rules (issue 25's next steps): proxy → gateway (the upstream agent example), stores → runtime (a type),
  // auth → a2a (the Caller type) and runtime → a2a (the task writer and message replays, backend parts that still
  // live in src/a2a/ with the service).
  proxy: ['bindings', 'http', ...DOORS]
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

t.test('no module imports a layer above its own', async (t) => {
  const climbs: string[] = []
  for (const [folder, forbidden] of Object.entries(RULES)) {
    for (const file of modules(join(SRC, folder))) {
      for (const [target, specifier] of importedFolders(file)) {
        if (forbidden.includes(target)) climbs.push(`${relative(ROOT, file)} imports ${specifier}`)
      }
    }
  }
  t.strictSame(climbs, [])
})
