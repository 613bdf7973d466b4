/**
 * A task's row as the SDK's DatabaseTaskStore writes it (toTaskRow / fromTaskRow in its database module): the JSON
 * columns, encoded once per save; what the task store writes and what it keeps of a task (remembered-tasks.ts).
 */
import { Task, taskStateToJSON } from '@a2a-js/sdk'

/** A task's row as the SDK writes it: its JSON columns (null: absent). */
export interface TaskColumns {
  contextId: string
  status: string | null
  artifacts: string | null
  history: string | null
  metadata: string | null
}

function encode (value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

/** The task of a row (the SDK's fromTaskRow): a new Task each time. */
export function taskOf (id: string, row: TaskColumns): Task {
  const decode = (value: string | null): unknown => value === null ? undefined : JSON.parse(value)
  return Task.fromJSON({ id, contextId: row.contextId, status: decode(row.status), artifacts: decode(row.artifacts), history: decode(row.history), metadata: decode(row.metadata) })
}

/** The row of a task (the SDK's toTaskRow): its JSON columns. */
export function columnsOf (task: Task): TaskColumns {
  const payload = Task.toJSON(task) as Record<string, unknown>
  return { contextId: task.contextId, status: encode(payload.status), artifacts: encode(payload.artifacts), history: encode(payload.history), metadata: encode(payload.metadata) }
}

/** Whether `kept` (a kept row; null or undefined: none) holds the same columns as `row`: a save of it writes nothing new. */
export function sameColumns (kept: TaskColumns | null | undefined, row: TaskColumns): boolean {
  return kept !== null && kept !== undefined && kept.contextId === row.contextId && kept.status === row.status &&
    kept.artifacts === row.artifacts && kept.history === row.history && kept.metadata === row.metadata
}

/** A save's row: its JSON columns and the two the table derives from the status. */
export interface SavedRow {
  columns: TaskColumns
  /** The SDK's `status_last_updated`: the status timestamp in milliseconds, 0 when absent or unreadable. */
  statusLastUpdated: number
  /** `status_state`: the state's name, null without a status. */
  state: string | null
}

export function savedRowOf (task: Task): SavedRow {
  const timestamp = task.status?.timestamp
  const parsed = timestamp === undefined || timestamp === '' ? 0 : Date.parse(timestamp)
  return {
    columns: columnsOf(task),
    statusLastUpdated: Number.isNaN(parsed) ? 0 : parsed,
    state: task.status === undefined ? null : taskStateToJSON(task.status.state)
  }
}
