/**
 * The one way of writing a task update from outside an execution: a person's reply, a release, the close of a
 * task a newer turn superseded, a cancel that found no running execution.
 *
 * The update goes through the SDK's ResultManager (its merge rules: history appended, a task already over stays
 * over), then is published on the task event hub, so every open stream of the task — on every instance, for a
 * shared hub — receives it, and ends with it when it ends the task. There is no SDK bus to settle: the request handler
 * keeps none past its execution (packages/a2a-converse/src/backends/local/execution-buses.ts).
 */
import { StreamResponse, type TaskArtifactUpdateEvent, type TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, ResultManager, ServerCallContext, type AgentExecutionEvent, type TaskStore } from '@a2a-js/sdk/server'
import type { TaskEventHub } from './task-event-hub.js'

export interface TaskWriter {
  /** Stores the update, then publishes it. */
  write (update: TaskStatusUpdateEvent | TaskArtifactUpdateEvent, context?: ServerCallContext): Promise<void>
  /** Stores and publishes what an executor published on a bus outside an execution (status and artifact updates). */
  writeEvents (events: readonly AgentExecutionEvent[], context?: ServerCallContext): Promise<void>
}

export function createTaskWriter (taskStore: TaskStore, events: Pick<TaskEventHub, 'publish'> | undefined): TaskWriter {
  async function write (update: TaskStatusUpdateEvent | TaskArtifactUpdateEvent, context = new ServerCallContext()): Promise<void> {
    const status = 'status' in update
    await new ResultManager(taskStore, context).processEvent(status ? AgentEvent.statusUpdate(update) : AgentEvent.artifactUpdate(update))
    const payload = status
      ? { $case: 'statusUpdate' as const, value: update }
      : { $case: 'artifactUpdate' as const, value: update }
    await events?.publish(update.taskId, StreamResponse.toJSON({ payload }) as Record<string, unknown>)
  }

  return {
    write,
    async writeEvents (published, context) {
      for (const event of published) {
        if (event.kind === 'statusUpdate' || event.kind === 'artifactUpdate') await write(event.data, context)
      }
    }
  }
}
