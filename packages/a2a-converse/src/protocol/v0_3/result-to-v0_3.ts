/**
 * A2A 1.0 result (ProtoJSON, decorated or stripped by the service) → A2A 0.3 result: `kind`-discriminated
 * results and parts, lower-case roles and task states, `final` on status updates, the push config's nesting, the
 * 0.3 card fields. Metadata, extensions and ids are copied as they are, so the converse envelope travels under
 * the same URI key on 0.3 Messages, status messages and artifacts. Errors are not translated: 0.3 and 1.0 share
 * -32001…-32007 and the JSON-RPC codes, and 0.3's `data` takes any value (1.0's ErrorInfo list included).
 * The 0.3 HTTP+JSON binding's proto JSON is rest-result-to-v0_3.ts.
 */
import { TASK_STATES } from '../params.js'
import { withV03Fields } from '../../core/card.js'
import {
  DATA_PART_COMPAT_FLAG, V03_METHODS, V03_TASK_STATES, type V03Artifact, type V03Message, type V03Part, type V03PushConfig,
  type V03Result, type V03Task, type V03TaskPushConfig, type V03TaskStatus, type V1MethodOf03
} from './types.js'

type Json = Record<string, unknown>

/**
 * States after which a 1.0 stream of the task ends (terminal, or waiting for the client): 0.3's `final: true`,
 * which 0.3 clients read as the stream's last event.
 */
export const FINAL_STATES: ReadonlySet<string> = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required', 'auth-required'])

/** A unary method's 1.0 response message → its 0.3 result. */
export function resultToV03 (method: V1MethodOf03, value: unknown): unknown {
  const result = asObject(value)
  switch (method) {
    case 'SendMessage':
      return result.task !== undefined ? taskToV03(asObject(result.task)) : messageToV03(asObject(result.message))
    case 'GetTask':
    case 'CancelTask':
      return taskToV03(result)
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
      return pushConfigToV03(result)
    case 'ListTaskPushNotificationConfigs':
      return (Array.isArray(result.configs) ? result.configs : []).map((config) => pushConfigToV03(asObject(config)))
    case 'DeleteTaskPushNotificationConfig':
      return null
    case 'GetExtendedAgentCard':
      return v03ExtendedCard(result)
    default:
      // Streaming methods answer with events (streamEventToV03).
      return value
  }
}

/** One 1.0 StreamResponse → the 0.3 event it is. */
export function streamEventToV03 (value: unknown): V03Result {
  const event = asObject(value)
  if (event.task !== undefined) return taskToV03(asObject(event.task))
  if (event.message !== undefined) return messageToV03(asObject(event.message))
  if (event.statusUpdate !== undefined) {
    const update = asObject(event.statusUpdate)
    const status = statusToV03(asObject(update.status))
    return withOptional({ kind: 'status-update', taskId: update.taskId as string, contextId: update.contextId as string, status, final: FINAL_STATES.has(status.state) }, { metadata: update.metadata })
  }
  const update = asObject(event.artifactUpdate)
  return withOptional(
    { kind: 'artifact-update', taskId: update.taskId as string, contextId: update.contextId as string, artifact: artifactToV03(asObject(update.artifact)) },
    { append: update.append, lastChunk: update.lastChunk, metadata: update.metadata }
  )
}

export function taskToV03 (task: Json): V03Task {
  return withOptional(
    { kind: 'task', id: task.id as string, contextId: task.contextId as string, status: statusToV03(asObject(task.status)) },
    { history: nonEmpty(task.history)?.map((m) => messageToV03(asObject(m))), artifacts: nonEmpty(task.artifacts)?.map((a) => artifactToV03(asObject(a))), metadata: task.metadata }
  )
}

function statusToV03 (status: Json): V03TaskStatus {
  return withOptional(
    { state: taskStateToV03(status.state) },
    { message: status.message === undefined ? undefined : messageToV03(asObject(status.message)), timestamp: status.timestamp }
  )
}

/** A ProtoJSON enum arrives by name or, as every ProtoJSON parser accepts, by number. */
export function taskStateToV03 (state: unknown): string {
  const name = typeof state === 'number' ? TASK_STATES[state] : state
  return V03_TASK_STATES[name as string] ?? 'unknown'
}

export function messageToV03 (message: Json): V03Message {
  return withOptional(
    { kind: 'message', messageId: message.messageId as string, role: message.role === 'ROLE_USER' || message.role === 1 ? 'user' : 'agent', parts: partsToV03(message.parts) },
    { contextId: message.contextId, taskId: message.taskId, metadata: message.metadata, extensions: nonEmpty(message.extensions), referenceTaskIds: nonEmpty(message.referenceTaskIds) }
  )
}

