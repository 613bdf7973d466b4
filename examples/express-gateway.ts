/**
 * The demo agent on Express: the same agents file and the same conversation runtime as `npm start`, behind the
 * Express door instead of Fastify. Run: `PORT=3000 npm run example:express`, then talk to /a2a/demo as the
 * README shows. The gateway's variables apply (PORT, HOST, PUBLIC_URL, MCP_PUBLIC_URL, BODY_LIMIT,
 * AGENTS_FILE, DATABASE_URL); the operator API and the health routes are the Fastify gateway's (`npm start`).
 */
import type { Server } from 'node:http'
import express from 'express'
import { converseRouter } from 'a2a-converse/express'
import { loadAgentDefinitions, defaultAgentsFile } from '../src/gateway/agent-definitions.js'
import { loadConfig } from '../src/gateway/config.js'
import { buildAgentRuntime } from '../src/gateway/runtime.js'
import { openGatewayState } from '../src/gateway/state.js'

const config = loadConfig(process.env)
// Logs: the router's default (errors and warnings on stderr); the PostgreSQL state's warnings to the console.
const state = await openGatewayState(config, console)
const runtime = await buildAgentRuntime({
  definitions: await loadAgentDefinitions(config.agentsFile ?? defaultAgentsFile()),
  conversations: state.conversations,
  events: state.events,
  upstreamOwnership: state.upstreamOwnership,
  taskStoreFor: state.taskStoreFor
})
const converse = converseRouter({
  // One turn at a time per task, across instances too when the state is on PostgreSQL.
  agents: runtime.agents.map((agent) => ({ ...agent, turnLock: state.taskTurnLockFor(agent.id) })),
  events: state.events,
  publicUrl: config.publicUrl,
  mcpPublicUrl: config.mcpPublicUrl,
  providerTimeoutMs: config.providerTimeoutMs,
  bodyLimit: config.bodyLimit
})

const app = express()
app.use(converse)
const server = await new Promise<Server>((resolve) => {
  const listening = app.listen(config.port, config.host, () => resolve(listening))
})
console.log(JSON.stringify({ msg: 'listening', address: server.address() }))

// On SIGTERM / SIGINT: end open streams, stop listening, close the stores, exit.
async function shutdown (): Promise<void> {
  await converse.close()
  await new Promise((resolve) => server.close(resolve))
  await state.close()
  process.exit(0)
}
// A failure while closing is an unhandled rejection: Node exits 1.
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
