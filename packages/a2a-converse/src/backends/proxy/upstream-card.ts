/**
 * An upstream agent's card (proxy mode): read from `<url>/.well-known/agent-card.json` at start, re-read every
 * `ttlMs`, retried with a growing delay while the upstream is down. It gives the JSON-RPC endpoint (the card's
 * JSONRPC interface, protocolVersion 1.0) and what the gateway serves as the agent's card: the upstream's card
 * without its interfaces (the gateway's own are added), its signatures (the card changes, so they would not hold),
 * its converse entry (the gateway serves the extension) and the upstream's own push notifications (the gateway
 * delivers them itself when it is set up to, from what it relays: relayed-push-backend.ts), its other extensions
 * kept.
 *
 * A card that cannot be parsed is an UpstreamCardError naming the agent: at start it fails the start; later (a
 * refresh) it is logged and the last good card stays.
 */
import { Ajv, type ErrorObject } from 'ajv'
import { request, type Dispatcher } from 'undici'
import type { AgentCardInput } from '../../core/converse-extension.js'
import { CONVERSE_EXTENSION_URI } from '../../core/uri.js'
import type { ServiceLogger } from '../../protocol/backend.js'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'
import type { UpstreamCardSignatureError, UpstreamCardVerifier } from './upstream-card-keys.js'

/** The upstream's card could not be used; the message names the agent and what is wrong. */
export class UpstreamCardError extends ConverseError {
  readonly agentId: string
  constructor (agentId: string, problem: string) {
    super(ERROR_CODES.UPSTREAM_CARD, `agent "${agentId}": upstream card ${problem}`)
    this.agentId = agentId
  }
}

/** What the gateway keeps of a card it read. */
export interface UpstreamCard {
  /** The JSON-RPC endpoint (absolute URL). */
  endpoint: string
  /**
   * The A2A version the upstream is spoken to in: 1.0 (its card lists a JSON-RPC 1.0 interface), else 0.3 (a 0.3
   * card: `protocolVersion` 0.3.x and a JSON-RPC `url`), through the 0.3 translation (packages/a2a-converse/src/protocol/v0_3/).
   */
  protocolVersion: '1.0' | '0.3'
  /** The card the gateway serves (before its interfaces and the converse entry are added). */
  served: AgentCardInput
  capabilities: { streaming: boolean, extendedAgentCard: boolean }
  /** URIs of the upstream's extensions marked required. */
  requiredExtensions: string[]
}

export interface UpstreamCardSourceOptions {
  agentId: string
  /** The upstream's base URL. */
  url: string
  dispatcher: Dispatcher
  /** Headers sent with the card request (the configured upstream headers). */
  headers?: Record<string, string>
  /** Time budget of one read. */
  timeoutMs: number
  /** Re-read interval. */
  ttlMs: number
  /**
   * Name and description from the agents file win over the card's; `pushNotifications`: whether the gateway
   * delivers push notifications for the agent (relayed-push-backend.ts). Default false.
   */
  overrides?: { name?: string, description?: string, version?: string, pushNotifications?: boolean }
  log?: ServiceLogger
  /** Largest card accepted, bytes. Default 1 MiB. */
  maxBytes?: number
  /** First retry delay after a failed read; doubles up to 30 s. Default 500 ms. */
  retryMs?: number
  /**
   * Checks each card read before it is used (upstream-card-keys.ts): one that fails is not used, `problem()` says
   * why, and it is read again as an unreachable one is. Default: cards used unchecked.
   */
  verify?: UpstreamCardVerifier
}

export interface UpstreamCardSource {
  readonly agentId: string
  /** The last good card, undefined until one was read. */
  current (): UpstreamCard | undefined
  /** Why the last card read was not used (its signature, with `verify`), or undefined. */
  problem (): string | undefined
  /**
   * First read. Resolves once it is done: with the card, or undefined when the upstream could not be reached
   * (retried in the background). Rejects with UpstreamCardError when the card is there but unusable.
   */
  start (): Promise<UpstreamCard | undefined>
  /** Called at once with the current card, if one was read, then with every card read that differs from the last. */
  onChange (listener: (card: UpstreamCard) => void): void
  close (): void
}

const MAX_RETRY_MS = 30_000

const cardSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    version: { type: 'string' },
    supportedInterfaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url', 'protocolBinding'],
        properties: { url: { type: 'string', minLength: 1 }, protocolBinding: { type: 'string' }, protocolVersion: { type: 'string' } }
      }
    },
    capabilities: {
      type: 'object',
      properties: {
        streaming: { type: 'boolean' },
        pushNotifications: { type: 'boolean' },
        extendedAgentCard: { type: 'boolean' },
        extensions: {
          type: 'array',
          items: { type: 'object', required: ['uri'], properties: { uri: { type: 'string', minLength: 1 }, required: { type: 'boolean' } } }
        }
      }
    },
    skills: { type: 'array', items: { type: 'object' } }
  }
} as const

const validateCard = new Ajv({ allErrors: false }).compile(cardSchema)

/** Parses a card (JSON text) read from `cardUrl`; throws UpstreamCardError. */
export function parseUpstreamCard (agentId: string, cardUrl: string, text: string, overrides: UpstreamCardSourceOptions['overrides'] = {}): UpstreamCard {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new UpstreamCardError(agentId, `at ${cardUrl} is not JSON`)
  }
  if (!validateCard(parsed)) {
    // ajv sets `errors` whenever validation fails.
    const [error] = validateCard.errors as ErrorObject[]
    throw new UpstreamCardError(agentId, `at ${cardUrl}: ${error.instancePath === '' ? 'the card' : error.instancePath} ${error.message as string}`)
  }
  const card = parsed as Record<string, any>
  const jsonRpc = ((card.supportedInterfaces ?? []) as Array<Record<string, string>>).find((entry) =>
    entry.protocolBinding === 'JSONRPC' && /^1\.0(?:\.\d+)?$/.test(entry.protocolVersion ?? ''))
  const v03Url = jsonRpc === undefined ? v03JsonRpcUrl(card) : undefined
  if (jsonRpc === undefined && v03Url === undefined) {
    throw new UpstreamCardError(agentId, `at ${cardUrl} has no supportedInterfaces entry with protocolBinding JSONRPC and protocolVersion 1.0, nor a 0.3 JSON-RPC url`)
  }
  let endpoint: URL
  try {
    endpoint = new URL(jsonRpc?.url ?? v03Url as string, cardUrl)
  } catch {
    throw new UpstreamCardError(agentId, `at ${cardUrl}: the JSONRPC interface url is not a URL`)
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
    throw new UpstreamCardError(agentId, `at ${cardUrl}: the JSONRPC interface url must be http(s)`)
  }
  const capabilities = (card.capabilities ?? {}) as Record<string, any>
  const extensions = ((capabilities.extensions ?? []) as Array<{ uri: string, required?: boolean }>)
    .filter((entry) => entry.uri !== CONVERSE_EXTENSION_URI)
  // The upstream's endpoints (1.0 and 0.3 fields) are not the gateway's: its own are added.
  const {
    supportedInterfaces: _interfaces, signatures: _signatures, url: _url, preferredTransport: _preferred, additionalInterfaces: _additional,
    protocolVersion: _version, supportsAuthenticatedExtendedCard: _extended, ...rest
  } = card
  const served: AgentCardInput = {
    ...rest,
    name: overrides.name ?? card.name,
    description: overrides.description ?? card.description ?? '',
    version: overrides.version ?? card.version ?? '1.0.0',
    capabilities: { ...capabilities, pushNotifications: overrides.pushNotifications === true, extendedAgentCard: false, extensions }
  }
  return {
    endpoint: endpoint.href,
    protocolVersion: jsonRpc === undefined ? '0.3' : '1.0',
    served,
    capabilities: { streaming: capabilities.streaming === true, extendedAgentCard: false },
    requiredExtensions: extensions.filter((entry) => entry.required === true).map((entry) => entry.uri)
  }
}

/**
 * A 0.3 card's JSON-RPC URL (what the 0.3 SDK client reads): `url` when `preferredTransport` is JSONRPC (its
 * default), else a JSONRPC entry of `additionalInterfaces`; undefined for a card that is not 0.3's.
 */