function artifactToV03 (artifact: Json): V03Artifact {
  return withOptional(
    { artifactId: artifact.artifactId as string, parts: partsToV03(artifact.parts) },
    { name: artifact.name, description: artifact.description, metadata: artifact.metadata, extensions: nonEmpty(artifact.extensions) }
  )
}

function partsToV03 (parts: unknown): V03Part[] {
  return (Array.isArray(parts) ? parts : []).map((part) => partToV03(asObject(part)))
}

/** `text` / `raw` / `url` / `data` → `kind` text / file (bytes) / file (uri) / data. */
export function partToV03 (part: Json): V03Part {
  const metadata = part.metadata as Json | undefined
  if (typeof part.text === 'string') return withOptional({ kind: 'text', text: part.text }, { metadata })
  if (typeof part.raw === 'string' || typeof part.url === 'string') {
    const file = withOptional(typeof part.raw === 'string' ? { bytes: part.raw } : { uri: part.url as string }, { mimeType: nonEmptyString(part.mediaType), name: nonEmptyString(part.filename) })
    return withOptional({ kind: 'file', file }, { metadata })
  }
  const data = part.data
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) return withOptional({ kind: 'data', data: data as Json }, { metadata })
  // 0.3 data is an object: any other JSON value is wrapped, as the SDK's compat layer does.
  return { kind: 'data', data: { value: data ?? null }, metadata: { ...metadata, [DATA_PART_COMPAT_FLAG]: true } }
}

/** 1.0 TaskPushNotificationConfig (flat) → 0.3 (the config nested, `schemes` a list). */
export function pushConfigToV03 (config: Json): V03TaskPushConfig {
  const auth = config.authentication === undefined ? undefined : asObject(config.authentication)
  const authentication = auth === undefined
    ? undefined
    : withOptional({ schemes: typeof auth.scheme === 'string' && auth.scheme !== '' ? [auth.scheme] : [] }, { credentials: nonEmptyString(auth.credentials) })
  const pushNotificationConfig: V03PushConfig = withOptional({ url: config.url as string }, { id: nonEmptyString(config.id), token: nonEmptyString(config.token), authentication })
  return { taskId: config.taskId as string, pushNotificationConfig }
}

export function asObject (value: unknown): Json {
  return typeof value === 'object' && value !== null ? value as Json : {}
}

export function nonEmpty (value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined
}

function nonEmptyString (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** `required` with the optional members that are set. */
export function withOptional<T extends object> (required: T, optional: Json): T {
  const out: Json = { ...required as Json }
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) out[key] = value
  return out as T
}

/** The 0.3 JSON-RPC methods by their 1.0 names (the ones with a 0.3 counterpart). */
const V03_NAMES: ReadonlyMap<string, string> = new Map(Object.entries(V03_METHODS).map(([v03, v1]) => [v1, v03]))

/**
 * A checked 1.0 call → the 0.3 JSON-RPC request (proxy mode: a 0.3 agent behind the gateway), or undefined when
 * 0.3 has no such method (ListTasks). Push configs are never proxied, so only the task and message methods occur.
 */
export function v1CallToV03 (method: string, params: unknown): { method: string, params: Json } | undefined {
  const name = V03_NAMES.get(method)
  if (name === undefined) return undefined
  const value = asObject(params)
  if (method !== 'SendMessage' && method !== 'SendStreamingMessage') return { method: name, params: withOptional({ id: value.id }, { historyLength: value.historyLength, metadata: value.metadata }) }
  const configuration = value.configuration === undefined ? undefined : asObject(value.configuration)
  return {
    method: name,
    params: withOptional({ message: messageToV03(asObject(value.message)) }, {
      configuration: configuration === undefined
        ? undefined
        : withOptional({}, {
          acceptedOutputModes: configuration.acceptedOutputModes,
          historyLength: configuration.historyLength,
          blocking: typeof configuration.returnImmediately === 'boolean' ? !configuration.returnImmediately : undefined
        }),
      metadata: value.metadata
    })
  }
}

/**
 * The extended card for a 0.3 reader: 0.3's fields added, and its signatures dropped — they signed the card without
 * those fields and would not verify (a 0.3 extended card is served unsigned; docs/signing.md).
 */
export function v03ExtendedCard (card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _stale, ...unsigned } = card
  return withV03Fields(unsigned)
}
