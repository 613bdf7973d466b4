import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import envSchema from 'env-schema'
import { MIN_API_KEY_LENGTH, isCallerId, type ApiKeyCredential, type JwtOptions } from 'a2a-converse/service'
import { A2A_VERSIONS, type A2AVersion } from 'a2a-converse/service'
import type { RateLimitConfig } from './rate-limits.js'
import { publicHostList } from 'a2a-converse/service'
import { parseSecretsKey, type SecretsKeyError } from 'a2a-converse/push'
import { createSigningKey, SIGNING_ALGORITHMS, type SigningKeyError, type SigningKey } from 'a2a-converse/service'

/** The gateway's settings, read from environment variables once at start. */
export interface GatewayConfig {
  port: number
  host: string
  /** Base URL written into cards; undefined → from the request (and X-Forwarded-* when TRUST_PROXY is set). */
  publicUrl?: string
  /** Base of the MCP door; an agent's mcp.url is `<mcpPublicUrl>/mcp/a/<agentId>`. Defaults to publicUrl. */
  mcpPublicUrl?: string
  /** Without publicUrl: the hosts (host or host:port) a request may name for the card URLs; undefined: any valid host. */
  publicHosts?: string[]
  /** The gRPC listener's port (on `host`); undefined: no gRPC listener. */
  grpcPort?: number
  /** The gRPC target the cards list (`host:port`), each agent as its `tenant`; undefined: the cards list no gRPC. */
  publicGrpcUrl?: string
  /** Fastify's trustProxy: false, true, a hop count or a list of addresses/CIDRs. */
  trustProxy: boolean | number | string[]
  logLevel: string
  bodyLimit: number
  agentsFile?: string
  operatorApiKey?: string
  /** `GET /metrics` (Prometheus) with `Authorization: Bearer <metricsToken>`; undefined: /metrics is off (404). */
  metricsToken?: string
  /** A listener of its own for /metrics (on `host`); undefined: /metrics on the gateway's port. */
  metricsPort?: number
  /**
   * Where tasks, conversations and events live: `embedded` (PostgreSQL in this process, in `dataDir`; the default
   * without DATABASE_URL), `postgres` (the server at DATABASE_URL; the default with it), `memory` (lost on exit).
   */
  state: StateKind
  /** The embedded database's folder (STATE=embedded). */
  dataDir: string
  databaseUrl?: string
  /** PostgreSQL schema for every table (created at start); default: the server's search path. */
  databaseSchema?: string
  /** The keys push credentials are sealed with on the database stores (SECRETS_KEY, SECRETS_KEY_PREVIOUS). */
  secrets: SecretsConfig
  providerTimeoutMs: number
  /** httpEnvelopeProvider for every agent object that carries no envelope of its own (an upstream agent's, say). */
  envelopeProviderUrl?: string
  shutdownTimeoutMs: number
  /** The default agent's JSON-RPC endpoint also at POST / (for clients that post to the URL they are given). */
  rootEndpoint: boolean
  /** Without DATABASE_URL: tasks each agent keeps in memory at most (finished ones are evicted first). */
  memoryMaxTasks: number
  /** Without DATABASE_URL: the sum of each agent's task sizes (ProtoJSON length) kept in memory at most. */
  memoryMaxTaskBytes: number
  /** Open tasks one caller (caller:<id>, or address:<ip> for a walk-in) holds per agent at most; a new one past it is refused. */
  maxOpenTasksPerCaller: number
  /** Without DATABASE_URL: how long a finished task stays in memory. */
  memoryFinishedTaskTtlMs: number
  /** Without DATABASE_URL: conversations kept in memory at most (the least recently updated is evicted). */
  memoryMaxConversations: number
  /** Without DATABASE_URL: conversations one caller keeps per agent; a new one past it is refused. */
  maxConversationsPerCaller: number
  /** Time to receive a whole request (headers and body); a slower one gets 408 and the connection closes. */
  requestTimeoutMs: number
  /** Time to receive a request's headers. At most requestTimeoutMs. */
  headersTimeoutMs: number
  /** How long an idle keep-alive connection stays open: longer than a load balancer's idle timeout. */
  keepAliveTimeoutMs: number
  /** Open connections at most; further ones are closed at once. */
  maxConnections: number
  /** Open SSE streams per caller (walk-ins: per client address) at most; 0: no limit. */
  maxStreamsPerCaller: number
  /** Characters of a message's text the built-in executors read (MAX_READ_CHARS). */
  maxReadChars: number
  /** Request bytes of one caller served at once on the HTTP doors (MAX_BYTES_IN_FLIGHT_PER_CALLER; 0: no limit). */
  maxBytesInFlightPerCaller: number
  /** The A2A protocol versions the JSON-RPC endpoint answers: 1.0, and 0.3 through translation unless left out. */
  a2aVersions: A2AVersion[]
  /** What the well-known card path answers a request without A2A-Version (WELL_KNOWN_CARD; an agent's `wellKnownCard` wins). */
  wellKnownCard: 'v1' | 'compat'
  /** How long a turn naming a task waits for the task's earlier turns (its turn lock) before -32603. */
  turnWaitTimeoutMs: number
  /** Who may call the agents (docs/identities.md). */
  auth: AuthConfig
  /** Requests per caller (or client address) and window on the A2A door and the operator API. */
  rateLimit: RateLimitConfig
  /** Messages in one MCP JSON-RPC batch at most (the older revisions take arrays); each counts against the rate limit. */
  mcpMaxBatch: number
  /** Agents the state store holds at most (published through the operator API). */
  maxAgents: number
  /** A published agent's definition, documents included, at most (bytes of its JSON). */
  maxAgentBytes: number
  /** Knowledge documents of a published agent at most. */
  maxAgentDocuments: number
  /** How often each instance checks the state store for agent changes it missed (docs/agents.md). */
  agentsSyncMs: number
  /** Webhook delivery of push notifications (docs/push.md). */
  push: PushConfig
  /** The key every served card is signed with, and the JWKS published (docs/signing.md); undefined: cards unsigned. */
  signing?: SigningKey
}

