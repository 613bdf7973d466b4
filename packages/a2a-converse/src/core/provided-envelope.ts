/**
 * What an envelope provider's draft becomes on the wire: the draft validated against the envelope schema (invalid
 * members dropped and logged; a deep-frozen draft validated once), or the "failed" envelope when the provider
 * throws, rejects or is too slow. The decorator (decorate.ts) attaches the result.
 */
import type { EnvelopeLogger } from './decorate.js'
import { isDeepFrozen } from './deep-freeze.js'
import type { ConverseEnvelope } from './envelope.js'
import type { EnvelopeContext, EnvelopeProvider } from './envelope-provider.js'
import { ProviderTimeoutError } from './errors.js'
import { FAILED_ENVELOPE, normalizeEnvelope } from './normalize-envelope.js'

/**
 * The envelope the provider gives for one object: validated, or degraded to availability "failed" when the provider
 * throws, rejects or takes longer than `timeoutMs`. Synchronous when the provider is.
 */
export function providedEnvelope (
  provider: EnvelopeProvider, timeoutMs: number, context: EnvelopeContext, log: EnvelopeLogger | undefined
): ConverseEnvelope | Promise<ConverseEnvelope> {
  let draft
  try {
    draft = provider.envelope(context)
  } catch (error) {
    return failed(error, context, log)
  }
  if (draft !== null && typeof draft === 'object' && typeof (draft as Promise<unknown>).then === 'function') {
    return withTimeout(draft as Promise<unknown>, timeoutMs).then(
      (value) => validated(value, context, log),
      (error) => failed(error, context, log)
    )
  }
  return validated(draft, context, log)
}

/**
 * Valid drafts that are deep-frozen (what staticEnvelopeProvider returns, or any provider that freezes a shared
 * envelope) cannot change, so they are validated once: the same draft object maps to the same envelope.
 */
const validatedFrozen = new WeakMap<object, ConverseEnvelope>()

function validated (draft: unknown, context: EnvelopeContext, log: EnvelopeLogger | undefined): ConverseEnvelope {
  const frozen = draft !== null && typeof draft === 'object' && Object.isFrozen(draft)
  if (frozen) {
    const known = validatedFrozen.get(draft)
    if (known !== undefined) return known
  }
  const { envelope, invalid } = normalizeEnvelope(draft)
  if (invalid === undefined) {
    // Its members are the draft's own (deep-frozen) objects, so the envelope is deep-frozen once frozen itself.
    if (frozen && isDeepFrozen(draft)) validatedFrozen.set(draft, Object.freeze(envelope))
  } else {
    log?.warn({ agentId: context.agentId, kind: context.kind, members: invalid.members, errors: invalid.errors },
      'converse envelope provider returned an envelope that fails the schema; invalid members dropped')
  }
  return envelope
}

function failed (error: unknown, context: EnvelopeContext, log: EnvelopeLogger | undefined): ConverseEnvelope {
  const err = error as { name?: unknown, code?: unknown, reason?: unknown }
  log?.warn({ agentId: context.agentId, kind: context.kind, error: { name: err?.name, code: err?.code, reason: err?.reason } },
    'converse envelope provider failed; envelope degraded to availability "failed"')
  return FAILED_ENVELOPE
}

function withTimeout<T> (promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ProviderTimeoutError(timeoutMs)), timeoutMs)
    promise.then(
      (value) => { clearTimeout(timer); resolve(value) },
      (error) => { clearTimeout(timer); reject(error) }
    )
  })
}
