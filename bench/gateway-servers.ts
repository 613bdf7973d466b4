/**
 * The three servers of the gateway benchmark, each answering the seed's SendMessage ("How long do I have to
 * return an order?", A2A-Version 1.0, A2A-Extensions = the converse URI) with one agent Message of about the
 * same size (~800 bytes):
 *
 * - `gateway`: the real gateway app (buildGateway, demo agent, conversation executor, converse plugin) at
 *   POST /a2a/demo;
 * - `express`: an @a2a-js/sdk Express server (`jsonRpcHandler` over DefaultRequestHandler and an
 *   InMemoryTaskStore) whose echo executor replies with one Message carrying the same envelope in metadata;
 * - `bare`: a bare Fastify route returning a canned reply of the same size (serialized per request, as any
 *   JSON route);
 * - `express-door`: this package's Express door (`converseRouter`) over the same echo executor as `express`,
 *   the extension active: the attached envelope is validated and the reply decorated by the A2A service.
 *
 * bench/gateway-server.ts runs one of them in a child process.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Fastify, { type FastifyInstance } from 'fastify'
import { AgentCard, Role } from '@a2a-js/sdk'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import { converseRouter } from 'a2a-converse/express'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { startTracing, tracingConfig } from '../src/gateway/tracing-sdk.js'
import { ANSWER_TEXT } from './lib.js'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'

export const SERVER_KINDS = ['gateway', 'express', 'bare', 'express-door', 'upstream', 'proxy', 'gateway-keys', 'gateway-mcp-per-request', 'proxy-caller', 'proxy-assertion'] as const
export type ServerKind = typeof SERVER_KINDS[number]

export const SEED_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  'a2a-version': '1.0',
  'a2a-extensions': CONVERSE_EXTENSION_URI
})

/** The envelope the gateway attaches to its answer (fresh turn id per reply, as the gateway does). */
export function answerEnvelope (turnId: string, requestMessageId: string) {
  return {
    author: 'agent',
    answerCoverage: {
      availability: 'assessed',
      coverage: 'answered',
      reason: 'sufficient_evidence',
      originatingTurnId: turnId,
      originatingRequestId: requestMessageId
    },
    ownership: { state: 'ai_owned', suppressed: false },
    citations: [{ documentId: 'returns-policy', chunkId: 'returns-policy#0', title: 'Returns policy' }]
  }
}

/** The gateway's reply as it goes on the wire, with fixed ids: what the bare route answers. */
export const CANNED_REPLY = Object.freeze({
  jsonrpc: '2.0',
  id: 1,
  result: {
    message: {
      messageId: '710f1796-0940-4580-8dd9-ac954b18497c',
      contextId: '97038e78-d40c-445a-8f8b-e414782974c6',
      role: 'ROLE_AGENT',
      parts: [{ text: ANSWER_TEXT, mediaType: 'text/plain' }],
      metadata: { [CONVERSE_EXTENSION_URI]: answerEnvelope('26571179-cee4-49ac-b0e8-3df7ecd71389', '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10') },
      extensions: [CONVERSE_EXTENSION_URI]
    }
  }
})

/** A running server: its base URL, the path to POST to, its HTTP server, and how to stop it. */
export interface RunningServer {
  url: string
  path: string
  http: Server
  close (): Promise<void>
}

/** The API key the `gateway-keys` server accepts (bench/identities.ts sends it). */
export const BENCH_API_KEY = 'bench-key-0123456789abcdef'

/**
 * The gateway as the demo runs it (walk-in; the rate limit off, so that the load generator's one address is not
 * limited), or (`keys`) requiring an API key with the A2A door's rate limit on, in memory, at a count no run reaches.
 */
/** The gateway; `keys`: an API key required; `mcpPerRequest`: the MCP door without its fast path (a new server per request). */
export async function startGateway (keys = false, mcpPerRequest = false): Promise<RunningServer> {
  const env = keys
    ? { STATE: 'memory', LOG_LEVEL: 'silent', A2A_API_KEYS: `bench:${BENCH_API_KEY}`, RATE_LIMIT_MAX: '10000000', MAX_CONVERSATIONS_PER_CALLER: '10000000' }
    : { STATE: 'memory', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }
  // BENCH_GRPC_PORT: the gRPC listener on that port too (the bindings scenario).
  const grpc = process.env.BENCH_GRPC_PORT === undefined ? {} : { GRPC_PORT: process.env.BENCH_GRPC_PORT }
  // BENCH_METRICS_TOKEN: /metrics on (the observability scenario); OTEL_* in the child's environment: the trace SDK
  // as `npm start` configures it (off without a destination).
  const metrics = process.env.BENCH_METRICS_TOKEN === undefined ? {} : { METRICS_TOKEN: process.env.BENCH_METRICS_TOKEN }
  const app = await buildGateway({ config: loadConfig({ ...env, ...grpc, ...metrics }), mcpDirectToolCalls: !mcpPerRequest })
  const tracing = await startTracing(tracingConfig(process.env), '0.0.0-bench', app.log)
  if (tracing !== undefined) app.addHook('onClose', async () => { await tracing.shutdown() })
  return { url: await listenFastify(app), path: '/a2a/demo', http: app.server, close: () => app.close() }
}

/**
 * Replies to every message with one agent Message: the gateway's answer text and envelope (attached by the
 * executor itself; there is no knowledge search and no converse plugin), and the A2A-Extensions echo.
 */
