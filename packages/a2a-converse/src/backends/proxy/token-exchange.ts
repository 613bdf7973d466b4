/**
 * `upstream.identity.mode: exchange` (docs/trust.md): the caller's bearer token exchanged at a token endpoint for one
 * the upstream takes, by RFC 8693 OAuth 2.0 Token Exchange — a form-encoded POST (§2.1) with the gateway's client
 * credentials (HTTP Basic, RFC 6749 §2.3.1), the answer read as §2.2.1 says, a refusal as §2.2.2 / RFC 6749 §5.2.
 * The exchanged token is kept per caller until a fifth of its life is left (`expires_in`; without one it is not
 * kept), never handed to another caller, at most `maxCached` callers (least recently used dropped). A failure is a
 * -32050 naming what failed, never the secret, the caller's token or the endpoint's wording.
 */
import { request as undiciRequest, type Dispatcher } from 'undici'
import type { Caller } from '../../protocol/backend.js'
import { callerBearerToken } from '../../auth/caller-credential.js'
import { upstreamUnavailable, UpstreamError } from './upstream-errors.js'

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
const TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:'
/** Callers whose exchanged token is kept per upstream by default. */
export const DEFAULT_EXCHANGED_CACHE = 10_000
/** Largest token endpoint answer read (bytes). */
const MAX_ANSWER_BYTES = 64 * 1024
/** RFC 6749 §5.2: `error` is printable ASCII without `"` and `\`. */
const ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/

export interface TokenExchangeOptions {
  agentId: string
  /** The token endpoint (https, or http on a trusted network). */
  tokenEndpoint: string
  /** The gateway's client at the token endpoint. */
  clientId: string
  clientSecret: string
  /** RFC 8693 §2.1's `audience`, `resource` and `scope`, each sent when set. */
  audience?: string
  resource?: string
  scope?: string
  /** What the caller's token is to the endpoint: `access_token` (default) or `jwt`. */
  subjectTokenType?: 'access_token' | 'jwt'
  dispatcher: Dispatcher
  /** A whole exchange (ms). */
  timeoutMs: number
  maxCached?: number
  /** Tests: the clock (ms). */
  now?: () => number
}

export interface TokenExchange {
  /** The upstream's token for the caller: exchanged now, or the caller's own kept one. */
  tokenFor: (caller: Caller | undefined) => Promise<string>
}

/** The refusal when the caller has no token of its own to forward or exchange (an API key, a walk-in). */
export function noCallerToken (agentId: string): UpstreamError {
  return new UpstreamError(upstreamUnavailable(agentId, 'it takes the caller\'s own bearer token (a JWT), and this request has none'), 'NO_CALLER_TOKEN')
}

/** RFC 8693 §2.1's form: the caller's token as the subject, an access token asked for, audience/resource/scope when set. */
function exchangeForm (subjectToken: string, options: TokenExchangeOptions): string {
  const fields = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subjectToken,
    subject_token_type: TOKEN_TYPE + (options.subjectTokenType ?? 'access_token'),
    requested_token_type: `${TOKEN_TYPE}access_token`
  })
  for (const name of ['audience', 'resource', 'scope'] as const) {
    const value = options[name]
    if (value !== undefined) fields.set(name, value)
  }
  return fields.toString()
}

