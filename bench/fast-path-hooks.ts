/**
 * Module resolution hooks (node:module `register`) for bench/fast-path-switches.ts: with the lean path off,
 * every import of the dispatcher module resolves to the bench replacement, except the replacement's own
 * import of the real module. Whoever imports the dispatcher (today the local A2A backend) gets the
 * replacement, so moving that import within src/ does not silently measure the lean path against itself.
 */
interface Switches { lean: boolean }
interface ResolveContext { parentURL?: string }
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>

let switches: Switches = { lean: false }

export function initialize (data: Switches): void {
  switches = data
}

/** The module redirected and its replacement (the library's built file). */
const DISPATCHER = '/a2a-converse/dist/backends/local/dispatch.js'
const REPLACEMENT = new URL('./dispatch-without-lean.js', import.meta.url).href

export async function resolve (specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string, shortCircuit?: boolean }> {
  const resolved = await next(specifier, context)
  if (switches.lean && resolved.url.endsWith(DISPATCHER) && context.parentURL !== REPLACEMENT) {
    return { url: REPLACEMENT, shortCircuit: true }
  }
  return resolved
}
