/**
 * a2a-converse/gateway: the gateway app (`npm start`) as a library: configuration from the environment, the
 * agents file, the built-in executors and the state they share (memory here; PostgreSQL via a2a-converse/postgres).
 */
export { buildGateway, type GatewayOptions } from './gateway/app.js'
export { loadConfig, ConfigError, type GatewayConfig } from './gateway/config.js'
export { loadAgentDefinitions, AgentsFileError, type AgentDefinition } from './gateway/agent-definitions.js'
export { builtInExecutors, type ExecutorFactory, type ExecutorServices } from './gateway/executors.js'
export { openGatewayState, memoryState, type GatewayState } from './gateway/state.js'
