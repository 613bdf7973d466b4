/**
 * A2A 1.0 result (ProtoJSON, decorated or stripped by the service) → A2A 0.3 result: `kind`-discriminated
 * results and parts, lower-case roles and task states, `final` on status updates, the push config's nesting, the
 * 0.3 card fields. Metadata, extensions and ids are copied as they are, so the converse envelope travels under
 * the same URI key on 0.3 Messages, status messages and artifacts. Errors are not translated: 0.3 and 1.0 share
 * -32001…-32007 and the JSON-RPC codes, and 0.3's `data` takes any value (1.0's ErrorInfo list included).
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
const FINAL_STATES: ReadonlySet<string> = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required', 'auth-required'])

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
function pushConfigToV03 (config: Json): V03TaskPushConfig {
  const auth = config.authentication === undefined ? undefined : asObject(config.authentication)
  const authentication = auth === undefined
    ? undefined
    : withOptional({ schemes: typeof auth.scheme === 'string' && auth.scheme !== '' ? [auth.scheme] : [] }, { credentials: nonEmptyString(auth.credentials) })
  const pushNotificationConfig: V03PushConfig = withOptional({ url: config.url as string }, { id: nonEmptyString(config.id), token: nonEmptyString(config.token), authentication })
  return { taskId: config.taskId as string, pushNotificationConfig }
}

function asObject (value: unknown): Json {
  return typeof value === 'object' && value !== null ? value as Json : {}
}

function nonEmpty (value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined
}

function nonEmptyString (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** `required` with the optional members that are set. */
function withOptional<T extends object> (required: T, optional: Json): T {
  const out: Json = { ...required as Json }
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) out[key] = value
  return out as T
}

/**
 * 1.0 ProtoJSON → 0.3 proto JSON, for the 0.3 HTTP+JSON binding (see request-to-v1.ts `restSendToV1`): a
 * Message's parts are `content`, parts are `{text}` / `{file: {fileWithUri | fileWithBytes, mimeType}}` /
 * `{data: {data}}`, the canceled state is spelled `TASK_STATE_CANCELLED`, status updates carry `final`, a push
 * config is `{name: "tasks/{id}/pushNotificationConfigs/{configId}", pushNotificationConfig}`.
 */
export function restResultToV03 (method: V1MethodOf03, value: unknown): unknown {
  const result = asObject(value)
  switch (method) {
    case 'SendMessage':
      return result.task !== undefined ? { task: restTask(asObject(result.task)) } : { message: restMessage(asObject(result.message)) }
    case 'GetTask':
    case 'CancelTask':
      return restTask(result)
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
      return restPushConfig(result)
    case 'ListTaskPushNotificationConfigs':
      return { configs: (Array.isArray(result.configs) ? result.configs : []).map((config) => restPushConfig(asObject(config))) }
    case 'GetExtendedAgentCard':
      return v03ExtendedCard(result)
    default:
      // DeleteTaskPushNotificationConfig answers no body; streaming methods answer with events.
      return value
  }
}

/** One 1.0 StreamResponse → the 0.3 proto-JSON StreamResponse. */
export function restEventToV03 (value: unknown): unknown {
  const event = asObject(value)
  if (event.task !== undefined) return { task: restTask(asObject(event.task)) }
  if (event.message !== undefined) return { message: restMessage(asObject(event.message)) }
  if (event.statusUpdate !== undefined) {
    const update = asObject(event.statusUpdate)
    const status = restStatus(asObject(update.status))
    return { statusUpdate: withOptional({ taskId: update.taskId, contextId: update.contextId, status, final: FINAL_STATES.has(taskStateToV03(asObject(update.status).state)) }, { metadata: update.metadata }) }
  }
  const update = asObject(event.artifactUpdate)
  return { artifactUpdate: withOptional({ taskId: update.taskId, contextId: update.contextId, artifact: restArtifact(asObject(update.artifact)) }, { append: update.append, lastChunk: update.lastChunk, metadata: update.metadata }) }
}

function restTask (task: Json): Json {
  return withOptional(
    { id: task.id, contextId: task.contextId, status: restStatus(asObject(task.status)) },
    { artifacts: nonEmpty(task.artifacts)?.map((a) => restArtifact(asObject(a))), history: nonEmpty(task.history)?.map((m) => restMessage(asObject(m))), metadata: task.metadata }
  )
}

function restStatus (status: Json): Json {
  const state = typeof status.state === 'number' ? TASK_STATES[status.state] : status.state
  return withOptional(
    { state: state === 'TASK_STATE_CANCELED' ? 'TASK_STATE_CANCELLED' : state ?? 'TASK_STATE_UNSPECIFIED' },
    { message: status.message === undefined ? undefined : restMessage(asObject(status.message)), timestamp: status.timestamp }
  )
}

function restMessage (message: Json): Json {
  return withOptional(
    { messageId: message.messageId, role: message.role, content: restParts(message.parts) },
    { contextId: message.contextId, taskId: message.taskId, metadata: message.metadata, extensions: nonEmpty(message.extensions) }
  )
}

function restArtifact (artifact: Json): Json {
  return withOptional(
    { artifactId: artifact.artifactId, parts: restParts(artifact.parts) },
    { name: artifact.name, description: artifact.description, metadata: artifact.metadata, extensions: nonEmpty(artifact.extensions) }
  )
}

/** 0.3 proto parts have no `filename`; a file's name does not travel. */
function restParts (parts: unknown): Json[] {
  return (Array.isArray(parts) ? parts : []).map((value) => {
    const part = partToV03(asObject(value))
    const metadata = part.metadata
    switch (part.kind) {
      case 'text':
        return withOptional({ text: part.text }, { metadata })
      case 'file':
        return withOptional({ file: withOptional('bytes' in part.file ? { fileWithBytes: part.file.bytes } : { fileWithUri: part.file.uri }, { mimeType: part.file.mimeType }) }, { metadata })
      default:
        return withOptional({ data: { data: part.data } }, { metadata })
    }
  })
}

function restPushConfig (config: Json): Json {
  const { taskId, pushNotificationConfig } = pushConfigToV03(config)
  return { name: `tasks/${taskId}/pushNotificationConfigs/${pushNotificationConfig.id ?? ''}`, pushNotificationConfig }
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
function v03ExtendedCard (card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _stale, ...unsigned } = card
  return withV03Fields(unsigned)
}