export const echoExecutor: AgentExecutor = {
  async execute (requestContext, eventBus) {
    const request = requestContext.userMessage
    // As the gateway does: the extension was requested and this agent declares it, so the reply echoes it.
    if (requestContext.context?.requestedExtensions?.includes(CONVERSE_EXTENSION_URI) === true) {
      requestContext.context.addActivatedExtension(CONVERSE_EXTENSION_URI)
    }
    eventBus.publish(AgentEvent.message({
      messageId: randomUUID(),
      contextId: requestContext.contextId,
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text', value: ANSWER_TEXT }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: { [CONVERSE_EXTENSION_URI]: answerEnvelope(randomUUID(), request.messageId) },
      extensions: [CONVERSE_EXTENSION_URI],
      referenceTaskIds: []
    }))
  },
  async cancelTask () {}
}

/**
 * The SDK's Express server with the echo executor at /a2a/echo, its card naming `interfaceUrl`. The card declares the
 * extension, so a direct reply is the same as a proxied one (envelope and echo header); a gateway in front serves
 * the extension itself and forwards nothing of it.
 */
function echoAgent (interfaceUrl: string): { app: ReturnType<typeof express>, handler: DefaultRequestHandler } {
  const card = AgentCard.fromJSON({
    name: 'Echo',
    description: 'Replies with a canned answer',
    version: '1.0.0',
    supportedInterfaces: [{ url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [{ uri: CONVERSE_EXTENSION_URI, required: false }] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: []
  })
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), echoExecutor)
  const app = express()
  app.use('/a2a/echo', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
  return { app, handler }
}

export async function startExpress (): Promise<RunningServer> {
  return await listenExpress(echoAgent('http://127.0.0.1/a2a/echo').app, '/a2a/echo')
}

/** An upstream agent for the proxy scenario: `express` with its card at /.well-known/agent-card.json (interface /a2a/echo, relative). */
export async function startUpstreamAgent (): Promise<RunningServer> {
  const { app, handler } = echoAgent('/a2a/echo')
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }))
  return await listenExpress(app, '/a2a/echo')
}

/** The gateway in proxy mode in front of `upstreamUrl` (the minimal agents-file form), operator API and rate limit off (one load-generator address). */
export async function startProxy (upstreamUrl: string): Promise<RunningServer> {
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000' }), agents: [{ id: 'echo', upstream: { url: upstreamUrl } }] })
  return { url: await listenFastify(app), path: '/a2a/echo', http: app.server, close: () => app.close() }
}

/** The API key of the proxy-identity scenario's one caller (bench/proxy-identity.ts). */
export const BENCH_CALLER_KEY = 'bench-caller-key-0123456789'

/**
 * The gateway in proxy mode with an authenticated caller (A2A_API_KEYS): the upstream told who calls
 * (`identity: assertion`, an Ed25519 SIGNING_KEY, docs/trust.md) or not (`none`).
 */
export async function startIdentityProxy (upstreamUrl: string, assertion: boolean): Promise<RunningServer> {
  const signing = assertion
    ? { SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, PUBLIC_URL: 'http://gateway.bench' }
    : {}
  const app = await buildGateway({
    config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_CONVERSATIONS_PER_CALLER: '10000000', A2A_API_KEYS: `bench:${BENCH_CALLER_KEY}`, ...signing }),
    agents: [{ id: 'echo', upstream: { url: upstreamUrl, identity: { mode: assertion ? 'assertion' : 'none' } } }]
  })
  return { url: await listenFastify(app), path: '/a2a/echo', http: app.server, close: () => app.close() }
}

/** The Express door with the same echo executor: `converseRouter`, the default (attached-envelope) provider. */
export async function startExpressDoor (): Promise<RunningServer> {
  const router = converseRouter({
    agents: [{ id: 'echo', card: { name: 'Echo', description: 'Replies with a canned answer', capabilities: { streaming: true } }, executor: echoExecutor }]
  })
  const app = express()
  app.use(router)
  return await listenExpress(app, '/a2a/echo', () => router.close())
}

async function listenExpress (app: express.Express, path: string, beforeClose: () => Promise<void> = async () => {}): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    path,
    http: server,
    close: async () => {
      await beforeClose()
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
    }
  }
}

export async function startBare (): Promise<RunningServer> {
  const app = Fastify({ logger: false })
  app.post('/a2a/demo', async (_request, reply) => {
    reply.header('a2a-extensions', CONVERSE_EXTENSION_URI)
    return CANNED_REPLY
  })
  return { url: await listenFastify(app), path: '/a2a/demo', http: app.server, close: () => app.close() }
}

export function startServer (kind: ServerKind): Promise<RunningServer> {
  switch (kind) {
    case 'gateway': return startGateway()
    case 'express': return startExpress()
    case 'bare': return startBare()
    case 'express-door': return startExpressDoor()
    case 'upstream': return startUpstreamAgent()
    case 'proxy': return startProxy(process.env.BENCH_UPSTREAM_URL as string)
    case 'proxy-caller': return startIdentityProxy(process.env.BENCH_UPSTREAM_URL as string, false)
    case 'proxy-assertion': return startIdentityProxy(process.env.BENCH_UPSTREAM_URL as string, true)
    case 'gateway-keys': return startGateway(true)
    case 'gateway-mcp-per-request': return startGateway(false, true)
  }
}

async function listenFastify (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}
