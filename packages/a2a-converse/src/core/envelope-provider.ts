import type { Context } from '../telemetry/tracing.js'
import type { EnvelopeDraft } from './envelope.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'
import type { EnvelopeTarget, TargetKind, WireMessage } from './wire.js'
import { deepFreeze } from './deep-freeze.js'

/** What the decorator knows about the turn when it asks for an envelope. */
export interface EnvelopeContext {
  agentId: string
  contextId?: string
  taskId?: string
  /** The request's message (SendMessage / SendStreamingMessage); absent for GetTask, ListTasks, … */
  requestMessage?: WireMessage
  /** The JSON-RPC request id. */
  requestId?: string | number | null
  /** The outgoing agent object the envelope is for. */
  object: EnvelopeTarget
  kind: TargetKind
  /** Every extension URI activated for this request. */
  activated: readonly string[]
  /**
   * The call's OpenTelemetry context (its SERVER span), for a provider that makes requests of its own: their
   * `traceparent` (`propagation.inject(traceContext, headers)`) continues the caller's trace, sampled or not.
   */
  traceContext?: Context
}

/**
 * The pluggable source of envelopes. Called once per outgoing agent object of a request that activated the
 * extension; may answer synchronously or with a promise. Returning undefined means "nothing recorded":
 * the envelope then says `answerCoverage.availability: not_recorded`.
 */
export interface EnvelopeProvider {
  envelope (context: EnvelopeContext): EnvelopeDraft | undefined | Promise<EnvelopeDraft | undefined>
}

/**
 * Reads the envelope the agent attached itself under `metadata[URI]`: an @a2a-js/sdk executor just sets
 * metadata on the Message / Artifact it publishes. The stored copy is re-validated on the way out.
 */
export function attachedEnvelopeProvider (): EnvelopeProvider {
  return {
    envelope ({ object }) {
      return object.metadata?.[CONVERSE_EXTENSION_URI] as EnvelopeDraft | undefined
    }
  }
}

/** Wraps a plain function (sync or async) as a provider. */
export function functionEnvelopeProvider (
  fn: (context: EnvelopeContext) => EnvelopeDraft | undefined | Promise<EnvelopeDraft | undefined>
): EnvelopeProvider {
  if (typeof fn !== 'function') throw new TypeError('functionEnvelopeProvider expects a function')
  return { envelope: fn }
}

/** Always the same envelope: for tests and fixed demos. */
export function staticEnvelopeProvider (envelope: EnvelopeDraft): EnvelopeProvider {
  // A private, deep-frozen copy: it cannot change, so the decorator validates it once, not per reply.
  const fixed = deepFreeze(structuredClone(envelope))
  return { envelope: () => fixed }
}
