/**
 * `A2A-Version` (A2A 1.0 §3.6): `Major.Minor`, patch numbers ignored. Missing or empty means 0.3 (MUST), so a
 * 1.0-only endpoint answers header-less requests with VersionNotSupportedError (-32009).
 */
import { versionNotSupported, type JsonRpcError } from './errors.js'

export const A2A_VERSION_HEADER = 'A2A-Version'
/** What this endpoint speaks. */
export const SUPPORTED_A2A_VERSIONS: readonly string[] = Object.freeze(['1.0'])
/** What a missing or empty version means (§3.6.1). */
export const DEFAULT_A2A_VERSION = '0.3'

const ONE_ZERO = /^1\.0(?:\.\d{1,9})?$/
const ZERO_THREE = /^0\.3(?:\.\d{1,9})?$/

/** The protocol versions an endpoint can be told to serve: 1.0 always, 0.3 through translation (packages/a2a-converse/src/bindings/v0_3/). */
export const A2A_VERSIONS = Object.freeze(['0.3', '1.0'] as const)
export type A2AVersion = typeof A2A_VERSIONS[number]

/** Whether a requested version is 0.3 (0.3 or 0.3.x; a missing header is 0.3 too). */
export function isV03 (version: string): boolean {
  return ZERO_THREE.test(version)
}

/**
 * The version a request asks for: the header when present and non-empty, else the `A2A-Version` query
 * parameter (§3.6.1 allows it), else 0.3.
 */
export function requestedVersion (header: string | readonly string[] | undefined, query: unknown): string {
  const fromHeader = firstNonEmpty(header)
  if (fromHeader !== undefined) return fromHeader
  return firstNonEmpty(typeof query === 'string' || Array.isArray(query) ? query as string | string[] : undefined) ?? DEFAULT_A2A_VERSION
}

/**
 * undefined when the version is 1.0 (or 1.0.x), else the -32009 error naming `supported` (what the binding answers:
 * a 0.3 request reaches here only from a binding that does not translate 0.3).
 */
export function checkVersion (version: string, supported: readonly string[] = SUPPORTED_A2A_VERSIONS): JsonRpcError | undefined {
  return ONE_ZERO.test(version) ? undefined : versionNotSupported(version, supported)
}

function firstNonEmpty (value: string | readonly string[] | undefined): string | undefined {
  const first = typeof value === 'string' ? value : value?.find((item) => typeof item === 'string' && item.trim() !== '')
  const trimmed = first?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}
