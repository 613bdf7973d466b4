/**
 * Recording push notifications in the outbox (push-outbox.ts delivers them) from code: one row per config and
 * update, in the caller's transaction. The task store writes the same rows in its save's own statement
 * (converse_save_task, task-store-functions.ts), so a save that committed has its notifications recorded.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { TaskPushNotificationConfig } from '@a2a-js/sdk'
import type { StoredPushConfig } from '../../push/push-config-store.js'
import type { TraceHeaders } from '../../telemetry/tracing.js'
import { PUSH_OUTBOX_TABLE } from './migrations.js'
import { sealWith, type SecretBox } from '../secret-box.js'

type Json = Record<string, unknown>

export interface RecordedNotifications {
  agentId: string
  tenant: string
  owner: string
  taskId: string
  configs: readonly StoredPushConfig[]
  updates: readonly Json[]
  /** The recording turn's trace context as W3C headers (none without a trace), which the deliveries continue. */
  trace?: TraceHeaders
  /** Seals each row's target (the config: URL, token, credentials), as the config store seals it. Absent: in clear. */
  secrets?: SecretBox
}

/** Writes one outbox row per config and update, in order (in the caller's transaction). */
export async function recordNotifications (trx: Kysely<any>, recorded: RecordedNotifications): Promise<void> {
  const rows = recorded.configs.flatMap(({ config, converse }) => recorded.updates.map((event) => ({
    agent_id: recorded.agentId,
    tenant: recorded.tenant,
    owner: recorded.owner,
    task_id: recorded.taskId,
    config_id: config.id,
    target: sealWith(recorded.secrets, JSON.stringify(TaskPushNotificationConfig.toJSON(config))),
    converse,
    event: JSON.stringify(event),
    notification_id: randomUUID(),
    traceparent: recorded.trace?.traceparent ?? null,
    tracestate: recorded.trace?.tracestate ?? null
  })))
  await trx.insertInto(PUSH_OUTBOX_TABLE).values(rows).execute()
}
