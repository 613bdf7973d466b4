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
 * What updates are told from: a task's status and each artifact, as the JSON text of their ProtoJSON forms
 * (Task.toJSON's). Only these: the history, which grows with every turn, is no update.
 */
export interface TaskDigest {
  status?: string
  /** By artifact id. */
  artifacts: Map<unknown, string>
}

/** `task`'s digest: what its next save's updates are told from. */
export function taskDigest (task: Task): TaskDigest {
  const artifacts = new Map<unknown, string>()
  for (const artifact of task.artifacts ?? []) {
    const json = Artifact.toJSON(artifact) as Json
    artifacts.set(json.artifactId, JSON.stringify(json))
  }
  return { status: task.status === undefined ? undefined : JSON.stringify(TaskStatus.toJSON(task.status)), artifacts }
}

/** The StreamResponse objects (ProtoJSON) that report the change from `previous` to `next`, and `next`'s digest. */
export function updatesSince (previous: TaskDigest | undefined, next: Task): { updates: Json[], digest: TaskDigest } {
  const updates: Json[] = []
  let status: string | undefined
  if (next.status !== undefined) {
    const json = TaskStatus.toJSON(next.status) as Json
    status = JSON.stringify(json)
    if (previous?.status === undefined || status !== previous.status) {
      updates.push({ statusUpdate: { taskId: next.id, contextId: next.contextId, status: json } })
    }
  }
  const artifacts = new Map<unknown, string>()
  for (const artifact of next.artifacts ?? []) {
    const json = Artifact.toJSON(artifact) as Json
    const text = JSON.stringify(json)
    artifacts.set(json.artifactId, text)
    if (previous?.artifacts.get(json.artifactId) === text) continue
    updates.push({ artifactUpdate: { taskId: next.id, contextId: next.contextId, artifact: json, append: false, lastChunk: true } })
  }
  return { updates, digest: { status, artifacts } }
}

/**
 * The StreamResponse objects (ProtoJSON) that report the change from `previous` to `next`: the rule, which the
 * PostgreSQL outbox's tests hold its SQL to.
 */
export function taskUpdates (previous: Task | undefined, next: Task): Json[] {
  return updatesSince(previous === undefined ? undefined : taskDigest(previous), next).updates
}
