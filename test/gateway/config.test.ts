import { randomBytes } from 'node:crypto'
import t from 'tap'
import { ConfigError, configWarnings, loadConfig } from '../../src/gateway/config.js'
import { parseTrustProxy } from '../../src/gateway/config-values.js'

t.test('defaults with no configuration at all', async (t) => {
  const config = loadConfig({})
  t.same(config, {
    port: 8080,
    host: '0.0.0.0',
    publicUrl: undefined,
    mcpPublicUrl: undefined,
    grpcPort: undefined,
    publicGrpcUrl: undefined,
    trustProxy: false,
    logLevel: 'info',
    bodyLimit: 1048576,
    agentsFile: undefined,
    operatorApiKey: undefined,
    state: 'embedded',
    dataDir: './data',
    databaseUrl: undefined,
    secrets: { key: undefined, previous: [] },
    providerTimeoutMs: 1000,
    shutdownTimeoutMs: 10000,
    rootEndpoint: false,
    memoryMaxTasks: 10000,
    memoryFinishedTaskTtlMs: 3600000,
    memoryMaxConversations: 10000,
    memoryMaxTaskBytes: 268435456,
    maxOpenTasksPerCaller: 1000,
    maxConversationsPerCaller: 1000,
    requestTimeoutMs: 30000,
    headersTimeoutMs: 10000,
    keepAliveTimeoutMs: 72000,
    maxConnections: 10000,
    maxStreamsPerCaller: 100,
    maxReadChars: 4096,
    maxBytesInFlightPerCaller: 2097152,
    a2aVersions: ['0.3', '1.0'],
    wellKnownCard: 'v1',
    turnWaitTimeoutMs: 30000,
    auth: { mode: 'walk-in', apiKeys: [], jwt: undefined },
    rateLimit: { max: 6000, operatorMax: 600, windowMs: 60000, redisUrl: undefined, redisKeyPrefix: 'a2a-converse:' },
    mcpMaxBatch: 10,
    maxAgents: 1000,
    maxAgentBytes: 1048576,
    maxAgentDocuments: 100,
    agentsSyncMs: 1000,
    push: {
      allowedHosts: [],
      allowHttp: false,
      maxConfigsPerCaller: 100,
      maxAttempts: 8,
      maxAgeMs: 3600000,
      baseDelayMs: 1000,
      maxDelayMs: 300000,
      timeoutMs: 10000
    }
  })
})

t.test('PUSH_*: the allow-list is host names, addresses and CIDRs', async (t) => {
  const config = loadConfig({ PUSH_ALLOWED_HOSTS: ' hooks.internal, 127.0.0.1,10.0.0.0/8 , ::1, fd00::/8', PUSH_ALLOW_HTTP: 'true', PUSH_MAX_ATTEMPTS: '3' })
  t.strictSame(config.push.allowedHosts, ['hooks.internal', '127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'])
  t.equal(config.push.allowHttp, true)
  t.equal(config.push.maxAttempts, 3)
  for (const bad of ['10.0.0.0/33', 'not a host', 'x/8']) {
    t.throws(() => loadConfig({ PUSH_ALLOWED_HOSTS: bad }), { name: 'ConfigError', variable: 'PUSH_ALLOWED_HOSTS' }, bad)
  }
})

t.test('every variable is read and typed', async (t) => {
  const config = loadConfig({
    PORT: '9090',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://agents.example.com/',
    TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
    LOG_LEVEL: 'warn',
    BODY_LIMIT: '2048',
    AGENTS_FILE: './agents.yaml',
    OPERATOR_API_KEY: 'a-long-enough-operator-key',
    METRICS_TOKEN: 'a-long-enough-metrics-token',
    METRICS_PORT: '9464',
    DATABASE_URL: 'postgres://u@db/app',
    PROVIDER_TIMEOUT_MS: '250',
    SHUTDOWN_TIMEOUT_MS: '5000',
    MEMORY_MAX_TASKS: '500',
    MEMORY_FINISHED_TASK_TTL_MS: '60000',
    MEMORY_MAX_CONVERSATIONS: '300',
    REQUEST_TIMEOUT_MS: '20000',
    HEADERS_TIMEOUT_MS: '5000',
    KEEP_ALIVE_TIMEOUT_MS: '65000',
    MAX_CONNECTIONS: '100',
    TURN_WAIT_TIMEOUT_MS: '5000',
    UNRELATED: 'ignored'
  })
  t.equal(config.port, 9090)
  t.equal(config.publicUrl, 'https://agents.example.com', 'trailing slash removed')
  t.equal(config.mcpPublicUrl, 'https://agents.example.com', 'MCP_PUBLIC_URL defaults to PUBLIC_URL')
  t.same(config.trustProxy, ['10.0.0.0/8', '127.0.0.1'])
  t.equal(config.bodyLimit, 2048)
  t.equal(config.operatorApiKey, 'a-long-enough-operator-key')
  t.strictSame([config.metricsToken, config.metricsPort], ['a-long-enough-metrics-token', 9464])
  t.equal(config.databaseUrl, 'postgres://u@db/app')
  t.equal(config.state, 'postgres', 'DATABASE_URL alone selects the server')
  t.equal(config.providerTimeoutMs, 250)
  t.equal(config.shutdownTimeoutMs, 5000)
  t.strictSame([config.memoryMaxTasks, config.memoryFinishedTaskTtlMs, config.memoryMaxConversations], [500, 60000, 300])
  t.strictSame([config.requestTimeoutMs, config.headersTimeoutMs, config.keepAliveTimeoutMs, config.maxConnections], [20000, 5000, 65000, 100])
  t.equal(config.turnWaitTimeoutMs, 5000)
  t.equal(loadConfig({ PUBLIC_URL: 'http://a.example', MCP_PUBLIC_URL: 'https://mcp.example/' }).mcpPublicUrl, 'https://mcp.example')
})

