/**
 * The service's streams (SendStreamingMessage, SubscribeToTask): opening one (its first event awaited, so an error
 * before it is a plain result), the events as the door reads them (decorated, observed, each in the call's span
 * context), and the open streams each caller may hold (MAX_STREAMS_PER_CALLER).
 */
import type { A2ABackend, BackendContext } from '../protocol/backend.js'
import type { CheckedRequest } from '../protocol/check-request.js'
import type { JsonRpcError } from '../protocol/errors.js'
import { tooManyStreams } from '../protocol/errors.js'
import { callerKey } from '../stores/caller-key.js'
import { answerAttributes, ATTR, summarizeResult, type AnswerSummary } from '../telemetry/attributes.js'
import { inSpan, runActive, SpanKind, startSpan, type Context, type Span } from '../telemetry/tracing.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { isStoreUnavailable, logError, noop, underSpan, type CallState } from './call-state.js'
import type { A2AResult, StreamItem } from './service.js'

/** Retry-After of a stream refused at the per-caller limit: streams end at no known time, so a short wait. */
export const STREAM_LIMIT_RETRY_AFTER_SEC = 5

const STOPPED = Symbol('stopped')

/** Open streams per caller key, at most `max` each (0: no limit); a key is dropped when its last stream ends. */
export interface StreamSlots {
  readonly max: number
  /**
   * A stream slot of `key`, or undefined when the key holds the most it may. Given back once, by whichever comes
   * first: the stream's end or the request's signal (a door that aborts without reading the events).
   */
  hold: (key: string, signal: AbortSignal) => (() => void) | undefined
}

export function streamSlots (max: number): StreamSlots {
  const openStreams = new Map<string, number>()

  function hold (key: string, signal: AbortSignal): (() => void) | undefined {
    if (max === 0) return noop
    const open = openStreams.get(key) ?? 0
    if (open >= max) return undefined
    openStreams.set(key, open + 1)
    let held = true
    const release = (): void => {
      if (!held) return
      held = false
      signal.removeEventListener('abort', release)
      const left = (openStreams.get(key) as number) - 1
      if (left === 0) openStreams.delete(key)
      else openStreams.set(key, left)
    }
    signal.addEventListener('abort', release, { once: true })
    return release
  }

  return { max, hold }
}

/** A streaming method: its first event is awaited here, so an error before it is a plain result. */
export async function openStream (
  backend: A2ABackend, rpc: CheckedRequest, context: BackendContext, headers: Record<string, string>,
  decorate: (result: unknown) => Promise<unknown>, state: CallState, slots: StreamSlots
): Promise<A2AResult> {
  const { signal, log } = context
  const release = slots.hold(callerKey(context.caller?.id, context.clientAddress), signal)
  if (release === undefined) {
    const error = tooManyStreams(slots.max, STREAM_LIMIT_RETRY_AFTER_SEC)
    logError(log, rpc.method, error)
    return { kind: 'error', method: rpc.method, headers: { ...headers, 'retry-after': String(STREAM_LIMIT_RETRY_AFTER_SEC) }, error, status: 429 }
  }
  const source = backend.stream(rpc, context)
  let first: IteratorResult<unknown, void> | typeof STOPPED
  try {
    // The backend's work up to its first event in a span of its own (later events: the server span's).
    first = await inSpan(`converse.backend ${rpc.method}`, SpanKind.INTERNAL, { [ATTR.agentId]: context.agentId },
      async (_span, backendSpan) => await underSpan(context, backendSpan, async () => await nextOrStop(source, signal)), { parent: state.traceContext })
    if (first !== STOPPED && first.done !== true) first = { done: false, value: await decorate(first.value) }
  } catch (error) {
    release()
    state.storeUnavailable = isStoreUnavailable(error)
    const rpcError = backend.toError(error, rpc, log)
    logError(log, rpc.method, rpcError)
    return { kind: 'error', method: rpc.method, headers, error: rpcError }
  }
  // The client left while the first event was decorated: as if it had left before.
  if (first !== STOPPED && signal.aborted) first = STOPPED
  if (first === STOPPED || first.done === true) {
    // The client left while the stream opened, or the backend had nothing to send.
    release()
    if (first === STOPPED) source.return?.().then(undefined, noop)
    return { kind: 'stream', method: rpc.method, headers, events: nothing() }
  }
  return { kind: 'stream', method: rpc.method, headers, events: events(backend, source, first.value, rpc, context, decorate, release, state) }
}

