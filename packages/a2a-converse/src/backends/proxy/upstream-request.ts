/**
 * What goes upstream for one checked request, decided from the upstream's card and the caller's context before
 * anything is sent (upstream-backend.ts sends it): the facts the service checks against, the headers, the body
 * (in 1.0, or translated to 0.3 for a 0.3 card), a reply translated back, and the CLIENT span's attributes.
 */
import type { BackendContext } from '../../protocol/backend.js'
import { A2AReplyError } from '../local/local-backend.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import type { AgentFacts, CheckedRequest } from '../../protocol/check-request.js'
import { unsupportedOperation } from '../../protocol/errors.js'
import { v03EventToV1, v03ResultToV1 } from '../../protocol/v0_3/request-to-v1.js'
import { v1CallToV03 } from '../../protocol/v0_3/result-to-v0_3.js'
import type { UpstreamCard } from './upstream-card-parse.js'
import { A2A_RPC_SERVICE, ATTR, serverAttributes, type Attributes } from '../../telemetry/attributes.js'

/** Capabilities before the card was read: requests go to the backend, which answers "unavailable". */
export const UNREAD_FACTS: AgentFacts = Object.freeze({
  capabilities: Object.freeze({ streaming: true, pushNotifications: false, extendedAgentCard: false }),
  requiredExtensions: Object.freeze([]) as readonly string[]
})

/** The facts a card gives the service: streaming as the upstream says, push and the extended card never its. */
export function factsOfCard (card: UpstreamCard): AgentFacts {
  return {
    capabilities: { streaming: card.capabilities.streaming, pushNotifications: false, extendedAgentCard: false },
    requiredExtensions: card.requiredExtensions
  }
}

/**
 * The headers of an upstream request: the configured ones, the caller's `A2A-Version` and extensions (minus the
 * converse URI, the gateway serves it), and the caller's token when the upstream takes one (`identity`).
 */
export function upstreamHeaders (
  configured: Record<string, string>, context: BackendContext, accept: string, v03: boolean,
  identity?: { header: string, token: string }
): Record<string, string> {
  // 0.3 has no A2A-Version (its absence means 0.3) and names extensions in X-A2A-Extensions.
  const headers: Record<string, string> = { ...configured, 'content-type': 'application/json', accept }
  if (!v03) headers['a2a-version'] = context.version
  const extensions = context.requestedExtensions.filter((uri) => uri !== CONVERSE_EXTENSION_URI)
  if (extensions.length > 0) headers[v03 ? 'x-a2a-extensions' : 'a2a-extensions'] = extensions.join(', ')
  if (identity !== undefined) headers[identity.header] = identity.header === 'authorization' ? `Bearer ${identity.token}` : identity.token
  return headers
}

/** The JSON-RPC body of an upstream request; a method 0.3 lacks is refused (-32004) before anything is sent. */
export function upstreamBody (request: CheckedRequest, v03: boolean): string {
  if (!v03) return JSON.stringify({ jsonrpc: '2.0', id: request.id, method: request.method, params: request.params })
  const translated = v1CallToV03(request.method, request.params)
  if (translated === undefined) throw new A2AReplyError(unsupportedOperation(`${request.method} has no A2A 0.3 counterpart; the upstream agent speaks A2A 0.3`))
  return JSON.stringify({ jsonrpc: '2.0', id: request.id, ...translated })
}

/** A result (or stream event) as the service wants it: a 0.3 upstream's translated to 1.0. */
export function resultToV1 (request: CheckedRequest, result: unknown, event: boolean, v03: boolean): unknown {
  if (!v03) return result
  return event ? v03EventToV1(result) : v03ResultToV1(request.method, result)
}

/** The attributes of an upstream call's CLIENT span (OpenTelemetry RPC conventions); the URL's host and port, never its path. */
export function clientAttributes (agentId: string, url: string, request: CheckedRequest): Attributes {
  return {
    [ATTR.rpcSystem]: 'jsonrpc',
    [ATTR.rpcService]: A2A_RPC_SERVICE,
    [ATTR.rpcMethod]: request.method,
    [ATTR.rpcJsonRpcVersion]: '2.0',
    [ATTR.agentId]: agentId,
    ...serverAttributes(url)
  }
}
