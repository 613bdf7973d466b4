/**
 * A task turn lock's wait as an INTERNAL span of its own (`converse.turn_lock wait`), a child of the span the call
 * context names (TRACE_CONTEXT_STATE): an earlier turn on the task still running, here or on another instance, shows
 * in the trace of the turn, or of the operator's reply, that waited; a wait past the lock's bound is an ERROR span
 * (`error.type` A2A_CONVERSE_TASK_BUSY). Without a recorded span around it, no span.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { ATTR } from '../telemetry/attributes.js'
import { inSpan, SpanKind, traceContextIn } from '../telemetry/tracing.js'
import { taskTurnKey, type TaskTurnLock, type TaskTurnRelease } from './task-turn-lock.js'

export async function acquireTurn (lock: TaskTurnLock, context: ServerCallContext, taskId: string, signal?: AbortSignal): Promise<TaskTurnRelease> {
  return await inSpan('converse.turn_lock wait', SpanKind.INTERNAL, { [ATTR.taskId]: taskId },
    async () => await lock.acquire(taskTurnKey(context, taskId), signal), { parent: traceContextIn(context.state), childOnly: true })
}
