/**
 * `npm start`: read the environment, build the gateway, listen, and drain on SIGTERM/SIGINT.
 * The only module that reads process.env or calls process.exit.
 */
import type { FastifyInstance } from 'fastify'
import { buildGateway } from './app.js'
import { ConfigError, configWarnings, loadConfig, type GatewayConfig } from './config.js'
import { routeConsoleToLogger } from './console-to-log.js'
import { helpText, wantsHelp } from './help.js'
import { cardUrls } from './card-urls.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './package-root.js'
import { startTracing, tracingConfig } from './tracing-sdk.js'

/**
 * Drains on the first SIGTERM or SIGINT: /health/ready turns 503, no new connections, in-flight requests
 * finish, open streams end; exit 0 when closed, 1 on an error or after `shutdownTimeoutMs`. Later signals are
 * ignored while draining: `npm start` forwards the terminal's SIGINT to a child that got it already, and a
 * second signal must not kill the process halfway (the time bound still holds).
 */
function drainOnSignals (app: FastifyInstance, config: GatewayConfig): void {
  let closing = false
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      app.log.info({ signal }, 'already draining')
      return
    }
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
    }, closeFailed.bind(undefined, app))
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}

/* c8 ignore start -- close() rejects only when an onClose hook throws; the in-memory stores never do, and a
   process test cannot inject a failing hook into the real entry */
function closeFailed (app: FastifyInstance, error: unknown): void {
  app.log.error({ err: error }, 'error while closing')
  process.exit(1)
}
/* c8 ignore stop */

async function main (): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    process.stdout.write(helpText())
    return
  }
  const config = loadConfig(process.env)
  // OpenTelemetry from the OTEL_* variables (off without a destination): checked now, started once the app (and its
  // logger) exists, flushed when the app closes.
  const traces = tracingConfig(process.env)
  const app = await buildGateway({ config })
  const { version } = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }
  const tracing = await startTracing(traces, version, app.log)
  if (tracing !== undefined) app.addHook('onClose', async () => { await tracing.shutdown() })
  // The SDK's console lines go through pino: every stdout line is JSON.
  routeConsoleToLogger(app.log)
  for (const warning of configWarnings(config, process.env)) app.log.warn(warning)
  drainOnSignals(app, config)
  const address = await app.listen({ port: config.port, host: config.host })
  const cards = cardUrls([...app.converse.agents.keys()], config, new URL(address))
  app.log.info({ cards }, `agent cards: ${cards.join(' ')}`)
}

// Everything that stops the start (an invalid variable, a bad AGENTS_FILE or document, a port in use) ends
// here: one line on stderr naming the cause, exit code 1.
main().catch((error: unknown) => {
  const what = error instanceof ConfigError ? 'invalid configuration' : 'cannot start'
  process.stderr.write(`a2a-converse: ${what}: ${(error as Error).message}\n`)
  process.exit(1)
})
