/**
 * What the A2A service tells an observer (the gateway's metrics) about each call. Labels a metric may take from it are
 * bounded by whoever records: the agent, the binding and the method are the caller's words until checked.
 */
import type { AnswerSummary } from './attributes.js'

export interface CallRecord {
  agentId: string
  /** `jsonrpc`, `http+json`, `grpc`, `jsonrpc-0.3`, `http+json-0.3`, `mcp`, or `direct` (a call made in code). */
  binding: string
  method: string
  /** The error's JSON-RPC code; undefined for a result. */
  errorCode?: number
  /** The HTTP status the error travels with, when it is not the code's (401, 429, 503, a wire error's). */
  status?: number
  /** From the call to its result; a stream's to its end. */
  durationMs: number
  /** A turn's answer (SendMessage, SendStreamingMessage: a stream's last), when the result carried one. */
  answer?: AnswerSummary
  /** The backend failed because the state store was unreachable. */
  storeUnavailable: boolean
}

export interface CallObserver {
  callEnded (record: CallRecord): void
  streamOpened (agentId: string, binding: string): void
  streamClosed (agentId: string, binding: string): void
}
