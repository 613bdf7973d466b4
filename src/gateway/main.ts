/**
 * `npm start`: read the environment, build the gateway, listen, and drain on SIGTERM/SIGINT.
 * The only module that reads process.env or calls process.exit.
 */
import { buildGateway } from './app.js'
import { ConfigError, loadConfig, type GatewayConfig } from './config.js'
import { AgentsFileError } from './agent-definitions.js'

async function main (): Promise<void> {
  let config: GatewayConfig
  try {
    config = loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`a2a-converse: invalid configuration: ${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
  let app
  try {
    app = await buildGateway({ config })
  } catch (error) {
    if (error instanceof AgentsFileError || (error as { code?: string }).code?.startsWith('A2A_CONVERSE_') === true) {
      process.stderr.write(`a2a-converse: cannot start: ${(error as Error).message}\n`)
      process.exit(1)
    }
    throw error
  }

  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'draining: no new connections, finishing in-flight requests')
    // Bounded: if something hangs past the budget, leave anyway rather than wait for the LB's SIGKILL.
    setTimeout(() => {
      app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out')
      process.exit(1)
    }, config.shutdownTimeoutMs).unref()
    app.close().then(() => {
      app.log.info('closed')
      process.exit(0)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'error while closing')
      process.exit(1)
    })
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)

  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: unknown) => {
  process.stderr.write(`a2a-converse: failed to start: ${(error as Error)?.message ?? String(error)}\n`)
  process.exit(1)
})