/** PUSH_* and MAX_PUSH_CONFIGS_PER_CALLER. */
export interface PushConfig {
  /** Host names, addresses and CIDRs webhooks may reach although internal (PUSH_ALLOWED_HOSTS). */
  allowedHosts: string[]
  /** Plain-http webhooks allowed (PUSH_ALLOW_HTTP). */
  allowHttp: boolean
  maxConfigsPerCaller: number
  maxAttempts: number
  maxAgeMs: number
  baseDelayMs: number
  maxDelayMs: number
  timeoutMs: number
}

export type StateKind = 'memory' | 'embedded' | 'postgres'

/** SECRETS_KEY and SECRETS_KEY_PREVIOUS (docs/state.md, "Secrets at rest"). */
export interface SecretsConfig {
  /** Seals and opens; absent: the embedded store's generated key (DATA_DIR/secrets.key), PostgreSQL in clear (warned). */
  key?: Buffer
  /** Open only: a rotation's old keys, until every row is re-sealed with `key`. */
  previous: Buffer[]
}

/**
 * `required`: every A2A request needs a credential (an API key or a JWT), and tasks and conversations belong to
 * their caller; `walk-in`: anyone may call, and reaches only what it holds a handle to (a task id, a UUID contextId:
 * docs/identities.md). Agents may override it in the agents file (`auth`).
 */
export type AuthMode = 'walk-in' | 'required'

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

const url = { type: 'string', pattern: '^https?://[^/\\s]+(/[^\\s]*)?$' }

