/**
 * Optional peer dependencies (package.json `peerDependenciesMeta`), as @a2a-js/sdk does: the library installs
 * without Fastify, Express, gRPC, the MCP SDK or a database driver, and an entry that needs one loads it here, at
 * import time, so that a missing one fails the import with one line naming what to install instead of Node's
 * "Cannot find package … imported from …/dist/…".
 */
import { ConverseError, ERROR_CODES } from '../core/errors.js'
export const MISSING_PEER = ERROR_CODES.MISSING_PEER

/** An entry's peer dependency is not installed. */
export class MissingPeerError extends ConverseError {
  constructor (readonly entry: string, readonly packages: readonly string[]) {
    super(MISSING_PEER, `${entry} needs ${packages.join(' and ')}: npm install ${packages.join(' ')}`)
  }
}

/** The package name of a specifier (`@scope/name/sub` → `@scope/name`). */
function packageName (specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * `import(specifier)`, or a MissingPeerError naming `packages` (default: the specifier's package) when one of them is
 * not installed. Anything else (a peer that is there but fails to load) is thrown as it is.
 */
export async function importPeer<T> (specifier: string, entry: string, packages: readonly string[] = [packageName(specifier)]): Promise<T> {
  try {
    return await import(specifier) as T
  } catch (error) {
    // Node's wording (ERR_MODULE_NOT_FOUND); a loader in front of Node's (tap's TypeScript one) keeps the message, not always the code.
    const message = String((error as Error | undefined)?.message)
    const missing = packages.some((name) => message.includes(`Cannot find package '${name}'`))
    if (missing) throw new MissingPeerError(entry, packages)
    throw error
  }
}

/**
 * Throws a MissingPeerError naming every one of `packages` that cannot be resolved: for an entry that needs several
 * peers loaded by different modules (whichever failed first would otherwise name only itself), checked before any.
 */
export function requirePeers (entry: string, packages: readonly string[]): void {
  const missing = packages.filter((name) => {
    try {
      import.meta.resolve(name)
      return false
    } catch {
      return true
    }
  })
  if (missing.length > 0) throw new MissingPeerError(entry, missing)
}