t.test('A2A_VERSIONS: 0.3 and 1.0 by default, 1.0 alone when asked, 1.0 always', async (t) => {
  t.strictSame(loadConfig({ A2A_VERSIONS: '1.0' }).a2aVersions, ['1.0'])
  t.strictSame(loadConfig({ A2A_VERSIONS: ' 1.0 , 0.3,1.0,' }).a2aVersions, ['1.0', '0.3'])
  for (const bad of ['0.3', '2.0', '1.0,0.2', ', ,']) {
    t.throws(() => loadConfig({ A2A_VERSIONS: bad }), { message: 'A2A_VERSIONS must be "0.3,1.0" or "1.0" (1.0 is always served)' }, bad)
  }
})

t.test('STATE: embedded by default, postgres with DATABASE_URL, memory when asked; the messages say what to do', async (t) => {
  t.strictSame([loadConfig({}).state, loadConfig({}).dataDir], ['embedded', './data'])
  t.strictSame([loadConfig({ STATE: 'embedded', DATA_DIR: '/var/lib/converse' }).dataDir], ['/var/lib/converse'])
  t.equal(loadConfig({ STATE: 'memory' }).state, 'memory')
  t.equal(loadConfig({ STATE: 'postgres', DATABASE_URL: 'postgres://u@db/app' }).state, 'postgres')
  t.throws(() => loadConfig({ STATE: 'postgres' }), { message: 'STATE is postgres, which needs DATABASE_URL' })
  t.throws(() => loadConfig({ STATE: 'memory', DATABASE_URL: 'postgres://u@db/app' }), { message: 'STATE is memory, but DATABASE_URL is set too: unset one of them' })
})

t.test('blank values mean unset', async (t) => {
  t.equal(loadConfig({ PORT: '  ', PUBLIC_URL: '' }).port, 8080)
})

t.test('an invalid value names the variable', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ MCP_PUBLIC_URL: 'ftp://x' }, 'MCP_PUBLIC_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ BODY_LIMIT: '10' }, 'BODY_LIMIT'],
    [{ OPERATOR_API_KEY: 'short' }, 'OPERATOR_API_KEY'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ TRUST_PROXY: 'sometimes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0' }, 'TRUST_PROXY'],
    [{ SHUTDOWN_TIMEOUT_MS: '1' }, 'SHUTDOWN_TIMEOUT_MS'],
    [{ MEMORY_MAX_TASKS: '0' }, 'MEMORY_MAX_TASKS'],
    [{ MEMORY_FINISHED_TASK_TTL_MS: '10' }, 'MEMORY_FINISHED_TASK_TTL_MS'],
    [{ MEMORY_MAX_CONVERSATIONS: 'many' }, 'MEMORY_MAX_CONVERSATIONS'],
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '40000' }, 'HEADERS_TIMEOUT_MS'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '5' }, 'KEEP_ALIVE_TIMEOUT_MS'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS'],
    [{ TURN_WAIT_TIMEOUT_MS: '0' }, 'TURN_WAIT_TIMEOUT_MS'],
    [{ STATE: 'sqlite' }, 'STATE'],
    [{ STATE: 'postgres' }, 'STATE'],
    [{ STATE: 'embedded', DATABASE_URL: 'postgres://u@db/app' }, 'STATE'],
    [{ STATE: 'memory', DATABASE_URL: 'postgres://u@db/app' }, 'STATE'],
    [{ GRPC_PORT: '70000' }, 'GRPC_PORT'],
    [{ GRPC_PORT: '50051', PUBLIC_GRPC_URL: 'https://grpc.example.com' }, 'PUBLIC_GRPC_URL'],
    [{ GRPC_PORT: '50051', PUBLIC_GRPC_URL: 'grpc.example.com' }, 'PUBLIC_GRPC_URL'],
    [{ PUBLIC_GRPC_URL: 'grpc.example.com:443' }, 'PUBLIC_GRPC_URL'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ METRICS_PORT: '9464' }, 'METRICS_PORT'],
    [{ METRICS_TOKEN: 'a-long-enough-metrics-token', METRICS_PORT: '70000' }, 'METRICS_PORT']
  ]
  for (const [env, variable] of cases) {
    let caught: unknown
    try { loadConfig(env) } catch (error) { caught = error }
    t.ok(caught instanceof ConfigError, `${variable} throws a ConfigError`)
    t.equal((caught as ConfigError).variable, variable)
    t.match((caught as ConfigError).message, new RegExp(`^${variable} `))
  }
})