/** The env-var schema; docs/configuration.md lists the same variables and defaults. */
export const configSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', minLength: 1, default: '0.0.0.0' },
    PUBLIC_URL: url,
    MCP_PUBLIC_URL: url,
    PUBLIC_HOSTS: { type: 'string' },
    GRPC_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    // A gRPC target as clients dial it: host:port, [v6]:port, or a scheme grpc-js knows (dns:///host:port).
    PUBLIC_GRPC_URL: { type: 'string', pattern: '^(?:(?:dns|ipv4|ipv6):(?://[^/\\s]*/)?)?(?:\\[[0-9A-Fa-f:.]+\\]|[^\\s/:\\[\\]]+):\\d{1,5}$' },
    TRUST_PROXY: { type: 'string', default: 'false' },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    BODY_LIMIT: { type: 'integer', minimum: 1024, maximum: 104857600, default: 1048576 },
    AGENTS_FILE: { type: 'string', minLength: 1 },
    OPERATOR_API_KEY: { type: 'string', minLength: 16 },
    METRICS_TOKEN: { type: 'string', minLength: 16 },
    METRICS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    STATE: { type: 'string', enum: ['memory', 'embedded', 'postgres'] },
    DATA_DIR: { type: 'string', minLength: 1, default: './data' },
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    DATABASE_SCHEMA: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$' },
    SECRETS_KEY: { type: 'string' },
    SECRETS_KEY_PREVIOUS: { type: 'string' },
    PROVIDER_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 60000, default: 1000 },
    ENVELOPE_PROVIDER_URL: url,
    SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600000, default: 10000 },
    A2A_ROOT_ENDPOINT: { type: 'boolean', default: false },
    MEMORY_MAX_TASKS: { type: 'integer', minimum: 1, maximum: 10000000, default: 10000 },
    MEMORY_MAX_TASK_BYTES: { type: 'integer', minimum: 65536, maximum: 1099511627776, default: 268435456 },
    MAX_OPEN_TASKS_PER_CALLER: { type: 'integer', minimum: 1, maximum: 10000000, default: 1000 },
    MEMORY_FINISHED_TASK_TTL_MS: { type: 'integer', minimum: 1000, maximum: 2592000000, default: 3600000 },
    MEMORY_MAX_CONVERSATIONS: { type: 'integer', minimum: 1, maximum: 10000000, default: 10000 },
    MAX_CONVERSATIONS_PER_CALLER: { type: 'integer', minimum: 1, maximum: 10000000, default: 1000 },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: 3600000, default: 30000 },
    HEADERS_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: 3600000, default: 10000 },
    KEEP_ALIVE_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: 3600000, default: 72000 },
    MAX_CONNECTIONS: { type: 'integer', minimum: 1, maximum: 1000000, default: 10000 },
    MAX_STREAMS_PER_CALLER: { type: 'integer', minimum: 0, maximum: 1000000, default: 100 },
    MAX_READ_CHARS: { type: 'integer', minimum: 1, maximum: 104857600, default: 4096 },
    MAX_BYTES_IN_FLIGHT_PER_CALLER: { type: 'integer', minimum: 0, maximum: 1099511627776, default: 2097152 },
    A2A_VERSIONS: { type: 'string', default: '0.3,1.0' },
    WELL_KNOWN_CARD: { type: 'string', enum: ['v1', 'compat'], default: 'v1' },
    TURN_WAIT_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 3600000, default: 30000 },
    A2A_AUTH: { type: 'string', enum: ['walk-in', 'required'] },
    A2A_API_KEYS: { type: 'string' },
    A2A_JWT_JWKS_URL: url,
    A2A_JWT_ISSUER: { type: 'string', minLength: 1 },
    A2A_JWT_AUDIENCE: { type: 'string', minLength: 1 },
    A2A_JWT_CALLER_CLAIM: { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,64}$', default: 'sub' },
    A2A_JWT_CLOCK_TOLERANCE_SEC: { type: 'integer', minimum: 0, maximum: 300, default: 30 },
    A2A_JWT_MAX_TOKEN_AGE_SEC: { type: 'integer', minimum: 1, maximum: 31536000 },
    RATE_LIMIT_MAX: { type: 'integer', minimum: 0, maximum: 10000000, default: 6000 },
    RATE_LIMIT_OPERATOR_MAX: { type: 'integer', minimum: 0, maximum: 10000000, default: 600 },
    RATE_LIMIT_WINDOW_MS: { type: 'integer', minimum: 1000, maximum: 86400000, default: 60000 },
    MCP_MAX_BATCH: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    MAX_AGENTS: { type: 'integer', minimum: 1, maximum: 1000000, default: 1000 },
    MAX_AGENT_BYTES: { type: 'integer', minimum: 1024, maximum: 104857600, default: 1048576 },
    MAX_AGENT_DOCUMENTS: { type: 'integer', minimum: 0, maximum: 100000, default: 100 },
    AGENTS_SYNC_MS: { type: 'integer', minimum: 100, maximum: 3600000, default: 1000 },
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    REDIS_KEY_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9:_.-]{1,64}$', default: 'a2a-converse:' },
    PUSH_ALLOWED_HOSTS: { type: 'string' },
    PUSH_ALLOW_HTTP: { type: 'boolean', default: false },
    MAX_PUSH_CONFIGS_PER_CALLER: { type: 'integer', minimum: 1, maximum: 1000000, default: 100 },
    PUSH_MAX_ATTEMPTS: { type: 'integer', minimum: 1, maximum: 100, default: 8 },
    PUSH_MAX_AGE_MS: { type: 'integer', minimum: 1000, maximum: 604800000, default: 3600000 },
    PUSH_RETRY_BASE_MS: { type: 'integer', minimum: 1, maximum: 3600000, default: 1000 },
    PUSH_RETRY_MAX_DELAY_MS: { type: 'integer', minimum: 1, maximum: 86400000, default: 300000 },
    PUSH_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 300000, default: 10000 },
    SIGNING_KEY: { type: 'string' },
    SIGNING_KEY_FILE: { type: 'string', minLength: 1 },
    SIGNING_KEY_ID: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
    SIGNING_ALG: { type: 'string', enum: SIGNING_ALGORITHMS },
    SIGNING_PUBLIC_KEYS_FILE: { type: 'string', minLength: 1 }
  }
} as const

