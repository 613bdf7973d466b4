/**
 * A2A 0.3 JSON-RPC request → A2A 1.0 call: the method name and its params as ProtoJSON. Only the shape changes
 * (`kind`-discriminated parts, lower-case roles, `blocking`, the push config's nesting); the values go through
 * untouched, so the service's 1.0 schema still decides what is valid and answers -32602 with the field's path.
 * What has no 1.0 form (a part of an unknown kind, a file with neither bytes nor uri) is -32602 here.
 */
import { invalidParams, methodNotFound, type FieldViolation, type JsonRpcError } from '../errors.js'
import { isA2AMethod } from '../methods.js'
import { DATA_PART_COMPAT_FLAG, isV03Method, V03_METHODS, V03_TASK_STATES, type V1MethodOf03 } from './types.js'

export type V1Request = { ok: true, method: V1MethodOf03, params: Record<string, unknown> } | { ok: false, error: JsonRpcError }

type Json = Record<string, unknown>

/** The 1.0 call a 0.3 request is, or the error answering it (-32601 for a name that is not 0.3's, 1.0 names included). */
export function requestToV1 (method: string, params: unknown): V1Request {
  if (!isV03Method(method)) {
    const error = methodNotFound(method)
    // A 1.0 client that forgot its version header learns what to send.
    if (isA2AMethod(method)) error.message += ' in A2A 0.3 (an A2A 1.0 method: send A2A-Version: 1.0)'
    return { ok: false, error }
  }
  const v1Method = V03_METHODS[method]
  if (params === undefined && v1Method === 'GetExtendedAgentCard') return { ok: true, method: v1Method, params: {} }
  if (!isObject(params)) return { ok: false, error: invalidParams([{ field: 'params', description: 'must be an object' }]) }
  const violations: FieldViolation[] = []
  const translated = PARAMS[v1Method](params, violations)
  if (violations.length > 0) return { ok: false, error: invalidParams(violations.slice(0, 20)) }
  return { ok: true, method: v1Method, params: translated }
}

const PARAMS: Record<V1MethodOf03, (params: Json, violations: FieldViolation[]) => Json> = {
  SendMessage: sendParams,
  SendStreamingMessage: sendParams,
  GetTask: (p) => defined({ id: p.id, historyLength: p.historyLength, metadata: p.metadata }),
  CancelTask: (p) => defined({ id: p.id, metadata: p.metadata }),
  SubscribeToTask: (p) => defined({ id: p.id }),
  CreateTaskPushNotificationConfig: (p) => ({ ...pushConfig(p.pushNotificationConfig), taskId: p.taskId }),
  // 0.3 may ask for a task's config without its id: the one whose id is the task's (the 0.3 SDKs' default).
  GetTaskPushNotificationConfig: (p) => defined({ taskId: p.id, id: p.pushNotificationConfigId ?? p.id }),
  ListTaskPushNotificationConfigs: (p) => defined({ taskId: p.id }),
  DeleteTaskPushNotificationConfig: (p) => defined({ taskId: p.id, id: p.pushNotificationConfigId }),
  GetExtendedAgentCard: () => ({})
}

function sendParams (params: Json, violations: FieldViolation[]): Json {
  const configuration = isObject(params.configuration) ? sendConfiguration(params.configuration) : params.configuration
  return defined({ message: messageToV1(params.message, 'message', violations), configuration, metadata: params.metadata })
}

/**
 * 0.3 `blocking` (absent: the server's choice, which is to wait) is 1.0 `returnImmediately` inverted; only an
 * explicit `blocking: false` returns at once.
 */
function sendConfiguration (configuration: Json): Json {
  return defined({
    acceptedOutputModes: configuration.acceptedOutputModes,
    historyLength: configuration.historyLength,
    taskPushNotificationConfig: configuration.pushNotificationConfig === undefined ? undefined : pushConfig(configuration.pushNotificationConfig),
    returnImmediately: typeof configuration.blocking === 'boolean' ? !configuration.blocking : configuration.blocking
  })
}