/** The client's HTTP Basic credentials (RFC 6749 §2.3.1: each part form-encoded first). */
function basicAuthorization (clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`
}

function exchangeFailed (agentId: string, detail: string, cause: string): UpstreamError {
  return new UpstreamError(upstreamUnavailable(agentId, `the token exchange ${detail}`), cause)
}

/** The endpoint's answer: status and JSON body (undefined when not JSON, or too large). */
async function postExchange (
  options: TokenExchangeOptions, authorization: string, subjectToken: string
): Promise<{ status: number, answer: Record<string, unknown> | undefined }> {
  const { timeoutMs } = options
  let response: Dispatcher.ResponseData
  let text = ''
  try {
    response = await undiciRequest(options.tokenEndpoint, {
      dispatcher: options.dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization },
      body: exchangeForm(subjectToken, options),
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs
    })
    for await (const chunk of response.body) {
      text += (chunk as Buffer).toString('utf8')
      if (text.length > MAX_ANSWER_BYTES) {
        response.body.destroy()
        return { status: response.statusCode, answer: undefined }
      }
    }
  } catch {
    throw exchangeFailed(options.agentId, 'failed: the token endpoint cannot be reached', 'EXCHANGE_UNREACHABLE')
  }
  try {
    const answer = JSON.parse(text) as unknown
    return { status: response.statusCode, answer: answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? answer as Record<string, unknown> : undefined }
  } catch {
    return { status: response.statusCode, answer: undefined }
  }
}

/**
 * RFC 8693 §2.2 read from the endpoint's answer: the issued token and its life (seconds; undefined when the endpoint
 * gave none); a refusal (§2.2.2) or anything else is an UpstreamError naming what failed.
 */
function issuedToken (agentId: string, status: number, answer: Record<string, unknown> | undefined): { token: string, lifeSec: number | undefined } {
  if (status !== 200) {
    const code = typeof answer?.error === 'string' && ERROR_CODE.test(answer.error) ? answer.error : undefined
    throw code === undefined
      ? exchangeFailed(agentId, `failed (HTTP ${status})`, `EXCHANGE_HTTP_${status}`)
      : exchangeFailed(agentId, `was refused (${code})`, `EXCHANGE_${code}`)
  }
  const token = answer?.access_token
  const type = answer?.token_type
  if (typeof token !== 'string' || token === '' || typeof answer?.issued_token_type !== 'string' || typeof type !== 'string') {
    throw exchangeFailed(agentId, 'failed: not a token exchange response', 'EXCHANGE_INVALID')
  }
  // Sent as a bearer token: a token bound to a key (DPoP, …) cannot be used so.
  if (type.toLowerCase() !== 'bearer' && type !== 'N_A') throw exchangeFailed(agentId, `failed: a token of type "${type.slice(0, 32)}"`, 'EXCHANGE_TOKEN_TYPE')
  const expiresIn = answer.expires_in
  return { token, lifeSec: typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : undefined }
}

export function createTokenExchange (options: TokenExchangeOptions): TokenExchange {
  const { agentId } = options
  const now = options.now ?? Date.now
  const maxCached = options.maxCached ?? DEFAULT_EXCHANGED_CACHE
  const authorization = basicAuthorization(options.clientId, options.clientSecret)
  const kept = new Map<string, { token: Promise<string>, renewAt: number }>()

  async function exchange (subjectToken: string): Promise<{ token: string, lifeSec: number | undefined }> {
    const { status, answer } = await postExchange(options, authorization, subjectToken)
    return issuedToken(agentId, status, answer)
  }

  return {
    async tokenFor (caller) {
      const subjectToken = callerBearerToken(caller)
      if (caller === undefined || subjectToken === undefined) throw noCallerToken(agentId)
      const at = now()
      const entry = kept.get(caller.id)
      if (entry !== undefined && at < entry.renewAt) {
        // Least recently used last out: a hit moves to the end.
        kept.delete(caller.id)
        kept.set(caller.id, entry)
        return await entry.token
      }
      kept.delete(caller.id)
      if (kept.size >= maxCached) kept.delete(kept.keys().next().value as string)
      const exchanged = exchange(subjectToken)
      const pending = { token: exchanged.then(({ token }) => token), renewAt: Number.POSITIVE_INFINITY }
      kept.set(caller.id, pending)
      // Concurrent calls of the caller share the exchange; once done it is kept until a fifth of its life is left,
      // unless it failed or stated no life (then the next call exchanges again).
      const drop = (): void => { if (kept.get(caller.id) === pending) kept.delete(caller.id) }
      exchanged.then(({ lifeSec }) => {
        if (lifeSec === undefined) drop()
        else pending.renewAt = at + lifeSec * 800
      }).catch(drop)
      return await pending.token
    }
  }
}