interface RawConfig {
  PORT: number
  HOST: string
  PUBLIC_URL?: string
  MCP_PUBLIC_URL?: string
  PUBLIC_HOSTS?: string
  GRPC_PORT?: number
  PUBLIC_GRPC_URL?: string
  TRUST_PROXY: string
  LOG_LEVEL: string
  BODY_LIMIT: number
  AGENTS_FILE?: string
  OPERATOR_API_KEY?: string
  METRICS_TOKEN?: string
  METRICS_PORT?: number
  STATE?: StateKind
  DATA_DIR: string
  DATABASE_URL?: string
  DATABASE_SCHEMA?: string
  SECRETS_KEY?: string
  SECRETS_KEY_PREVIOUS?: string
  PROVIDER_TIMEOUT_MS: number
  ENVELOPE_PROVIDER_URL?: string
  SHUTDOWN_TIMEOUT_MS: number
  A2A_ROOT_ENDPOINT: boolean
  MEMORY_MAX_TASKS: number
  MEMORY_MAX_TASK_BYTES: number
  MAX_OPEN_TASKS_PER_CALLER: number
  MEMORY_FINISHED_TASK_TTL_MS: number
  MEMORY_MAX_CONVERSATIONS: number
  MAX_CONVERSATIONS_PER_CALLER: number
  REQUEST_TIMEOUT_MS: number
  HEADERS_TIMEOUT_MS: number
  KEEP_ALIVE_TIMEOUT_MS: number
  MAX_CONNECTIONS: number
  MAX_STREAMS_PER_CALLER: number
  MAX_READ_CHARS: number
  MAX_BYTES_IN_FLIGHT_PER_CALLER: number
  A2A_VERSIONS: string
  WELL_KNOWN_CARD: 'v1' | 'compat'
  TURN_WAIT_TIMEOUT_MS: number
  A2A_AUTH?: AuthMode
  A2A_API_KEYS?: string
  A2A_JWT_JWKS_URL?: string
  A2A_JWT_ISSUER?: string
  A2A_JWT_AUDIENCE?: string
  A2A_JWT_CALLER_CLAIM: string
  A2A_JWT_CLOCK_TOLERANCE_SEC: number
  A2A_JWT_MAX_TOKEN_AGE_SEC?: number
  RATE_LIMIT_MAX: number
  RATE_LIMIT_OPERATOR_MAX: number
  RATE_LIMIT_WINDOW_MS: number
  MCP_MAX_BATCH: number
  MAX_AGENTS: number
  MAX_AGENT_BYTES: number
  MAX_AGENT_DOCUMENTS: number
  AGENTS_SYNC_MS: number
  REDIS_URL?: string
  REDIS_KEY_PREFIX: string
  PUSH_ALLOWED_HOSTS?: string
  PUSH_ALLOW_HTTP: boolean
  MAX_PUSH_CONFIGS_PER_CALLER: number
  PUSH_MAX_ATTEMPTS: number
  PUSH_MAX_AGE_MS: number
  PUSH_RETRY_BASE_MS: number
  PUSH_RETRY_MAX_DELAY_MS: number
  PUSH_TIMEOUT_MS: number
  SIGNING_KEY?: string
  SIGNING_KEY_FILE?: string
  SIGNING_KEY_ID?: string
  SIGNING_ALG?: string
  SIGNING_PUBLIC_KEYS_FILE?: string
}

