import envSchema from 'env-schema'
import type { A2AVersion, SigningKey } from 'a2a-converse/service'
import type { RateLimitConfig } from './rate-limits.js'
import { configSchema, type RawConfig, type StateKind } from './config-schema.js'
import {
  authConfig, ConfigError, parseA2AVersions, parsePublicHosts, parsePushAllowedHosts, parseSecretsConfig, parseTrustProxy, signingKey,
  type AuthConfig, type SecretsConfig
} from './config-values.js'

export { configSchema, type AuthMode, type StateKind } from './config-schema.js'
export { ConfigError, type AuthConfig, type SecretsConfig } from './config-values.js'

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

/** The variables the schema knows, validated (empty strings mean "unset": docker-compose writes them for blanks). */
function validatedEnv (env: Record<string, string | undefined>): RawConfig {
  const data: Record<string, string> = {}
  for (const key of Object.keys(configSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value.trim() !== '') data[key] = value.trim()
  }
  try {
    return envSchema<RawConfig>({ schema: structuredClone(configSchema) as never, data, env: false })
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
}

/** Variables that are valid alone but not together; returns the state store they name. */
function checkedCombinations (raw: RawConfig): StateKind {
  if (raw.HEADERS_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', `must be at most REQUEST_TIMEOUT_MS (${raw.REQUEST_TIMEOUT_MS})`)
  }
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
  return state
}

/** Validates the environment once; an invalid value throws a ConfigError naming the variable. */
export function loadConfig (env: Record<string, string | undefined>): GatewayConfig {
  const raw = validatedEnv(env)
  const state = checkedCombinations(raw)
  const publicUrl = raw.PUBLIC_URL?.replace(/\/+$/, '')
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
