/**
 * The MCP door's fast path, as the service takes it: a plain `tools/call` or `tools/list` answered by a long-lived
 * Server per era and server identity (direct-exchange.ts says which requests and why the replies are the SDK's).
 * False from it: not taken, the SDK's handler answers.
 */
import type { JSONRPCRequest, ServerContext } from '@modelcontextprotocol/server'
import type { Server } from '../peers/mcp.js'
import {
  connectDirectExchange, eligibleLegacyRequest, eligibleRequest, envelopeRefused, openLegacyStream, type DirectExchange, type Exchange, type ExchangeHeaders
} from './direct-exchange.js'
import type { McpRequest } from './mcp-service.js'
import { serverIdentity, type ServerIdentity } from './server-card.js'

/** Long-lived Servers of the fast path at most, per era (one per agent and public base URL). */
const MAX_PINNED = 64

type Era = 'modern' | 'legacy'

/** How the service builds a Server of an agent's tools (tool-server.ts). */
export type BuildServer = (identity: ServerIdentity, agentId: string, requestOf: (context: ServerContext) => McpRequest, modern: boolean) => Server

/** Answers a request's JSON body on the fast path when it is eligible; false: not taken. */
export function createFastPath (build: BuildServer): (request: McpRequest, body: unknown) => Promise<boolean> {
  /**
   * The long-lived Servers, one per era and server identity (an agent as a card names it: a card per public base
   * URL), built on first use. At most MAX_PINNED per era: a further identity (a Host header the door has not seen)
   * is answered by the SDK's handler, the same reply.
   */
  const exchanges = { modern: new Map<string, DirectExchange<McpRequest>>(), legacy: new Map<string, DirectExchange<McpRequest>>() }
  function exchangeFor (request: McpRequest, era: Era): DirectExchange<McpRequest> | undefined {
    const pinned = exchanges[era]
    const identity = serverIdentity(request.cardOf())
    const key = JSON.stringify(identity)
    let exchange = pinned.get(key)
    if (exchange === undefined && pinned.size < MAX_PINNED) {
      const connected: DirectExchange<McpRequest> = connectDirectExchange<McpRequest>(() =>
        build(identity, request.agentId, (context) => connected.contextOf(context.mcpReq.id), era === 'modern'), era)
      exchange = connected
      pinned.set(key, exchange)
    }
    return exchange
  }

  /**
   * Runs `call` on the era's long-lived Server; a client gone before its reply cancels it, so its A2A call stops
   * waiting. Undefined: no Server for this identity (MAX_PINNED reached), the SDK's handler answers.
   */
  function exchangeOn (request: McpRequest, call: JSONRPCRequest, era: Era): Exchange | undefined {
    const exchange = exchangeFor(request, era)?.exchange(call, request)
    const { response } = request
    if (exchange !== undefined) response.once('close', () => { if (!response.writableFinished) exchange.cancel() })
    return exchange
  }

  /** The reply the SDK's handler would write, without a new Server. */
  async function answerDirectly (request: McpRequest, call: JSONRPCRequest): Promise<boolean> {
    const exchange = exchangeOn(request, call, 'modern')
    if (exchange === undefined) return false
    const reply = await exchange.reply
    if (reply === undefined) return true
    if (envelopeRefused(reply)) return false
    const text = JSON.stringify(reply)
    request.response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    request.response.end(text)
    return true
  }

  /** The legacy fast path: the SSE reply the SDK's stateless legacy leg would write, without a new Server. */
  async function answerInLegacyStream (request: McpRequest, call: JSONRPCRequest): Promise<boolean> {
    const exchange = exchangeOn(request, call, 'legacy')
    if (exchange === undefined) return false
    const stream = openLegacyStream(request.response)
    stream.end(await exchange.reply)
    return true
  }

  return async (request, body) => {
    const { method, headers } = request.request
    const call = eligibleRequest(method, headers as ExchangeHeaders, body)
    if (call !== undefined) return await answerDirectly(request, call)
    const legacyCall = eligibleLegacyRequest(method, headers as ExchangeHeaders, body)
    return legacyCall !== undefined && await answerInLegacyStream(request, legacyCall)
  }
}
