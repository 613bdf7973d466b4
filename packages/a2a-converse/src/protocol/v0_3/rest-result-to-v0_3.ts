/**
 * A2A 1.0 result → A2A 0.3 proto JSON, for the 0.3 HTTP+JSON binding (the JSON-RPC shapes are result-to-v0_3.ts,
 * whose helpers this builds on).
 */
import { TASK_STATES } from '../params.js'
import type { V1MethodOf03 } from './types.js'
import { asObject, FINAL_STATES, nonEmpty, partToV03, pushConfigToV03, taskStateToV03, v03ExtendedCard, withOptional } from './result-to-v0_3.js'

type Json = Record<string, unknown>

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