/** Validates the environment once; an invalid value throws a ConfigError naming the variable. */
export function loadConfig (env: Record<string, string | undefined>): GatewayConfig {
  // Empty strings mean "unset" (docker-compose writes them for blank variables).
  const data: Record<string, string> = {}
  for (const key of Object.keys(configSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value.trim() !== '') data[key] = value.trim()
  }
  let raw: RawConfig
  try {
    raw = envSchema<RawConfig>({ schema: structuredClone(configSchema) as never, data, env: false })
  } catch (error) {
    // env-schema throws ajv's errors (each with its message), first one first.
    const first = (error as { errors?: Array<{ instancePath: string, message: string, keyword: string, params: { allowedValues?: unknown[] } }> }).errors?.[0]
    /* c8 ignore next -- env-schema always reports ajv errors; the fallback only guards its contract */
    if (first === undefined) throw error
    const variable = first.instancePath.replace(/^\//, '')
    // ajv's "must be equal to one of the allowed values" does not say which: list them.
    const problem = first.keyword === 'enum' ? `must be one of ${(first.params.allowedValues as unknown[]).join(', ')}` : first.message
    throw new ConfigError(variable, problem)
  }
  if (raw.HEADERS_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', `must be at most REQUEST_TIMEOUT_MS (${raw.REQUEST_TIMEOUT_MS})`)
  }
  const publicUrl = raw.PUBLIC_URL?.replace(/\/+$/, '')
  // A card naming a gRPC target this gateway does not serve would send clients nowhere.
  if (raw.PUBLIC_GRPC_URL !== undefined && raw.GRPC_PORT === undefined) throw new ConfigError('PUBLIC_GRPC_URL', 'is set, but GRPC_PORT is not: set GRPC_PORT to listen for gRPC')
  // A metrics listener nothing may read would be a port open for nothing.
  if (raw.METRICS_PORT !== undefined && raw.METRICS_TOKEN === undefined) throw new ConfigError('METRICS_PORT', 'is set, but METRICS_TOKEN is not: set METRICS_TOKEN to serve /metrics')
  const state = raw.STATE ?? (raw.DATABASE_URL === undefined ? 'embedded' : 'postgres')
  if (state === 'postgres' && raw.DATABASE_URL === undefined) throw new ConfigError('STATE', 'is postgres, which needs DATABASE_URL')
  // Two sources of state would be a mistake either way: say which one wins rather than pick one silently.
  if (state !== 'postgres' && raw.DATABASE_URL !== undefined) {
    throw new ConfigError('STATE', `is ${state}, but DATABASE_URL is set too: unset one of them`)
  }
  return {
    port: raw.PORT,
    host: raw.HOST,
    publicUrl,
    mcpPublicUrl: raw.MCP_PUBLIC_URL?.replace(/\/+$/, '') ?? publicUrl,
    publicHosts: parsePublicHosts(raw.PUBLIC_HOSTS),
    grpcPort: raw.GRPC_PORT,
    publicGrpcUrl: raw.PUBLIC_GRPC_URL,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY),
    logLevel: raw.LOG_LEVEL,
    bodyLimit: raw.BODY_LIMIT,
    agentsFile: raw.AGENTS_FILE,
    operatorApiKey: raw.OPERATOR_API_KEY,
    metricsToken: raw.METRICS_TOKEN,
    metricsPort: raw.METRICS_PORT,
    state,
    dataDir: raw.DATA_DIR,
    databaseUrl: raw.DATABASE_URL,
    databaseSchema: raw.DATABASE_SCHEMA,
    secrets: parseSecretsConfig(raw.SECRETS_KEY, raw.SECRETS_KEY_PREVIOUS),
    providerTimeoutMs: raw.PROVIDER_TIMEOUT_MS,
    envelopeProviderUrl: raw.ENVELOPE_PROVIDER_URL,
    shutdownTimeoutMs: raw.SHUTDOWN_TIMEOUT_MS,
    rootEndpoint: raw.A2A_ROOT_ENDPOINT,
    memoryMaxTasks: raw.MEMORY_MAX_TASKS,
    memoryMaxTaskBytes: raw.MEMORY_MAX_TASK_BYTES,
    maxOpenTasksPerCaller: raw.MAX_OPEN_TASKS_PER_CALLER,
    memoryFinishedTaskTtlMs: raw.MEMORY_FINISHED_TASK_TTL_MS,
    memoryMaxConversations: raw.MEMORY_MAX_CONVERSATIONS,
    maxConversationsPerCaller: raw.MAX_CONVERSATIONS_PER_CALLER,
    requestTimeoutMs: raw.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: raw.HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: raw.KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: raw.MAX_CONNECTIONS,
    maxStreamsPerCaller: raw.MAX_STREAMS_PER_CALLER,
    maxReadChars: raw.MAX_READ_CHARS,
    maxBytesInFlightPerCaller: raw.MAX_BYTES_IN_FLIGHT_PER_CALLER,
    a2aVersions: parseA2AVersions(raw.A2A_VERSIONS),
    wellKnownCard: raw.WELL_KNOWN_CARD,
    turnWaitTimeoutMs: raw.TURN_WAIT_TIMEOUT_MS,
    auth: authConfig(raw),
    rateLimit: {
      max: raw.RATE_LIMIT_MAX,
      operatorMax: raw.RATE_LIMIT_OPERATOR_MAX,
      windowMs: raw.RATE_LIMIT_WINDOW_MS,
      redisUrl: raw.REDIS_URL,
      redisKeyPrefix: raw.REDIS_KEY_PREFIX
    },
    mcpMaxBatch: raw.MCP_MAX_BATCH,
    maxAgents: raw.MAX_AGENTS,
    maxAgentBytes: raw.MAX_AGENT_BYTES,
    maxAgentDocuments: raw.MAX_AGENT_DOCUMENTS,
    agentsSyncMs: raw.AGENTS_SYNC_MS,
    push: {
      allowedHosts: parsePushAllowedHosts(raw.PUSH_ALLOWED_HOSTS),
      allowHttp: raw.PUSH_ALLOW_HTTP,
      maxConfigsPerCaller: raw.MAX_PUSH_CONFIGS_PER_CALLER,
      maxAttempts: raw.PUSH_MAX_ATTEMPTS,
      maxAgeMs: raw.PUSH_MAX_AGE_MS,
      baseDelayMs: raw.PUSH_RETRY_BASE_MS,
      maxDelayMs: raw.PUSH_RETRY_MAX_DELAY_MS,
      timeoutMs: raw.PUSH_TIMEOUT_MS
    },
    signing: signingKey(raw)
  }
}

