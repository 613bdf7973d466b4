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
import { Task } from '@a2a-js/sdk'

type Json = Record<string, unknown>

/** The StreamResponse objects (ProtoJSON) that report the change from `previous` to `next`. */
export function taskUpdates (previous: Task | undefined, next: Task): Json[] {
  const before = previous === undefined ? undefined : Task.toJSON(previous) as Json
  const after = Task.toJSON(next) as Json
  const updates: Json[] = []
  const status = after.status
  if (status !== undefined && JSON.stringify(status) !== JSON.stringify(before?.status)) {
    updates.push({ statusUpdate: { taskId: next.id, contextId: next.contextId, status } })
  }
  const earlier = new Map(((before?.artifacts ?? []) as Json[]).map((artifact) => [artifact.artifactId, JSON.stringify(artifact)]))
  for (const artifact of (after.artifacts ?? []) as Json[]) {
    if (earlier.get(artifact.artifactId) === JSON.stringify(artifact)) continue
    updates.push({ artifactUpdate: { taskId: next.id, contextId: next.contextId, artifact, append: false, lastChunk: true } })
  }
  return updates
}