function v03JsonRpcUrl (card: Record<string, any>): string | undefined {
  if (typeof card.protocolVersion !== 'string' || !/^0\.3(?:\.\d+)?$/.test(card.protocolVersion)) return undefined
  if (typeof card.url === 'string' && (card.preferredTransport ?? 'JSONRPC') === 'JSONRPC') return card.url
  const entry = (Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces as unknown[] : [])
    .find((item): item is { url: string } => typeof item === 'object' && item !== null &&
      (item as Record<string, unknown>).transport === 'JSONRPC' && typeof (item as Record<string, unknown>).url === 'string')
  return entry?.url
}

/** `<url>/.well-known/agent-card.json` (the base URL's path kept). */
export function cardUrlOf (url: string): string {
  return new URL('.well-known/agent-card.json', url.endsWith('/') ? url : `${url}/`).href
}

export function upstreamCardSource (options: UpstreamCardSourceOptions): UpstreamCardSource {
  const { agentId, dispatcher, timeoutMs, ttlMs, log } = options
  const cardUrl = cardUrlOf(options.url)
  const maxBytes = options.maxBytes ?? 1024 * 1024
  const firstRetryMs = options.retryMs ?? 500
  const listeners: Array<(card: UpstreamCard) => void> = []
  let card: UpstreamCard | undefined
  let text: string | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  let retryMs = firstRetryMs
  let problem: string | undefined

  /** The card's text, or a network / HTTP failure (thrown as is). */
  async function fetchText (): Promise<string> {
    const response = await request(cardUrl, {
      dispatcher,
      method: 'GET',
      headers: { ...options.headers, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs)
    })
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw Object.assign(new Error(`HTTP ${response.statusCode}`), { code: `HTTP_${response.statusCode}` })
    }
    let body = ''
    let size = 0
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length
      if (size > maxBytes) {
        response.body.destroy()
        throw new UpstreamCardError(agentId, `at ${cardUrl} exceeds ${maxBytes} bytes`)
      }
      body += (chunk as Buffer).toString('utf8')
    }
    return body
  }

  /** One read: true when a card was read (or an unusable one thrown), false when the upstream was not reached. */
  async function read (): Promise<boolean> {
    let fetched: string
    try {
      fetched = await fetchText()
    } catch (error) {
      if (error instanceof UpstreamCardError) throw error
      // undici's and the socket's codes are strings (ECONNREFUSED, HTTP_404); a timeout is a DOMException (its name).
      const err = error as { code?: unknown, name?: unknown }
      log?.warn({ agentId, code: typeof err.code === 'string' ? err.code : err.name }, 'upstream agent card not read; retrying')
      return false
    }
    if (fetched === text) return true
    const next = parseUpstreamCard(agentId, cardUrl, fetched, options.overrides)
    if (options.verify !== undefined) {
      try {
        await options.verify(JSON.parse(fetched))
      } catch (error) {
        // Not used; the last verified card (if any) stays. Read again as an unreachable upstream is.
        problem = (error as UpstreamCardSignatureError).message
        log?.error({ agentId, problem }, 'upstream agent card not used: its signature does not check out')
        return false
      }
    }
    problem = undefined
    text = fetched
    card = next
    for (const listener of listeners) listener(next)
    return true
  }

  function schedule (delayMs: number): void {
    if (closed) return
    timer = setTimeout(cycle, delayMs)
    // A pending refresh never keeps the process alive.
    timer.unref()
  }

  async function cycle (): Promise<void> {
    let ok: boolean
    try {
      ok = await read()
    } catch (error) {
      // A refresh that found an unusable card keeps the last good one.
      log?.error({ agentId, err: { message: (error as Error).message } }, 'upstream agent card unusable; keeping the last good card')
      ok = card !== undefined
    }
    if (ok) {
      retryMs = firstRetryMs
      schedule(ttlMs)
    } else {
      schedule(retryMs)
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
    }
  }

  return {
    agentId,
    current: () => card,
    problem: () => problem,
    async start () {
      const ok = await read()
      if (ok) {
        schedule(ttlMs)
      } else {
        schedule(retryMs)
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
      }
      return card
    },
    onChange (listener) {
      listeners.push(listener)
      if (card !== undefined) listener(card)
    },
    close () {
      closed = true
      clearTimeout(timer)
    }
  }
}
