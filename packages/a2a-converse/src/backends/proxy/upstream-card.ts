/**
 * An upstream agent's card (proxy mode), kept current: read from `<url>/.well-known/agent-card.json` at start,
 * re-read every `ttlMs`, retried with a growing delay while the upstream is down; with `verify`, each card read is
 * checked before it is used (upstream-card-keys.ts). What is kept of a card, and what makes one unusable, is
 * upstream-card-parse.ts's.
 *
 * A card that cannot be parsed is an UpstreamCardError naming the agent: at start it fails the start; later (a
 * refresh) it is logged and the last good card stays.
 */
import { request, type Dispatcher } from 'undici'
import type { ServiceLogger } from '../../protocol/backend.js'
import { cardUrlOf, parseUpstreamCard, UpstreamCardError, type UpstreamCard, type UpstreamCardOverrides } from './upstream-card-parse.js'
import type { UpstreamCardSignatureError, UpstreamCardVerifier } from './upstream-card-keys.js'

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
  /** What the agents file sets over the card's own (upstream-card-parse.ts). */
  overrides?: UpstreamCardOverrides
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

/** The card's text, or a network / HTTP failure (thrown as is); a card past `maxBytes` is an UpstreamCardError. */
async function fetchCardText (cardUrl: string, options: UpstreamCardSourceOptions, maxBytes: number): Promise<string> {
  const response = await request(cardUrl, {
    dispatcher: options.dispatcher,
    method: 'GET',
    headers: { ...options.headers, accept: 'application/json' },
    signal: AbortSignal.timeout(options.timeoutMs)
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
      throw new UpstreamCardError(options.agentId, `at ${cardUrl} exceeds ${maxBytes} bytes`)
    }
    body += (chunk as Buffer).toString('utf8')
  }
  return body
}

/** Why a card read does not verify (its signature), or undefined when it does or nothing is verified. */
async function verificationProblem (verify: UpstreamCardVerifier | undefined, text: string): Promise<string | undefined> {
  if (verify === undefined) return undefined
  try {
    await verify(JSON.parse(text))
    return undefined
  } catch (error) {
    return (error as UpstreamCardSignatureError).message
  }
}

/** The delay before the next read: `ttlMs` after a good one, else the retry delay, doubled each time up to 30 s. */
function nextReadDelay (ok: boolean, ttlMs: number, retryMs: number): { delayMs: number, retryMs: number } {
  return ok ? { delayMs: ttlMs, retryMs } : { delayMs: retryMs, retryMs: Math.min(retryMs * 2, MAX_RETRY_MS) }
}

export function upstreamCardSource (options: UpstreamCardSourceOptions): UpstreamCardSource {
  const { agentId, ttlMs, log } = options
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

  /** One read: true when a card was read (or an unusable one thrown), false when the upstream was not reached. */
  async function read (): Promise<boolean> {
    let fetched: string
    try {
      fetched = await fetchCardText(cardUrl, options, maxBytes)
    } catch (error) {
      if (error instanceof UpstreamCardError) throw error
      // undici's and the socket's codes are strings (ECONNREFUSED, HTTP_404); a timeout is a DOMException (its name).
      const err = error as { code?: unknown, name?: unknown }
      log?.warn({ agentId, code: typeof err.code === 'string' ? err.code : err.name }, 'upstream agent card not read; retrying')
      return false
    }
    if (fetched === text) return true
    const next = parseUpstreamCard(agentId, cardUrl, fetched, options.overrides)
    problem = await verificationProblem(options.verify, fetched)
    if (problem !== undefined) {
      // Not used; the last verified card (if any) stays. Read again as an unreachable upstream is.
      log?.error({ agentId, problem }, 'upstream agent card not used: its signature does not check out')
      return false
    }
    text = fetched
    card = next
    for (const listener of listeners) listener(next)
    return true
  }

  /** The next read, `ttlMs` after a good one or after the retry delay; a pending one never keeps the process alive. */
  function scheduleAfter (ok: boolean): void {
    const next = nextReadDelay(ok, ttlMs, ok ? firstRetryMs : retryMs)
    retryMs = next.retryMs
    if (closed) return
    timer = setTimeout(cycle, next.delayMs)
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
    scheduleAfter(ok)
  }

  return {
    agentId,
    current: () => card,
    problem: () => problem,
    async start () {
      scheduleAfter(await read())
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
