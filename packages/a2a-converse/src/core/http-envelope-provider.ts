/**
 * `httpEnvelopeProvider({ url, timeoutMs })`: envelopes from an operator's HTTP service. For each outgoing agent
 * object of a request that activated the extension, POSTs the turn's context as JSON and reads a draft envelope.
 * Framework-free (undici, one pooled keep-alive Agent per provider).
 *
 * The same failure semantics as every provider (the decorator applies them):
 * - HTTP 200 with a JSON object → the draft, validated (members failing the schema dropped: `invalid`);
 * - HTTP 204 or 404 → nothing recorded for this object (`not_recorded`);
 * - anything else (another status, a body that is not JSON, no answer within `timeoutMs`, a refused connection)
 *   → `failed`.
 *
 * The POST body: `{ agentId, contextId?, taskId?, kind, object, requestMessage?, requestId?, activated }`
 * (`kind`: message | status | artifact; `object`: the A2A object as it goes on the wire, without an envelope).
 */
import { ATTR, serverAttributes } from '../telemetry/attributes.js'
import { inSpan, injectTraceHeaders, SpanKind, type Context, type Span } from '../telemetry/tracing.js'
import { Agent, request, type Dispatcher } from 'undici'
import type { EnvelopeDraft } from './envelope.js'
import type { EnvelopeContext, EnvelopeProvider } from './envelope-provider.js'
import { InvalidOptionError, ConverseError, ERROR_CODES } from './errors.js'
import { stripEnvelope } from './decorate.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'

export interface HttpEnvelopeProviderOptions {
  /** The operator's endpoint (http or https). */
  url: string
  /** Per object, in ms (1…60000). Default 1000. The decorator's own budget (providerTimeoutMs) also applies. */
  timeoutMs?: number
  /** Added to every POST (an API key, say). */
  headers?: Record<string, string>
  /** Largest reply accepted, in bytes. Default 64 KiB. */
  maxResponseBytes?: number
  /** Default: a new undici Agent (keep-alive). */
  dispatcher?: Dispatcher
}

export interface HttpEnvelopeProvider extends EnvelopeProvider {
  /** Closes the provider's connections (its own dispatcher only). */
  close (): Promise<void>
}

/** The provider's service answered something that is not an envelope. */
export class EnvelopeServiceError extends ConverseError {
  /** What went wrong: `HTTP_<status>`, `TOO_LARGE` or `NOT_JSON`. */
  readonly reason: string
  constructor (reason: string, message: string) {
    super(ERROR_CODES.ENVELOPE_SERVICE, message)
    this.reason = reason
  }
}

export function httpEnvelopeProvider (options: HttpEnvelopeProviderOptions): HttpEnvelopeProvider {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('httpEnvelopeProvider', 'needs { url }')
  const { url } = options
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) throw new InvalidOptionError('url', 'must be an http(s) URL')
  const timeoutMs = options.timeoutMs ?? 1000
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new InvalidOptionError('timeoutMs', 'must be an integer between 1 and 60000')
  }
  const maxBytes = options.maxResponseBytes ?? 64 * 1024
  const headers = { ...options.headers, 'content-type': 'application/json', accept: 'application/json' }
  const dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connect: { timeout: timeoutMs } })

  /** One POST in a CLIENT span (`converse.envelope_provider`), carrying its trace context. */
  async function envelope (context: EnvelopeContext): Promise<EnvelopeDraft | undefined> {
    return await inSpan('converse.envelope_provider POST', SpanKind.CLIENT, { [ATTR.httpMethod]: 'POST', [ATTR.agentId]: context.agentId, ...serverAttributes(url) },
      async (span, spanContext) => await post(context, span, spanContext), { parent: context.traceContext })
  }

  async function post (context: EnvelopeContext, span: Span, spanContext: Context): Promise<EnvelopeDraft | undefined> {
    const body = JSON.stringify({
      agentId: context.agentId,
      contextId: context.contextId,
      taskId: context.taskId,
      kind: context.kind,
      // What the service sees is the object without any envelope (the upstream's own, dropped or invalid).
      object: stripEnvelope(context.object),
      requestMessage: context.requestMessage,
      requestId: context.requestId,
      activated: context.activated
    })
    const response = await request(url, {
      dispatcher, method: 'POST', headers: injectTraceHeaders({ ...headers }, spanContext), body, signal: AbortSignal.timeout(timeoutMs)
    })
    span.setAttribute(ATTR.httpStatusCode, response.statusCode)
    if (response.statusCode === 204 || response.statusCode === 404) {
      await response.body.dump()
      return undefined
    }
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new EnvelopeServiceError(`HTTP_${response.statusCode}`, `envelope service answered HTTP ${response.statusCode}`)
    }
    let text = ''
    for await (const chunk of response.body) {
      text += (chunk as Buffer).toString('utf8')
      if (text.length > maxBytes) {
        response.body.destroy()
        throw new EnvelopeServiceError('TOO_LARGE', `envelope service reply exceeds ${maxBytes} bytes`)
      }
    }
    try {
      return JSON.parse(text) as EnvelopeDraft
    } catch {
      throw new EnvelopeServiceError('NOT_JSON', 'envelope service reply is not JSON')
    }
  }

  return {
    envelope,
    async close () {
      if (options.dispatcher === undefined) await dispatcher.close()
    }
  }
}

/**
 * The envelope source of a gateway with proxied agents: the envelope the agent attached itself under
 * `metadata[URI]` when there is one (local agents always attach theirs; an upstream may), else the agent's own
 * provider, else `fallback`, else nothing (`not_recorded`).
 */
export function perAgentEnvelopeProvider (providers: ReadonlyMap<string, EnvelopeProvider>, fallback?: EnvelopeProvider): EnvelopeProvider {
  return {
    envelope (context) {
      const attached = context.object.metadata?.[CONVERSE_EXTENSION_URI] as EnvelopeDraft | undefined
      if (attached !== undefined) return attached
      return (providers.get(context.agentId) ?? fallback)?.envelope(context)
    }
  }
}
