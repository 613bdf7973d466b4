/**
 * The conversation store's reads and writes a request makes, as INTERNAL spans of their own
 * (`converse.store conversation.<operation>`; its answer log's queries `converse.store answers.<operation>`), children
 * of the request's span, for a store whose calls are transactions (`traced`: PostgreSQL, embedded): there a turn's
 * conversation update (its row lock and commit) is most of where a turn spends its time, and shows in its trace. The
 * memory store's calls are not spans: each costs a few microseconds, a span ~20 µs recorded and exported
 * (docs/observability.md, measured). The store's methods take no call context (they serve the inbox and background
 * work too), so the caller names the parent: the executor the SDK call context's (TRACE_CONTEXT_STATE), a backend its
 * `BackendContext.traceContext`, the inbox the operator request's span. Without a recorded request span around it, no
 * span (as the task store's).
 */
import { ATTR, type Attributes } from '../telemetry/attributes.js'
import { inSpan, SpanKind, type Context } from '../telemetry/tracing.js'
import type { AnswerLog } from './answer-log.js'
import type { ConversationStore } from './conversation-store.js'

/** The store's calls that are spans: a turn's (`get`, `update`, `admit`) and an operator's (those, `exists`, `list`). */
export type ConversationOperation = 'get' | 'update' | 'admit' | 'exists' | 'list'

/**
 * `work` (one call of `store`) in its span under `parent` when the store is `traced`, else `work` as it is.
 * `contextId` is the client's (never the store's key, which holds the caller's id); absent for a call that names none.
 */
export function inConversationSpan<T> (
  store: ConversationStore, operation: ConversationOperation, agentId: string, contextId: string | undefined, parent: Context | undefined,
  work: () => Promise<T>
): Promise<T> {
  return inStoreSpan(store.traced, `conversation.${operation}`, agentId, contextId, parent, work)
}

/** The answer log's queries (the operator API's knowledge-gaps view) that are spans. */
export type AnswerLogOperation = 'series' | 'unanswered'

/** `work` (one query of `log`) in its span (`converse.store answers.<operation>`) under `parent` when the log is `traced`. */
export function inAnswerLogSpan<T> (log: AnswerLog, operation: AnswerLogOperation, agentId: string, parent: Context | undefined, work: () => Promise<T>): Promise<T> {
  return inStoreSpan(log.traced, `answers.${operation}`, agentId, undefined, parent, work)
}

function inStoreSpan<T> (
  traced: boolean | undefined, operation: string, agentId: string, contextId: string | undefined, parent: Context | undefined, work: () => Promise<T>
): Promise<T> {
  // Not async: an untraced store's call costs no promise more than the call's own.
  if (traced !== true) return work()
  const attributes: Attributes = { [ATTR.storeOperation]: operation, [ATTR.agentId]: agentId }
  if (contextId !== undefined) attributes[ATTR.contextId] = contextId
  return inSpan(`converse.store ${operation}`, SpanKind.INTERNAL, attributes, work, { parent, childOnly: true })
}
