/**
 * The conversation store's reads and writes a request makes, as INTERNAL spans of their own
 * (`converse.store conversation.<operation>`), children of the request's span: on PostgreSQL or embedded, a turn's
 * conversation update (its row lock and transaction) is most of where a turn spends its time, and shows in its
 * trace. The conversation store's methods take no call context (they serve the inbox and background work too), so
 * the caller names the parent: the executor the SDK call context's (TRACE_CONTEXT_STATE), a backend its
 * `BackendContext.traceContext`. Without a recorded request span around it, no span (as the task store's).
 */
import { ATTR, type Attributes } from '../telemetry/attributes.js'
import { inSpan, SpanKind, type Context } from '../telemetry/tracing.js'

export type ConversationOperation = 'get' | 'update' | 'admit'

/**
 * `work` (one conversation store call) in its span under `parent`. `contextId` is the client's (never the store's
 * key, which holds the caller's id); absent for a call that names none.
 */
export async function inConversationSpan<T> (
  operation: ConversationOperation, agentId: string, contextId: string | undefined, parent: Context | undefined, work: () => Promise<T>
): Promise<T> {
  const attributes: Attributes = { [ATTR.storeOperation]: `conversation.${operation}`, [ATTR.agentId]: agentId }
  if (contextId !== undefined) attributes[ATTR.contextId] = contextId
  return await inSpan(`converse.store conversation.${operation}`, SpanKind.INTERNAL, attributes, work, { parent, childOnly: true })
}
