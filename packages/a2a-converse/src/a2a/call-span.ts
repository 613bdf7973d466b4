/**
 * A call in its SERVER span (OpenTelemetry RPC conventions: `lf.a2a.v1.A2AService/<method>`), a child of the trace
 * the request's `traceparent` names: the span ends with the result, a stream's with the stream, and the call's
 * observer is told then. Kept apart from what the call decides, so the service's factory reads as wiring.
 */
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { JsonRpcErrorCode, type JsonRpcError } from '../protocol/errors.js'
import { isA2AMethod } from '../protocol/methods.js'
import type { ServiceLogger } from '../protocol/backend.js'
import { GRPC_STATUS, grpcStatusOf } from '../protocol/grpc-status.js'
import { A2A_RPC_SERVICE, answerAttributes, ATTR, summarizeResult, type AnswerSummary, type Attributes } from '../telemetry/attributes.js'
import type { CallObserver } from '../telemetry/observer.js'
import { extractTraceContext, runActive, SpanKind, SpanStatusCode, startSpan, type Span } from '../telemetry/tracing.js'
import type { CallState } from './call-state.js'
import type { A2ACall, A2AResult, StreamItem } from './service.js'
import { observedStream } from './streams.js'

/** Methods whose result holds a turn's answer (counted as answers) or a task (its ids and state on the span). */
const TURN_METHODS: ReadonlySet<string> = new Set(['SendMessage', 'SendStreamingMessage'])
const TASK_RESULT_METHODS: ReadonlySet<string> = new Set(['GetTask', 'CancelTask'])

/** rpc.system of a binding's server span (OpenTelemetry RPC conventions; HTTP+JSON has no registered value). */
function rpcSystemOf (binding: string): string {
  if (binding === 'grpc') return 'grpc'
  if (binding.startsWith('http+json')) return 'a2a_http_json'
  return 'jsonrpc'
}

/** The span's attributes at its start: the RPC conventions' and the call's agent ('unknown' when not served). */
function callAttributes (binding: string, method: string, agentId: string): Attributes {
  const attributes: Attributes = {
    [ATTR.rpcSystem]: rpcSystemOf(binding),
    [ATTR.rpcService]: A2A_RPC_SERVICE,
    [ATTR.rpcMethod]: method,
    [ATTR.binding]: binding,
    [ATTR.agentId]: agentId
  }
  if (attributes[ATTR.rpcSystem] === 'jsonrpc') attributes[ATTR.rpcJsonRpcVersion] = '2.0'
  return attributes
}

/** What a call's span and observer are told about the call (the span's name and attributes come from it). */
interface CallFacts {
  request: A2ACall
  binding: string
  method: string
  agentId: string
  started: number
  state: CallState
  observer: CallObserver | undefined
}

/** Ends the call's span with its outcome and tells the observer (the answer only for a turn's methods). */
function endCall (span: Span, facts: CallFacts, answer: AnswerSummary | undefined, error: JsonRpcError | undefined, status: number | undefined): void {
  const { binding, observer } = facts
  if (answer !== undefined) span.setAttributes(answerAttributes(answer))
  if (error !== undefined) {
    span.setAttribute(ATTR.rpcJsonRpcErrorCode, error.code)
    if (error.code === JsonRpcErrorCode.InternalError || (status ?? 0) >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
  }
  if (status !== undefined) span.setAttribute(ATTR.httpStatusCode, status)
  // The gRPC binding's own status (required by the RPC conventions for gRPC): OK, or the one the error travels as.
  if (binding === 'grpc') span.setAttribute(ATTR.rpcGrpcStatusCode, error === undefined ? GRPC_STATUS.OK : grpcStatusOf(error, status))
  span.end()
  if (observer === undefined) return
  tell(facts.request.log, () => {
    observer.callEnded({
      agentId: facts.agentId,
      binding,
      method: facts.method,
      errorCode: error?.code,
      status,
      durationMs: performance.now() - facts.started,
      answer: TURN_METHODS.has(facts.method) ? answer : undefined,
      storeUnavailable: facts.state.storeUnavailable
    })
  })
}

/** `dispatch` of one call in the call's span; `served`: whether the call's agent is served (else 'unknown' on the span). */
export async function spannedCall (
  request: A2ACall, served: boolean, observer: CallObserver | undefined, dispatch: (request: A2ACall, state: CallState) => Promise<A2AResult>
): Promise<A2AResult> {
  const started = performance.now()
  const binding = request.binding ?? 'direct'
  const method = isA2AMethod(request.method) ? request.method : 'unknown'
  const agentId = served ? request.agentId : 'unknown'
  const { span, context: spanContext } = startSpan(`${A2A_RPC_SERVICE}/${method}`, SpanKind.SERVER, callAttributes(binding, method, agentId), extractTraceContext(request.headers))
  const state: CallState = { storeUnavailable: false, traceContext: spanContext }
  const result = await runActive(span, spanContext, dispatch, request, state)
  const facts: CallFacts = { request, binding, method, agentId, started, state, observer }
  switch (result.kind) {
    case 'value':
      endCall(span, facts, summaryOf(method, result.value), undefined, undefined)
      return result
    case 'error':
      endCall(span, facts, undefined, result.error, result.status)
      return result
    default:
      if (observer !== undefined) tell(request.log, () => { observer.streamOpened(agentId, binding) })
      return {
        ...result,
        // The streams made here are generators (openStream: `events`, `nothing`).
        events: observedStream(result.events as AsyncGenerator<StreamItem, void, undefined>, span, spanContext, request.signal, (answer, error) => {
          if (observer !== undefined) tell(request.log, () => { observer.streamClosed(agentId, binding) })
          endCall(span, facts, answer, error, undefined)
        })
      }
  }
}

/** The summary of a value result: a turn's answer, or a task's ids and state. */
function summaryOf (method: string, value: unknown): AnswerSummary | undefined {
  if (TURN_METHODS.has(method)) return summarizeResult(value, CONVERSE_EXTENSION_URI)
  if (TASK_RESULT_METHODS.has(method)) return summarizeResult({ task: value }, CONVERSE_EXTENSION_URI)
  return undefined
}

/** Tells the call's observer: what it throws is logged, never the call's failure (it runs inside the call). */
function tell (log: ServiceLogger | undefined, what: () => void): void {
  try {
    what()
  } catch (error) {
    log?.error({ err: error }, 'the A2A call observer threw; the call is answered as if it had not')
  }
}