/**
 * SIGNING_KEY or SIGNING_KEY_FILE (PEM or JWK), SIGNING_KEY_ID, SIGNING_ALG and SIGNING_PUBLIC_KEYS_FILE (a JWKS).
 * An error names the variable and what is wrong, never a byte of the key.
 */
function signingKey (raw: RawConfig): SigningKey | undefined {
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

function authConfig (raw: RawConfig): AuthConfig {
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
function parsePublicHosts (value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const hosts = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  try {
    publicHostList('PUBLIC_HOSTS', hosts)
  } catch (error) {
    throw new ConfigError('PUBLIC_HOSTS', (error as Error).message.replace(/^option "PUBLIC_HOSTS" /, ''))
  }
  return hosts
}

/**
 * Settings that are valid but do not do what they seem to; main.ts logs each at warn when the gateway starts.
 * A hop count in TRUST_PROXY: Fastify 5.12+ never trusts X-Forwarded-* by hop count (it cannot tell the
 * immediate peer is a proxy), so forwarded headers are ignored as if TRUST_PROXY were false. In production
 * (NODE_ENV) without PUBLIC_URL: the cards' URLs come from each request's Host.
 */
export function configWarnings (config: GatewayConfig, env: Readonly<Record<string, string | undefined>> = {}): string[] {
  const warnings: string[] = []
  if (env.NODE_ENV === 'production' && config.publicUrl === undefined) {
    warnings.push('PUBLIC_URL is unset: the cards\' URLs come from each request\'s Host (X-Forwarded-Host/-Proto with ' +
      `TRUST_PROXY), ${config.publicHosts === undefined ? 'any valid host' : 'one of PUBLIC_HOSTS'}, sent Cache-Control: private. Set PUBLIC_URL to the address callers use.`)
  }
  if (typeof config.trustProxy === 'number') {
    warnings.push(`TRUST_PROXY=${config.trustProxy} is a hop count, which Fastify does not trust: X-Forwarded-Proto/Host/For ` +
      'are ignored. Give the proxies\' addresses or CIDRs (or true), or set PUBLIC_URL for the card URLs.')
  }
  return warnings
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
