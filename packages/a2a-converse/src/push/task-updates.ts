/**
 * What a task save reports to webhooks: the difference between the task as it was stored and as it is saved now,
 * as A2A 1.0 StreamResponse objects (§4.3.3): a `statusUpdate` when the status changed (a reply, a routine waiting
 * for input, a cancel, the close of a superseded task), then an `artifactUpdate` per artifact that is new or changed
 * (the whole artifact, `append: false`, `lastChunk: true`). History and metadata alone are not task updates.
 *
 * Taken from the save rather than from the event that caused it, every path that changes a task is covered alike
 * (an execution, the task writer, the SDK's own cancel), and on PostgreSQL the notification is written in the save's
 * own transaction.
 */
import { Artifact, TaskStatus, type Task } from '@a2a-js/sdk'

type Json = Record<string, unknown>

/**
 * The StreamResponse objects (ProtoJSON) that report the change from `previous` to `next`. Only the status and the
 * artifacts are converted (Task.toJSON's forms of them): the history, which grows with every turn, is no update.
 */
export function taskUpdates (previous: Task | undefined, next: Task): Json[] {
  const updates: Json[] = []
  if (next.status !== undefined) {
    const status = TaskStatus.toJSON(next.status) as Json
    if (previous?.status === undefined || JSON.stringify(status) !== JSON.stringify(TaskStatus.toJSON(previous.status))) {
      updates.push({ statusUpdate: { taskId: next.id, contextId: next.contextId, status } })
    }
  }
  const earlier = new Map((previous?.artifacts ?? []).map((artifact) => {
    const json = Artifact.toJSON(artifact) as Json
    return [json.artifactId, JSON.stringify(json)]
  }))
  for (const artifact of next.artifacts ?? []) {
    const json = Artifact.toJSON(artifact) as Json
    if (earlier.get(json.artifactId) === JSON.stringify(json)) continue
    updates.push({ artifactUpdate: { taskId: next.id, contextId: next.contextId, artifact: json, append: false, lastChunk: true } })
  }
  return updates
}
