/**
 * A task store whose loads and saves are INTERNAL spans of their own (`converse.store load` / `save`), children of
 * the request's span: where a turn spends its time in the store shows in its trace, whatever the store (memory,
 * embedded, PostgreSQL, a user's own). Chosen over @opentelemetry/instrumentation-pg: that one needs the SDK's
 * module hooks loaded before pg (not possible for a plugin user's process or under ESM without a loader flag), sees
 * the embedded database (PGlite) and memory stores not at all, and names SQL statements rather than what the
 * gateway did. Everything else of the store (save signals, its own methods) is the store's, untouched.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import { ATTR } from '../telemetry/attributes.js'
import { inSpan, SpanKind, traceContextIn, type Context } from '../telemetry/tracing.js'
import { decorateTaskStore } from './decorate-task-store.js'

/**
 * Under the active span, else the one the call context names (TRACE_CONTEXT_STATE: the gateway app registers no
 * context manager). A load or save outside any recorded request's span (a background job's, an unsampled call's)
 * gets no span.
 */
function under (context: { state?: ReadonlyMap<string, unknown> } | undefined): { parent: Context | undefined, childOnly: true } {
  return { parent: traceContextIn(context?.state), childOnly: true }
}

export function tracedTaskStore<S extends TaskStore> (store: S, agentId: string): S {
  const load: TaskStore['load'] = async (taskId, context) =>
    await inSpan('converse.store load', SpanKind.INTERNAL, { [ATTR.storeOperation]: 'load', [ATTR.agentId]: agentId, [ATTR.taskId]: taskId },
      async () => await store.load(taskId, context), under(context))
  const save: TaskStore['save'] = async (task, context) => {
    await inSpan('converse.store save', SpanKind.INTERNAL, { [ATTR.storeOperation]: 'save', [ATTR.agentId]: agentId, [ATTR.taskId]: task.id },
      async () => { await store.save(task, context) }, under(context))
  }
  return decorateTaskStore(store, { load, save })
}
