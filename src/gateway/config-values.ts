/**
 * The environment's values read into settings: each parser checks one variable (or a group that goes together) and
 * throws a ConfigError naming the variable and what is wrong — never a byte of a secret.
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { MIN_API_KEY_LENGTH, isCallerId, type ApiKeyCredential, type JwtOptions } from 'a2a-converse/service'
import { A2A_VERSIONS, type A2AVersion } from 'a2a-converse/service'
import { publicHostList } from 'a2a-converse/service'
import { parseSecretsKey, type SecretsKeyError } from 'a2a-converse/push'
import { createSigningKey, type SigningKeyError, type SigningKey } from 'a2a-converse/service'
import type { AuthMode, RawConfig } from './config-schema.js'

/** SECRETS_KEY and SECRETS_KEY_PREVIOUS (docs/state.md, "Secrets at rest"). */
export interface SecretsConfig {
  /** Seals and opens; absent: the embedded store's generated key (DATA_DIR/secrets.key), PostgreSQL in clear (warned). */
  key?: Buffer
  /** Open only: a rotation's old keys, until every row is re-sealed with `key`. */
  previous: Buffer[]
}

export interface AuthConfig {
  /** A2A_AUTH; default `required` when credentials are configured, else `walk-in` (the demo). */
  mode: AuthMode
  /** A2A_API_KEYS. */
  apiKeys: ApiKeyCredential[]
  /** A2A_JWT_*. */
  jwt?: JwtOptions
}

/** Thrown when a variable is invalid; the message names the variable. */
export class ConfigError extends Error {
  readonly variable: string
  constructor (variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

/**
 * SIGNING_KEY or SIGNING_KEY_FILE (PEM or JWK), SIGNING_KEY_ID, SIGNING_ALG and SIGNING_PUBLIC_KEYS_FILE (a JWKS).
 * An error names the variable and what is wrong, never a byte of the key.
 */
export function signingKey (raw: RawConfig): SigningKey | undefined {
  if (raw.SIGNING_KEY !== undefined && raw.SIGNING_KEY_FILE !== undefined) throw new ConfigError('SIGNING_KEY', 'and SIGNING_KEY_FILE are both set: set one of them')
  const keyVariable = raw.SIGNING_KEY_FILE === undefined ? 'SIGNING_KEY' : 'SIGNING_KEY_FILE'
  const given = raw.SIGNING_KEY ?? (raw.SIGNING_KEY_FILE === undefined ? undefined : readConfigFile('SIGNING_KEY_FILE', raw.SIGNING_KEY_FILE))
  if (given === undefined) {
    const orphan = (['SIGNING_KEY_ID', 'SIGNING_ALG', 'SIGNING_PUBLIC_KEYS_FILE'] as const).find((name) => raw[name] !== undefined)
    if (orphan !== undefined) throw new ConfigError(orphan, 'is set, but SIGNING_KEY (or SIGNING_KEY_FILE) is not: set the key cards are signed with')
    return undefined
  }
  let publishedKeys: unknown[] | undefined
  if (raw.SIGNING_PUBLIC_KEYS_FILE !== undefined) {
    const text = readConfigFile('SIGNING_PUBLIC_KEYS_FILE', raw.SIGNING_PUBLIC_KEYS_FILE)
    let jwks: unknown
    try {
      jwks = JSON.parse(text)
    } catch {
      throw new ConfigError('SIGNING_PUBLIC_KEYS_FILE', 'is not JSON: it must hold a JWKS ({"keys": [...]})')
    }
    publishedKeys = (jwks as { keys?: unknown[] } | null)?.keys
    if (!Array.isArray(publishedKeys)) throw new ConfigError('SIGNING_PUBLIC_KEYS_FILE', 'must hold a JWKS: an object with a "keys" list')
  }
  try {
    return createSigningKey({ privateKey: given, kid: raw.SIGNING_KEY_ID, alg: raw.SIGNING_ALG, publishedKeys })
  } catch (error) {
    const { field, message } = error as SigningKeyError
    const variable = { privateKey: keyVariable, kid: 'SIGNING_KEY_ID', alg: raw.SIGNING_ALG === undefined ? keyVariable : 'SIGNING_ALG', publishedKeys: 'SIGNING_PUBLIC_KEYS_FILE' }[field]
    throw new ConfigError(variable, message)
  }
}

/** A file a variable names, read at start; unreadable: the variable and the system's error code. */
function readConfigFile (variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(variable, `cannot be read: ${path.slice(0, 256)} (${(error as NodeJS.ErrnoException).code as string})`)
  }
}

/** PUSH_ALLOWED_HOSTS: a comma list of host names, addresses and CIDRs. */
/** SECRETS_KEY (one key) and SECRETS_KEY_PREVIOUS (a comma list); a bad key names its variable and position, never its value. */
export function parseSecretsConfig (key: string | undefined, previous: string | undefined): SecretsConfig {
  const parse = (variable: string, text: string, where = ''): Buffer => {
    try {
      return parseSecretsKey(text)
    } catch (error) {
      throw new ConfigError(variable, `${where}${(error as SecretsKeyError).message}`)
    }
  }
  const entries = previous?.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '') ?? []
  if (entries.length > 0 && key === undefined) throw new ConfigError('SECRETS_KEY_PREVIOUS', 'is set, but SECRETS_KEY is not: set SECRETS_KEY to the key new values are sealed with')
  return {
    key: key === undefined ? undefined : parse('SECRETS_KEY', key),
    previous: entries.map((entry, index) => parse('SECRETS_KEY_PREVIOUS', entry, `entry ${index + 1} `))
  }
}