/** A 0.3 PushNotificationConfig → the 1.0 one's members: `authentication.schemes[0]` is 1.0's one `scheme`. */
function pushConfig (config: unknown): Json {
  if (!isObject(config)) return {}
  const auth = config.authentication
  const authentication = isObject(auth)
    ? defined({ scheme: Array.isArray(auth.schemes) ? auth.schemes[0] : undefined, credentials: auth.credentials })
    : auth
  return defined({ id: config.id, url: config.url, token: config.token, authentication })
}

export function messageToV1 (message: unknown, path: string, violations: FieldViolation[]): unknown {
  if (!isObject(message)) return message
  return defined({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role === 'user' ? 'ROLE_USER' : message.role === 'agent' ? 'ROLE_AGENT' : message.role,
    parts: Array.isArray(message.parts) ? message.parts.map((part, i) => partToV1(part, `${path}.parts[${i}]`, violations)) : message.parts,
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds
  })
}

function partToV1 (part: unknown, path: string, violations: FieldViolation[]): unknown {
  if (!isObject(part)) return part
  switch (part.kind) {
    case 'text':
      return defined({ text: part.text, metadata: part.metadata })
    case 'file': {
      const file = part.file
      if (isObject(file) && (typeof file.bytes === 'string' || typeof file.uri === 'string')) {
        return defined({
          ...(typeof file.bytes === 'string' ? { raw: file.bytes } : { url: file.uri }),
          mediaType: file.mimeType,
          filename: file.name,
          metadata: part.metadata
        })
      }
      violations.push({ field: `${path}.file`, description: 'must have bytes or uri (a string)' })
      return part
    }
    case 'data':
      return dataPartToV1(part)
    default:
      violations.push({ field: `${path}.kind`, description: 'must be "text", "file" or "data"' })
      return part
  }
}

/** A data part the compat layer wrapped (`data_part_compat`) is unwrapped, the flag dropped. */
function dataPartToV1 (part: Json): Json {
  const metadata = part.metadata
  if (!isObject(metadata) || metadata[DATA_PART_COMPAT_FLAG] !== true) return defined({ data: part.data, metadata })
  const { [DATA_PART_COMPAT_FLAG]: _flag, ...rest } = metadata
  const data = isObject(part.data) && 'value' in part.data ? part.data.value : part.data
  return defined({ data, metadata: Object.keys(rest).length > 0 ? rest : undefined })
}

