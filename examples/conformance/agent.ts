/**
 * The gateway serving one agent, `tck`, whose executor plays the official A2A 1.0 conformance kit's scenarios
 * (./executor.ts). `npm run tck` starts it on a free port, fresh for each binding, and runs the kit against
 * http://<host>:<port>/a2a/tck. By hand:
 *
 *   npm run build && PORT=9999 node dist/examples/conformance/agent.js
 *
 * The gateway's variables apply (PORT, HOST, …); STATE defaults to memory (the kit counts tasks, so each run
 * wants an empty server) and LOG_LEVEL to warn. TCK_STREAMING_TIMEOUT (seconds, the kit's, default 2) sets how
 * long the resubscription scenario keeps its task working. Prints one JSON line `{"msg":"listening",…,"url"}`
 * with the agent's URL once it listens; stops on SIGTERM / SIGINT.
 */
import { buildGateway } from '../../src/gateway/app.js'
import { loadConfig } from '../../src/gateway/config.js'
import { conformanceExecutor } from './executor.js'

const config = loadConfig({ STATE: 'memory', LOG_LEVEL: 'warn', ...process.env })
const streamingTimeoutMs = 1000 * Number(process.env.TCK_STREAMING_TIMEOUT ?? 2)
const app = await buildGateway({
  config,
  agents: [{
    id: 'tck',
    name: 'TCK conformance agent',
    description: 'Plays the A2A 1.0 conformance kit\'s scenarios, keyed by messageId prefix.',
    version: '1.0.0',
    executor: 'tck'
  }],
  executors: { tck: () => conformanceExecutor({ streamingTimeoutMs }) }
})
const address = await app.listen({ port: config.port, host: config.host })
process.stdout.write(JSON.stringify({ msg: 'listening', address, url: `${address}/a2a/tck` }) + '\n')

async function shutdown (): Promise<void> {
  await app.close()
  process.exit(0)
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
