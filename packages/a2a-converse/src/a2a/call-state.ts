/**
 * What a call's steps share (service.ts and streams.ts): what the call learns on its way, how an error result is
 * logged, and the backend's span as its trace context.
 */
import type { BackendContext, ServiceLogger } from '../protocol/backend.js'
import type { JsonRpcError } from '../protocol/errors.js'
import { ERROR_CODES, isConverseError } from '../core/errors.js'
import type { Context } from '../telemetry/tracing.js'

/** What a call learns on its way, for its span and its observer. */
export interface CallState {
  storeUnavailable: boolean
  /** The call's span's context: what the backend's requests and the envelope provider's carry out. */
  traceContext: Context
}

/** The backend failed because the state store is unreachable (StoreUnavailableError, by its code). */
export function isStoreUnavailable (error: unknown): boolean {
  return isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE)
}

/**
 * `work` with the backend's trace context set to its span's (what its store spans, upstream calls and webhook POSTs
 * hang under: they take it from the context, not from an active one, which the gateway app does not have), then
 * back to the call's (a stream's later events).
 */
export async function underSpan<T> (context: BackendContext, backendSpan: Context, work: () => Promise<T>): Promise<T> {
  const outer = context.traceContext
  context.traceContext = backendSpan
  try {
    return await work()
  } finally {
    context.traceContext = outer
  }
}

/** An error result is logged with its method and code (never the message text). */
export function logError (log: ServiceLogger | undefined, method: unknown, error: JsonRpcError): void {
  log?.info({ method: typeof method === 'string' ? method.slice(0, 64) : undefined, code: error.code }, 'A2A error reply')
}

export function noop (): void {}