async function * events (
  backend: A2ABackend, source: AsyncIterator<unknown, void, undefined>, first: unknown,
  rpc: CheckedRequest, context: BackendContext, decorate: (result: unknown) => Promise<unknown>, release: () => void,
  state: CallState
): AsyncGenerator<StreamItem, void, undefined> {
  const { signal, log } = context
  let finished = false
  try {
    yield { kind: 'event', value: first }
    while (!signal.aborted) {
      const next = await nextOrStop(source, signal)
      if (next === STOPPED) break
      if (next.done === true) {
        finished = true
        break
      }
      const result = await decorate(next.value)
      if (signal.aborted) break
      yield { kind: 'event', value: result }
    }
  } catch (error) {
    if (!signal.aborted) {
      state.storeUnavailable = isStoreUnavailable(error)
      const rpcError = backend.toError(error, rpc, log)
      logError(log, rpc.method, rpcError)
      yield { kind: 'error', error: rpcError }
    }
  } finally {
    release()
    // A source still waiting is told to stop; its rejection, if any, is of no interest any more.
    if (!finished) source.return?.().then(undefined, noop)
  }
}

/**
 * A stream's events as the door reads them, each read in the call's span context (the backend's work for it is a
 * child of the server span). `end` is called once, with the last answer seen and the error that ended the stream,
 * when the stream ends, is left, or the request's signal aborts. A reply that says a person owns the conversation
 * and the agent said nothing (`suppressed`) opens a `converse.human_wait` span, ended by the next event or the end.
 */
export function observedStream (
  source: AsyncGenerator<StreamItem, void, undefined>, serverSpan: Span, spanContext: Context, signal: AbortSignal,
  end: (answer: AnswerSummary | undefined, error: JsonRpcError | undefined) => void
): AsyncIterable<StreamItem> {
  let answer: AnswerSummary | undefined
  let failure: JsonRpcError | undefined
  let humanWait: Span | undefined
  let ended = false
  const finish = (): void => {
    if (ended) return
    ended = true
    signal.removeEventListener('abort', finish)
    humanWait?.end()
    end(answer, failure)
  }
  signal.addEventListener('abort', finish, { once: true })
  // The client left while the stream opened: a door may never read it (the span and the stream count end now).
  if (signal.aborted) finish()
  const see = (item: StreamItem): void => {
    humanWait?.end()
    humanWait = undefined
    if (item.kind === 'error') {
      failure = item.error
      return
    }
    const summary = summarizeResult(item.value, CONVERSE_EXTENSION_URI)
    if (summary === undefined) return
    // Each member as the latest event that had it says.
    answer = { ...answer, ...summary }
    const ownership = summary.envelope?.ownership
    if (ownership?.state === 'human_owned' && ownership.suppressed) {
      humanWait = startSpan('converse.human_wait', SpanKind.INTERNAL, answerAttributes({ taskId: summary.taskId, contextId: summary.contextId }), spanContext).span
    }
  }
  const iterator: AsyncIterator<StreamItem, void, undefined> = {
    // The service's event generators never reject (a failure is their last item).
    async next () {
      const result = await runActive(serverSpan, spanContext, async () => await source.next())
      if (result.done === true) finish()
      else see(result.value)
      return result
    },
    async return () {
      finish()
      return await source.return()
    }
  }
  return { [Symbol.asyncIterator]: () => iterator }
}

/**
 * The next result, or STOPPED as soon as the signal aborts. A fresh listener per call (removed when it
 * settles), so a long stream keeps no reaction per event alive.
 */
function nextOrStop (source: AsyncIterator<unknown, void, undefined>, signal: AbortSignal): Promise<IteratorResult<unknown, void> | typeof STOPPED> {
  if (signal.aborted) return Promise.resolve(STOPPED)
  return new Promise((resolve, reject) => {
    const stop = (): void => resolve(STOPPED)
    signal.addEventListener('abort', stop, { once: true })
    source.next().then((result) => {
      signal.removeEventListener('abort', stop)
      resolve(result)
    }, (error: unknown) => {
      signal.removeEventListener('abort', stop)
      reject(error)
    })
  })
}

export async function * nothing (): AsyncGenerator<StreamItem, void, undefined> {}