t.test('SECRETS_KEY and SECRETS_KEY_PREVIOUS: 32 bytes each, base64 or hex; a bad one named, never shown', async (t) => {
  const [key, old, older] = [randomBytes(32), randomBytes(32), randomBytes(32)]
  t.same(loadConfig({ SECRETS_KEY: key.toString('base64'), SECRETS_KEY_PREVIOUS: `${old.toString('hex')}, ${older.toString('base64')},` }).secrets, { key, previous: [old, older] })
  t.throws(() => loadConfig({ SECRETS_KEY: 'hunter2' }), { name: 'ConfigError', variable: 'SECRETS_KEY', message: 'SECRETS_KEY must be 32 bytes, as 64 hex digits or 44 base64 characters (openssl rand -base64 32)' })
  t.throws(() => loadConfig({ SECRETS_KEY: key.toString('hex'), SECRETS_KEY_PREVIOUS: `${old.toString('hex')},hunter2` }),
    { variable: 'SECRETS_KEY_PREVIOUS', message: 'SECRETS_KEY_PREVIOUS entry 2 must be 32 bytes, as 64 hex digits or 44 base64 characters (openssl rand -base64 32)' })
  t.throws(() => loadConfig({ SECRETS_KEY_PREVIOUS: old.toString('hex') }), { variable: 'SECRETS_KEY_PREVIOUS', message: /is set, but SECRETS_KEY is not/ })
})

t.test('GRPC_PORT and PUBLIC_GRPC_URL: a gRPC target as clients dial it', async (t) => {
  for (const target of ['grpc.example.com:443', '10.0.0.1:50051', '[::1]:50051', 'dns:///grpc.example.com:443']) {
    t.match(loadConfig({ GRPC_PORT: '50051', PUBLIC_GRPC_URL: target }), { grpcPort: 50051, publicGrpcUrl: target }, target)
  }
  t.equal(loadConfig({ GRPC_PORT: '0' }).grpcPort, 0, 'any free port')
  t.throws(() => loadConfig({ PUBLIC_GRPC_URL: 'grpc.example.com:443' }), /PUBLIC_GRPC_URL is set, but GRPC_PORT is not/)
})

t.test('TRUST_PROXY takes what Fastify trustProxy takes', async (t) => {
  t.equal(parseTrustProxy('false'), false)
  t.equal(parseTrustProxy('TRUE'), true)
  t.equal(parseTrustProxy('2'), 2)
  t.same(parseTrustProxy('127.0.0.1'), ['127.0.0.1'])
  t.same(parseTrustProxy('::1, fd00::/8'), ['::1', 'fd00::/8'])
  for (const bad of ['10.0.0.0/33', '::1/129', '10.0.0.1/8/1', 'host.example', '10.0.0.0/x', '40']) {
    t.throws(() => parseTrustProxy(bad), ConfigError, bad)
  }
})

t.test('warnings: a TRUST_PROXY hop count is valid but Fastify does not trust forwarded headers by it', async (t) => {
  t.same(configWarnings(loadConfig({})), [])
  t.same(configWarnings(loadConfig({ TRUST_PROXY: 'true' })), [])
  t.same(configWarnings(loadConfig({ TRUST_PROXY: '10.0.0.0/8' })), [])
  const [warning, ...others] = configWarnings(loadConfig({ TRUST_PROXY: '2' }))
  t.same(others, [])
  t.match(warning, /^TRUST_PROXY=2 is a hop count, which Fastify does not trust: X-Forwarded-Proto\/Host\/For are ignored/)
})

t.test('MCP_MAX_BATCH: 1 to 100 (the SDK\'s own bound)', async (t) => {
  t.equal(loadConfig({ MCP_MAX_BATCH: '1' }).mcpMaxBatch, 1)
  t.equal(loadConfig({ MCP_MAX_BATCH: '100' }).mcpMaxBatch, 100)
  for (const bad of ['0', '101', 'ten']) t.throws(() => loadConfig({ MCP_MAX_BATCH: bad }), { name: 'ConfigError', variable: 'MCP_MAX_BATCH' }, bad)
})
