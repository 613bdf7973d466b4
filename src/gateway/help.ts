/**
 * `node dist/src/gateway/main.js --help` (`npm start -- --help`): the environment variables the gateway reads,
 * with their defaults, from the same schema loadConfig validates against.
 */
import { configSchema } from './config.js'

type Variable = keyof typeof configSchema.properties

/** What each variable does, one line each; docs/configuration.md says the same at more length. */
export const VARIABLE_HELP: Readonly<Record<Variable, string>> = Object.freeze({
  PORT: 'listen port',
  HOST: 'listen address',
  PUBLIC_URL: 'base URL written into cards (<PUBLIC_URL>/a2a/<agentId>); default: from the request',
  PUBLIC_HOSTS: 'without PUBLIC_URL: the hosts (host or host:port, comma list) a request may name for card URLs; others 400',
  MCP_PUBLIC_URL: "base of an agent's mcp.url (<MCP_PUBLIC_URL>/mcp/a/<agentId>); default: PUBLIC_URL",
  GRPC_PORT: 'port of the gRPC listener (A2A 1.0 gRPC binding, on HOST); default: none, no gRPC',
  PUBLIC_GRPC_URL: "gRPC target the cards list (host:port; each agent is the request's tenant); needs GRPC_PORT; default: not listed",
  TRUST_PROXY: 'true, false, a hop count, or a comma list of proxy addresses/CIDRs (Fastify trustProxy); true lets any client pick its address (X-Forwarded-For) and so its per-address limits: give the balancer\'s addresses/CIDRs',
  LOG_LEVEL: 'pino level: fatal, error, warn, info, debug, trace, silent',
  BODY_LIMIT: 'largest request body in bytes (larger: HTTP 413 with a JSON-RPC error)',
  AGENTS_FILE: 'JSON or YAML agents file; default: the demo agent (examples/demo/agent.json)',
  OPERATOR_API_KEY: 'at least 16 characters; turns the operator (human takeover) API on; default: off',
  METRICS_TOKEN: 'at least 16 characters; turns GET /metrics (Prometheus text, Authorization: Bearer <token>) on; default: off (404)',
  METRICS_PORT: 'serve /metrics on this port of its own (on HOST) instead of the gateway\'s; needs METRICS_TOKEN; default: the gateway\'s port',
  STATE: 'where tasks and conversations live: embedded (PostgreSQL in this process, in DATA_DIR), postgres (DATABASE_URL) or memory (lost on exit); default: postgres with DATABASE_URL, else embedded',
  DATA_DIR: 'the embedded database\'s folder (STATE=embedded), created on first start; one gateway at a time',
  DATABASE_URL: 'postgres://… for tasks, conversations and live events on a PostgreSQL server (several instances); default: none (embedded)',
  DATABASE_SCHEMA: "schema holding every table, created and migrated at start; default: the server's search path",
  SECRETS_KEY: '32 bytes (44 base64 characters or 64 hex digits) sealing push credentials in the database (AES-256-GCM); default: embedded: a key generated into DATA_DIR/secrets.key, postgres: in clear (warned at start)',
  SECRETS_KEY_PREVIOUS: 'comma list of older SECRETS_KEYs, read while rows are re-sealed with SECRETS_KEY at start (key rotation); default: none',
  PROVIDER_TIMEOUT_MS: 'envelope provider budget per object, in ms',
  ENVELOPE_PROVIDER_URL: 'http(s) envelope service for agent objects that carry no envelope (proxied agents); default: none',
  SHUTDOWN_TIMEOUT_MS: 'SIGTERM/SIGINT drain budget before the process exits anyway, in ms',
  A2A_ROOT_ENDPOINT: "true: the default (first) agent's JSON-RPC endpoint also at POST / (for the A2A TCK)",
  MEMORY_MAX_TASKS: 'STATE=memory: tasks kept per agent (finished ones evicted first)',
  MEMORY_MAX_TASK_BYTES: "STATE=memory: each agent's tasks kept, summed as ProtoJSON length (finished ones evicted first, open ones never)",
  MAX_OPEN_TASKS_PER_CALLER: 'open tasks per agent one caller (or walk-in address) holds; a new one past it is -32000 RESOURCE_EXHAUSTED',
  MEMORY_FINISHED_TASK_TTL_MS: 'STATE=memory: a finished task is forgotten this long after its last update, in ms',
  MEMORY_MAX_CONVERSATIONS: 'STATE=memory: conversations kept (least recently updated idle one evicted first)',
  MAX_CONVERSATIONS_PER_CALLER: 'conversations per agent one caller (or walk-in address) keeps; a new one past it is -32000 RESOURCE_EXHAUSTED',
  MAX_AGENTS: 'agents the state store holds at most (published through the operator API); one more is 409',
  MAX_AGENT_BYTES: 'a published agent\'s definition at most, its documents included (bytes of JSON); larger is 413',
  MAX_AGENT_DOCUMENTS: 'knowledge documents of a published agent at most; one more is 409',
  AGENTS_SYNC_MS: 'how often each instance checks the state store for an agent change it was not told of',
  REQUEST_TIMEOUT_MS: 'time to receive a whole request, in ms (slower: HTTP 408); replies and streams are not bounded',
  HEADERS_TIMEOUT_MS: "time to receive a request's headers, in ms",
  KEEP_ALIVE_TIMEOUT_MS: "an idle keep-alive connection closes after this, in ms (longer than the balancer's idle timeout)",
  MAX_CONNECTIONS: 'open connections at most; a further one is closed at once',
  MAX_BYTES_IN_FLIGHT_PER_CALLER: 'request bytes (body + 1 KiB each) of one caller, or one client address for walk-ins, served at once on the HTTP doors; its further requests wait, bodies unread; a request is always served when its caller has none in flight; 0: no limit',
  MAX_READ_CHARS: 'characters of a message\'s text the built-in agents read (search, routine triggers and slots, the conversation); the rest is not read',
  MAX_STREAMS_PER_CALLER: 'open SSE streams per caller (walk-ins: per client address) at most; a further one is HTTP 429 with Retry-After; 0: no limit',
  A2A_VERSIONS: 'A2A versions the JSON-RPC endpoint answers: 0.3,1.0 (a request without A2A-Version is A2A 0.3, translated) or 1.0 (-32009)',
  WELL_KNOWN_CARD: 'what the well-known card path answers a request without A2A-Version: v1 (1.0\'s strict card) or compat (0.3\'s fields beside the 1.0 interfaces, for 0.3 clients)',
  TURN_WAIT_TIMEOUT_MS: "a turn naming a task waits at most this for the task's earlier turns, in ms (then -32603, task busy)",
  A2A_AUTH: 'walk-in (anyone; a walk-in reaches only the task ids and UUID contextIds it holds) or required (a credential; each caller sees its own tasks); default: required when credentials are configured, else walk-in',
  A2A_API_KEYS: 'comma list of callerId:key (keys at least 16 characters), sent as Authorization: Bearer <key>',
  A2A_JWT_JWKS_URL: "identity provider's JWKS URL; with A2A_JWT_ISSUER and A2A_JWT_AUDIENCE accepts JWT bearer tokens",
  A2A_JWT_ISSUER: 'the iss every JWT must carry',
  A2A_JWT_AUDIENCE: 'the aud every JWT must name',
  A2A_JWT_CALLER_CLAIM: "the JWT claim whose string value is the caller's id",
  A2A_JWT_CLOCK_TOLERANCE_SEC: 'clock skew accepted on exp and nbf, in seconds',
  A2A_JWT_MAX_TOKEN_AGE_SEC: 'longest a JWT may live, in seconds: it must carry iat, exp - iat and its age at most this; default: no maximum (exp is always required)',
  RATE_LIMIT_MAX: 'A2A requests per caller (or client address without a credential) and window, one count across every door (HTTP, MCP, each message of an MCP batch, gRPC); 0: no limit',
  RATE_LIMIT_OPERATOR_MAX: 'operator API requests per client address and window, wrong keys included; and, a count of its own, /metrics requests per address, wrong tokens included; 0: no limit',
  RATE_LIMIT_WINDOW_MS: 'the rate limits\' window, in ms',
  MCP_MAX_BATCH: 'messages in one MCP JSON-RPC batch at most (1-100; older revisions); longer: HTTP 400 -32600',
  REDIS_URL: 'redis://… to count rate limits in Redis, shared by every instance; default: in memory',
  REDIS_KEY_PREFIX: 'prefix of the gateway\'s Redis keys',
  PUSH_ALLOWED_HOSTS: 'webhook hosts allowed although internal: host names, addresses, CIDRs (comma list)',
  PUSH_ALLOW_HTTP: 'allow plain-http webhook URLs',
  MAX_PUSH_CONFIGS_PER_CALLER: 'push notification configs one caller holds per agent',
  PUSH_MAX_ATTEMPTS: 'attempts per push notification at most',
  PUSH_MAX_AGE_MS: 'no push attempt later than this after the task update',
  PUSH_RETRY_BASE_MS: 'first push retry after about this long (then doubling, with jitter)',
  PUSH_RETRY_MAX_DELAY_MS: 'longest wait between push attempts',
  PUSH_TIMEOUT_MS: 'one webhook POST\'s time at most',
  SIGNING_KEY: 'the private key every served card is signed with: PEM (PKCS#8, SEC1, PKCS#1) or a JWK; EC P-256/384/521, Ed25519 or RSA ≥ 2048 bits; default: cards unsigned',
  SIGNING_KEY_FILE: 'a file holding SIGNING_KEY (set one of the two)',
  SIGNING_KEY_ID: 'the signing key\'s kid; default: the JWK\'s kid, else its RFC 7638 thumbprint',
  SIGNING_ALG: 'ES256, ES384, ES512, EdDSA, RS256 … PS512; default: from the key (RS256 for RSA)',
  SIGNING_PUBLIC_KEYS_FILE: 'a JWKS of public keys published beside the signing key at /.well-known/jwks.json (rotation); default: none'
})

/** True when the command line asks for help rather than a start. */
export function wantsHelp (args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h')
}

/** The help text: usage, then one line per variable with its default. */
export function helpText (): string {
  const names = Object.keys(VARIABLE_HELP) as Variable[]
  const width = Math.max(...names.map((name) => name.length))
  const lines = names.map((name) => {
    const schema = configSchema.properties[name] as { default?: unknown }
    const fallback = schema.default === undefined ? '' : ` (default ${String(schema.default)})`
    return `  ${name.padEnd(width)}  ${VARIABLE_HELP[name]}${fallback}`
  })
  return [
    'a2a-converse gateway: serves A2A agents with the converse extension.',
    '',
    'Usage: node dist/src/gateway/main.js   (npm start; npm start -- --help for this text)',
    '',
    'Configured by environment variables (blank counts as unset):',
    ...lines,
    ''
  ].join('\n')
}