export function parsePushAllowedHosts (value: string | undefined): string[] {
  const entries = (value ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  for (const entry of entries) {
    if (entry.includes('/') ? !isAddressOrCidr(entry) : !(isIP(entry) !== 0 || /^[A-Za-z0-9.-]{1,253}$/.test(entry))) {
      throw new ConfigError('PUSH_ALLOWED_HOSTS', `must be a comma list of host names, addresses and CIDRs; "${entry.slice(0, 64)}" is none`)
    }
  }
  return entries
}

export function authConfig (raw: RawConfig): AuthConfig {
  const apiKeys = raw.A2A_API_KEYS === undefined ? [] : parseApiKeys(raw.A2A_API_KEYS)
  const jwtVariables = ['A2A_JWT_JWKS_URL', 'A2A_JWT_ISSUER', 'A2A_JWT_AUDIENCE'] as const
  const given = jwtVariables.filter((name) => raw[name] !== undefined)
  if (given.length > 0 && given.length < jwtVariables.length) {
    const missing = jwtVariables.find((name) => raw[name] === undefined) as string
    throw new ConfigError(missing, `is required with ${given.join(', ')} (JWT bearer tokens need the JWKS URL, the issuer and the audience)`)
  }
  const jwt: JwtOptions | undefined = given.length === 0
    ? undefined
    : {
        jwksUrl: raw.A2A_JWT_JWKS_URL as string,
        issuer: raw.A2A_JWT_ISSUER as string,
        audience: raw.A2A_JWT_AUDIENCE as string,
        callerClaim: raw.A2A_JWT_CALLER_CLAIM,
        clockToleranceSec: raw.A2A_JWT_CLOCK_TOLERANCE_SEC,
        ...(raw.A2A_JWT_MAX_TOKEN_AGE_SEC === undefined ? {} : { maxTokenAgeSec: raw.A2A_JWT_MAX_TOKEN_AGE_SEC })
      }
  const configured = apiKeys.length > 0 || jwt !== undefined
  const mode = raw.A2A_AUTH ?? (configured ? 'required' : 'walk-in')
  if (mode === 'required' && !configured) {
    throw new ConfigError('A2A_AUTH', 'is required, which needs A2A_API_KEYS or A2A_JWT_JWKS_URL/A2A_JWT_ISSUER/A2A_JWT_AUDIENCE')
  }
  return { mode, apiKeys, jwt }
}

/**
 * A2A_API_KEYS: a comma list of `callerId:key` (the key is everything after the first colon). The variable's
 * value never appears in an error message: only the entry's position and caller id.
 */
export function parseApiKeys (value: string): ApiKeyCredential[] {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  const callers = new Set<string>()
  const keys = new Set<string>()
  return entries.map((entry, index) => {
    const colon = entry.indexOf(':')
    const callerId = colon < 0 ? '' : entry.slice(0, colon)
    const key = colon < 0 ? '' : entry.slice(colon + 1)
    const where = `entry ${index + 1}`
    if (colon < 0) throw new ConfigError('A2A_API_KEYS', `${where} must be callerId:key`)
    if (!isCallerId(callerId)) throw new ConfigError('A2A_API_KEYS', `${where}: the caller id must be 1-128 printable characters without spaces`)
    if (key.length < MIN_API_KEY_LENGTH || /\s/.test(key)) {
      throw new ConfigError('A2A_API_KEYS', `${where} (caller "${callerId}"): the key must be ${MIN_API_KEY_LENGTH} or more characters without spaces`)
    }
    if (callers.has(callerId)) throw new ConfigError('A2A_API_KEYS', `${where}: caller "${callerId}" is listed twice`)
    if (keys.has(key)) throw new ConfigError('A2A_API_KEYS', `${where} (caller "${callerId}"): the key is another caller's`)
    callers.add(callerId)
    keys.add(key)
    return { callerId, key }
  })
}

/** PUBLIC_HOSTS: a comma list of host or host:port (checked as the Fastify plugin's publicHosts). */
export function parsePublicHosts (value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const hosts = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  try {
    publicHostList('PUBLIC_HOSTS', hosts)
  } catch (error) {
    throw new ConfigError('PUBLIC_HOSTS', (error as Error).message.replace(/^option "PUBLIC_HOSTS" /, ''))
  }
  return hosts
}

/** `true` / `false`, a hop count, or a comma list of IP addresses and CIDR ranges — as Fastify's trustProxy takes them. */
export function parseTrustProxy (value: string): boolean | number | string[] {
  const lower = value.toLowerCase()
  if (lower === 'false') return false
  if (lower === 'true') return true
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    if (hops < 1 || hops > 32) throw new ConfigError('TRUST_PROXY', 'hop count must be between 1 and 32')
    return hops
  }
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  for (const entry of entries) {
    if (!isAddressOrCidr(entry)) {
      throw new ConfigError('TRUST_PROXY', `must be true, false, a hop count or a comma list of addresses/CIDRs; "${entry.slice(0, 64)}" is none`)
    }
  }
  return entries
}

function isAddressOrCidr (entry: string): boolean {
  const [address, bits, extra] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || extra !== undefined) return false
  if (bits === undefined) return true
  if (!/^\d{1,3}$/.test(bits)) return false
  return Number(bits) <= (family === 4 ? 32 : 128)
}

/** A2A_VERSIONS: a comma-separated list of 0.3 and 1.0, 1.0 always among them (the service is 1.0). */
export function parseA2AVersions (value: string): A2AVersion[] {
  const versions = [...new Set(value.split(',').map((item) => item.trim()).filter((item) => item !== ''))]
  if (!versions.includes('1.0') || versions.some((version) => !(A2A_VERSIONS as readonly string[]).includes(version))) {
    throw new ConfigError('A2A_VERSIONS', 'must be "0.3,1.0" or "1.0" (1.0 is always served)')
  }
  return versions as A2AVersion[]
}
