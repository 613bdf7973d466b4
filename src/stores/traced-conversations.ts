/**
 * The conversation store's reads and writes a request makes, as INTERNAL spans of their own
 * (`converse.store conversation.<operation>`), children of the request's span, for a store whose calls are
 * transactions (`traced`: PostgreSQL, embedded): there a turn's conversation update (its row lock and commit) is
 * most of where a turn spends its time, and shows in its trace. The memory store's calls are not spans: each costs a
 * few microseconds, a span ~20 µs recorded and exported (docs/observability.md, measured). The store's methods take
 * no call context (they serve the inbox and background work too), so the caller names the parent: the executor the
 * SDK call context's (TRACE_CONTEXT_STATE), a backend its `BackendContext.traceContext`. Without a recorded request
 * span around it, no span (as the task store's).
 */
import { ATTR, type Attributes } from '../telemetry/attributes.js'
import { inSpan, SpanKind, type Context } from '../telemetry/tracing.js'
import type { ConversationStore } from './conversation-store.js'

export type ConversationOperation = 'get' | 'update' | 'admit'

/**
 * `work` (one call of `store`) in its span under `parent` when the store is `traced`, else `work` as it is.
 * `contextId` is the client's (never the store's key, which holds the caller's id); absent for a call that names none.
 */
export function inConversationSpan<T> (
  store: ConversationStore, operation: ConversationOperation, agentId: string, contextId: string | undefined, parent: Context | undefined,
  work: () => Promise<T>
): Promise<T> {
  // Not async: an untraced store's call costs no promise more than the call's own.
  if (store.traced !== true) return work()
  const attributes: Attributes = { [ATTR.storeOperation]: `conversation.${operation}`, [ATTR.agentId]: agentId }
  if (contextId !== undefined) attributes[ATTR.contextId] = contextId
  return inSpan(`converse.store conversation.${operation}`, SpanKind.INTERNAL, attributes, work, { parent, childOnly: true })
}
