/**
 * Module resolution hooks (node:module `register`) for bench/fast-path-switches.ts: when the A2A endpoint
 * imports the dispatcher, or the converse plugin the known-envelope serializer, and that fast path is off,
 * the import resolves to the bench replacement. The replacements import the real modules themselves (their
 * imports are not redirected: only these two importers are).
 */
interface Switches { lean: boolean, splice: boolean }
interface ResolveContext { parentURL?: string }
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>

let switches: Switches = { lean: false, splice: false }

export function initialize (data: Switches): void {
  switches = data
}

/** [importer, imported, replacement], by the end of their URLs (src/ under dist/ once built). */
const REDIRECTS: ReadonlyArray<readonly [keyof Switches, string, string, string]> = [
  ['lean', '/src/a2a/local-backend.js', '/src/jsonrpc/dispatch.js', './dispatch-without-lean.js'],
  ['splice', '/src/fastify/converse-plugin.js', '/src/fastify/known-envelope-serializer.js', './serializer-without-splice.js']
]

export async function resolve (specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string, shortCircuit?: boolean }> {
  const resolved = await next(specifier, context)
  for (const [name, importer, imported, replacement] of REDIRECTS) {
    if (switches[name] && context.parentURL?.endsWith(importer) === true && resolved.url.endsWith(imported)) {
      return { url: new URL(replacement, import.meta.url).href, shortCircuit: true }
    }
  }
  return resolved
}