function isObject (value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The members that are not undefined (ProtoJSON omits unset fields). */
function defined (object: Json): Json {
  const out: Json = {}
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value
  return out
}

/**
 * The 0.3 HTTP+JSON binding's bodies are 0.3's proto JSON, not its JSON-RPC shapes: a Message's parts are
 * `content`, a file part is `{file: {fileWithUri | fileWithBytes, mimeType}}`, a data part `{data: {data}}`, the push
 * config of a send is `configuration.pushNotification`. 0.3 proto JSON → the 1.0 SendMessage params.
 */
export function restSendToV1 (body: unknown, violations: FieldViolation[]): unknown {
  if (!isObject(body)) return body
  const configuration = isObject(body.configuration)
    ? defined({
      acceptedOutputModes: body.configuration.acceptedOutputModes,
      historyLength: body.configuration.historyLength,
      taskPushNotificationConfig: body.configuration.pushNotification === undefined ? undefined : pushConfig(body.configuration.pushNotification),
      returnImmediately: typeof body.configuration.blocking === 'boolean' ? !body.configuration.blocking : body.configuration.blocking
    })
    : body.configuration
  return defined({ message: restMessageToV1(body.message ?? body.request, 'message', violations), configuration, metadata: body.metadata })
}

/** A 0.3 proto-JSON TaskPushNotificationConfig (`{name, pushNotificationConfig}`) → the 1.0 one's members. */
export function restPushConfigToV1 (body: unknown): Json {
  return isObject(body) ? pushConfig(body.pushNotificationConfig) : {}
}

function restMessageToV1 (message: unknown, path: string, violations: FieldViolation[]): unknown {
  if (!isObject(message)) return message
  const content = message.content ?? message.parts
  return defined({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role,
    parts: Array.isArray(content) ? content.map((part, i) => restPartToV1(part, `${path}.content[${i}]`, violations)) : content,
    metadata: message.metadata,
    extensions: message.extensions
  })
}

function restPartToV1 (part: unknown, path: string, violations: FieldViolation[]): unknown {
  if (!isObject(part)) return part
  if (typeof part.text === 'string') return defined({ text: part.text, metadata: part.metadata })
  if (isObject(part.file)) {
    const file = part.file
    if (typeof file.fileWithBytes === 'string') return defined({ raw: file.fileWithBytes, mediaType: file.mimeType, metadata: part.metadata })
    if (typeof file.fileWithUri === 'string') return defined({ url: file.fileWithUri, mediaType: file.mimeType, metadata: part.metadata })
  } else if (isObject(part.data)) {
    return dataPartToV1({ data: part.data.data, metadata: part.metadata })
  }
  violations.push({ field: path, description: 'must have text, file (fileWithUri or fileWithBytes) or data' })
  return part
}

/**
 * A 0.3 upstream's result (proxy mode: a 0.3 agent behind the gateway) → the 1.0 response message of `method`: a
 * Task or Message becomes `{task}` / `{message}` for SendMessage, the Task itself for GetTask and CancelTask.
 */
export function v03ResultToV1 (method: string, result: unknown): unknown {
  if (method === 'SendMessage') return v03EventToV1(result)
  return isObject(result) ? taskToV1(result) : result
}

/** A 0.3 event (`kind` task / message / status-update / artifact-update) → the 1.0 StreamResponse. */
export function v03EventToV1 (event: unknown): Record<string, unknown> {
  const value = isObject(event) ? event : {}
  switch (value.kind) {
    case 'task':
      return { task: taskToV1(value) }
    case 'status-update':
      return { statusUpdate: defined({ taskId: value.taskId, contextId: value.contextId, status: statusToV1(value.status), metadata: value.metadata }) }
    case 'artifact-update':
      return { artifactUpdate: defined({ taskId: value.taskId, contextId: value.contextId, artifact: artifactToV1(value.artifact), append: value.append, lastChunk: value.lastChunk, metadata: value.metadata }) }
    default:
      return { message: messageToV1(value, 'message', []) }
  }
}

/** 0.3 lower-case task states → their 1.0 names (an unknown state is TASK_STATE_UNSPECIFIED). */
const V1_TASK_STATES: Readonly<Record<string, string>> = Object.freeze(Object.fromEntries(Object.entries(V03_TASK_STATES).map(([v1, v03]) => [v03, v1])))

function taskToV1 (task: Json): Json {
  return defined({
    id: task.id,
    contextId: task.contextId,
    status: statusToV1(task.status),
    artifacts: Array.isArray(task.artifacts) ? task.artifacts.map(artifactToV1) : undefined,
    history: Array.isArray(task.history) ? task.history.map((message) => messageToV1(message, 'history', [])) : undefined,
    metadata: task.metadata
  })
}

function statusToV1 (status: unknown): Json {
  const value = isObject(status) ? status : {}
  return defined({
    state: V1_TASK_STATES[value.state as string] ?? 'TASK_STATE_UNSPECIFIED',
    message: value.message === undefined ? undefined : messageToV1(value.message, 'status.message', []),
    timestamp: value.timestamp
  })
}

function artifactToV1 (artifact: unknown): Json {
  const value = isObject(artifact) ? artifact : {}
  return defined({
    artifactId: value.artifactId,
    name: value.name,
    description: value.description,
    parts: Array.isArray(value.parts) ? value.parts.map((part) => partToV1(part, 'artifact.parts', [])) : [],
    metadata: value.metadata,
    extensions: value.extensions
  })
}
