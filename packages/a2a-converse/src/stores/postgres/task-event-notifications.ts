/**
 * What the task event hub (postgres-task-event-hub.ts) sends through PostgreSQL's NOTIFY: the channel's name, the
 * envelope of a notification and how one is read back, and the SQL of an event too large for a payload (spilled to
 * `converse_task_events`, only its id notified). Apart from the hub because it is the wire format every instance on
 * a database must agree on, whatever the hub does with it.
 */
import { createHash } from 'node:crypto'
import type { TaskStreamEvent } from '../../events/task-event-hub.js'
import { TASK_EVENTS_TABLE } from './migrations.js'

/** The channel of a database without a schema option. */
export const TASK_EVENT_CHANNEL = 'a2a_converse_task_events'
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more (default build). */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7999
/** Channel names are identifiers: at most 63 bytes. */
export const MAX_CHANNEL_LENGTH = 63

/** `a2a_converse_task_events:<schema>` (a hash of the schema when that would be too long for a channel name). */
export function taskEventChannel (schema?: string): string {
  if (schema === undefined) return TASK_EVENT_CHANNEL
  const channel = `${TASK_EVENT_CHANNEL}:${schema}`
  if (channel.length <= MAX_CHANNEL_LENGTH) return channel
  return `${TASK_EVENT_CHANNEL}:${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`
}

/**
 * What travels in a notification: origin hub, the task (`t`) or the agent whose conversations it concerns (`a`),
 * and the event or the id of its spilled row; or, for a task save, origin and task (`s`) alone.
 */
export interface Envelope {
  o: string
  t?: string
  a?: string
  e?: TaskStreamEvent
  r?: number
  s?: string
  /** Push notifications were recorded (packages/a2a-converse/src/stores/postgres/push-outbox.ts): the other instances' outboxes look now. */
  p?: 1
}

export type Channel = 't' | 'a'

export function parseEnvelope (payload: string | undefined): Envelope | undefined {
  try {
    const value = JSON.parse(String(payload)) as Partial<Envelope> | null
    if (typeof value === 'object' && value !== null && (typeof value.s === 'string' || value.p === 1)) return value as Envelope
    if (typeof value === 'object' && value !== null && (typeof value.t === 'string') !== (typeof value.a === 'string') &&
      ((typeof value.e === 'object' && value.e !== null) || typeof value.r === 'number')) return value as Envelope
  } catch {}
  return undefined
}

export const SPILL = `with spilled as (
    insert into ${TASK_EVENTS_TABLE} (task_id, event) values ($1::text, $2) returning id
  ), pruned as (
    delete from ${TASK_EVENTS_TABLE} where created_at < now() - make_interval(secs => $5::double precision / 1000)
  )
  select pg_notify($3, json_build_object('o', $4::text, $6::text, $1::text, 'r', id)::text) from spilled`
export const READ_SPILLED = `select event from ${TASK_EVENTS_TABLE} where id = $1`
