/**
 * The gateway's environment variables as a JSON Schema (env-schema validates them once at start; docs/configuration.md
 * lists the same variables and defaults, checked by a test), and the values as validated.
 */
import { SIGNING_ALGORITHMS } from 'a2a-converse/service'

/**
 * `required`: every A2A request needs a credential (an API key or a JWT), and tasks and conversations belong to
 * their caller; `walk-in`: anyone may call, and reaches only what it holds a handle to (a task id, a UUID contextId:
 * docs/identities.md). Agents may override it in the agents file (`auth`).
 */
export type AuthMode = 'walk-in' | 'required'

export type StateKind = 'memory' | 'embedded' | 'postgres'

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

export interface RawConfig {
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
