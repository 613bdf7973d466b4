/**
 * One proxied agent, built from its agents-file declaration: its undici Agent (keep-alive connections pooled per
 * origin, connect timeout), its card source (read at start, refreshed, retried while down) and its upstream
 * backend. Framework-free; the gateway's runtime builds one per agent declaring `upstream`.
 */
import { Agent, type Dispatcher } from 'undici'
import type { A2ABackend, ServiceLogger } from '../../protocol/backend.js'
import { upstreamBackend } from './upstream-backend.js'
import { upstreamCardSource, type UpstreamCardSource, type UpstreamCardSourceOptions } from './upstream-card.js'
import type { UpstreamCard } from './upstream-card-parse.js'
import type { UpstreamErrorDetails } from './upstream-errors.js'
import { upstreamCardVerifier, type UpstreamCardKeys } from './upstream-card-keys.js'
import type { SigningKey } from '../../auth/signing-key.js'
import { upstreamIdentity, type UpstreamIdentityDefinition } from './upstream-identity.js'

export type { UpstreamIdentityDefinition }

/** Where a proxied agent runs (proxy mode): another A2A 1.0 agent the gateway stands in front of. */
export interface UpstreamDefinition {
  /** The upstream's base URL: its card is read from <url>/.well-known/agent-card.json. */
  url: string
  /** Headers added to every upstream request (an API key, say). */
  headers?: Record<string, string>
  /** A call's whole exchange, a stream's response headers, a card read (ms). Default 30000. */
  timeoutMs?: number
  /** Time to open a connection (ms). Default 5000. */
  connectTimeoutMs?: number
  /** Longest wait for the next A2A event of a stream (ms; SSE comments do not count). Default 300000. */
  streamIdleTimeoutMs?: number
  /** How often the card is read again (ms). Default 300000. */
  cardTtlMs?: number
  /** Largest reply body or stream event (bytes). Default 4 MiB. */
  maxResponseBytes?: number
  /**
   * How much of an upstream JSON-RPC error reaches the caller: `code` (default: its code, a generic message, no
   * `data`) or `full` (as the upstream sent it). The original is logged at warn either way.
   */
  errorDetails?: UpstreamErrorDetails
  /** Who the upstream sees calling (docs/trust.md). Default `{ mode: 'none' }`: the gateway, by `headers`. */
  identity?: UpstreamIdentityDefinition
  /**
   * The keys the upstream's card must be signed with (a JWKS inline, or its URL, read with each card): a card that
   * does not verify is not used, the agent not ready until one does (docs/trust.md). Default: cards used unchecked.
   */
  cardKeys?: UpstreamCardKeys
}

export const UPSTREAM_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  connectTimeoutMs: 5_000,
  streamIdleTimeoutMs: 300_000,
  cardTtlMs: 300_000,
  maxResponseBytes: 4 * 1024 * 1024
})

/** Idle keep-alive connections to an upstream close after this long (ms). */
const KEEP_ALIVE_MS = 30_000

export interface UpstreamAgent {
  agentId: string
  backend: A2ABackend
  cards: UpstreamCardSource
  /** The card read at start; undefined when the upstream was down (read later, see cards.onChange). */
  initialCard: UpstreamCard | undefined
  close (): Promise<void>
}

export interface UpstreamAgentOptions {
  agentId: string
  upstream: UpstreamDefinition
  overrides?: UpstreamCardSourceOptions['overrides']
  log?: ServiceLogger
  /** Tests: another dispatcher (closed by its owner). Default: a new undici Agent. */
  dispatcher?: Dispatcher
  /** First retry delay of a card read (ms). Default 500. */
  cardRetryMs?: number
  /** What `identity: assertion` signs with: the gateway's key and its public URL (`iss`). Required by that mode. */
  assertions?: { key: SigningKey, issuer: string }
}

/**
 * Starts the card source (first read awaited) and builds the backend. Rejects with UpstreamCardError when the
 * upstream's card is there but unusable.
 */
export async function startUpstreamAgent (options: UpstreamAgentOptions): Promise<UpstreamAgent> {
  const { agentId, upstream } = options
  const settings = { ...UPSTREAM_DEFAULTS, ...upstream }
  const owned = options.dispatcher === undefined
  const dispatcher = options.dispatcher ?? new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    keepAliveTimeout: KEEP_ALIVE_MS,
    // Per request timeouts are set by the backend; these bound a request that sets none.
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.streamIdleTimeoutMs
  })
  // Open requests were aborted by their callers when the gateway began closing; nothing is left to finish.
  const release = async (): Promise<void> => { if (owned) await dispatcher.destroy() }
  let identity
  try {
    identity = upstreamIdentity(upstream.identity, { agentId, url: upstream.url, dispatcher, timeoutMs: settings.timeoutMs, assertions: options.assertions })
  } catch (error) {
    await release()
    throw error
  }
  const cards = upstreamCardSource({
    agentId,
    url: upstream.url,
    dispatcher,
    headers: upstream.headers,
    timeoutMs: settings.timeoutMs,
    ttlMs: settings.cardTtlMs,
    overrides: options.overrides,
    log: options.log,
    retryMs: options.cardRetryMs,
    verify: upstream.cardKeys === undefined ? undefined : upstreamCardVerifier(upstream.cardKeys, { dispatcher, timeoutMs: settings.timeoutMs })
  })
  const close = async (): Promise<void> => {
    cards.close()
    await release()
  }
  let initialCard: UpstreamCard | undefined
  try {
    initialCard = await cards.start()
  } catch (error) {
    await close()
    throw error
  }
  const backend = upstreamBackend({
    agentId,
    card: cards.current,
    dispatcher,
    headers: upstream.headers,
    timeoutMs: settings.timeoutMs,
    streamIdleTimeoutMs: settings.streamIdleTimeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
    errorDetails: upstream.errorDetails,
    identity
  })
  return { agentId, backend, cards, initialCard, close }
}
