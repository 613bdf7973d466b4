/**
 * ProtoJSON field names of A2A 1.0 requests. A ProtoJSON parser must accept a field under its proto name
 * (`message_id`) as well as its JSON name (`messageId`, lowerCamelCase); the gateway's checks and backends read
 * the JSON names only, so requests are brought to those at the parse boundary, here, by the request message types
 * of a2a.proto (`specification/a2a.proto` of A2A 1.0): only known fields of known messages are renamed, never a
 * key inside a `google.protobuf.Struct` (metadata, a data part), which is the client's own data.
 *
 * A field sent under both names is refused (a -32602 field violation naming both), as protobuf's reference JSON
 * parsers do: which one was meant cannot be known. See docs/conformance.md.
 */

/** A message's fields by JSON name: the message type of a nested message field, or null (scalar, enum, Struct). */
type Fields = Readonly<Record<string, string | null>>

/** The request messages of `service A2AService` and what they nest (a2a.proto, A2A 1.0). */
export const REQUEST_MESSAGES: Readonly<Record<string, Fields>> = Object.freeze({
  SendMessageRequest: { tenant: null, message: 'Message', configuration: 'SendMessageConfiguration', metadata: null },
  Message: {
    messageId: null, contextId: null, taskId: null, role: null, parts: 'Part', metadata: null, extensions: null, referenceTaskIds: null
  },
  // `oneof content`: text, raw, url, data.
  Part: { text: null, raw: null, url: null, data: null, metadata: null, filename: null, mediaType: null },
  SendMessageConfiguration: {
    acceptedOutputModes: null, taskPushNotificationConfig: 'TaskPushNotificationConfig', historyLength: null, returnImmediately: null
  },
  TaskPushNotificationConfig: { tenant: null, id: null, taskId: null, url: null, token: null, authentication: 'AuthenticationInfo' },
  AuthenticationInfo: { scheme: null, credentials: null },
  GetTaskRequest: { tenant: null, id: null, historyLength: null },
  ListTasksRequest: {
    tenant: null, contextId: null, status: null, pageSize: null, pageToken: null, historyLength: null, statusTimestampAfter: null, includeArtifacts: null
  },
  CancelTaskRequest: { tenant: null, id: null, metadata: null },
  SubscribeToTaskRequest: { tenant: null, id: null },
  GetTaskPushNotificationConfigRequest: { tenant: null, taskId: null, id: null },
  DeleteTaskPushNotificationConfigRequest: { tenant: null, taskId: null, id: null },
  ListTaskPushNotificationConfigsRequest: { tenant: null, taskId: null, pageSize: null, pageToken: null },
  GetExtendedAgentCardRequest: { tenant: null }
})

/** The request message of each A2A 1.0 method (`rpc X(Request)`). */
export const METHOD_REQUEST_MESSAGES: Readonly<Record<string, string>> = Object.freeze({
  SendMessage: 'SendMessageRequest',
  SendStreamingMessage: 'SendMessageRequest',
  GetTask: 'GetTaskRequest',
  ListTasks: 'ListTasksRequest',
  CancelTask: 'CancelTaskRequest',
  SubscribeToTask: 'SubscribeToTaskRequest',
  CreateTaskPushNotificationConfig: 'TaskPushNotificationConfig',
  GetTaskPushNotificationConfig: 'GetTaskPushNotificationConfigRequest',
  ListTaskPushNotificationConfigs: 'ListTaskPushNotificationConfigsRequest',
  DeleteTaskPushNotificationConfig: 'DeleteTaskPushNotificationConfigRequest',
  GetExtendedAgentCard: 'GetExtendedAgentCardRequest'
})

/** `messageId` → `message_id`: the proto name of an A2A field's JSON name (A2A's proto names are snake_case). */
export function protoName (jsonFieldName: string): string {
  return jsonFieldName.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`)
}

/** Per message type: proto name → JSON name, for the fields whose two names differ. */
const RENAMES: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(Object.entries(REQUEST_MESSAGES).map(([type, fields]) =>
  [type, new Map(Object.keys(fields).filter((name) => protoName(name) !== name).map((name) => [protoName(name), name]))]))

export interface ProtoNameConflict {
  /** Path of the field's JSON name, relative to params (`message.messageId`). */
  field: string
  /** The proto name sent alongside it. */
  protoName: string
}

export interface NamesResult {
  /** The params with every proto name of a known field replaced by its JSON name (the input itself when none was). */
  value: unknown
  /** Fields sent under both names (their values are left as sent). */
  conflicts: ProtoNameConflict[]
}

/**
 * A method's params with JSON names only. Anything that is not an object where a message is expected is left as it
 * is (the params' validation answers it); unknown methods are left alone. Objects are copied only where a name
 * changes, so a request in JSON names costs one walk and no copy.
 */
export function withJsonNames (method: string, params: unknown): NamesResult {
  const type = METHOD_REQUEST_MESSAGES[method]
  const conflicts: ProtoNameConflict[] = []
  const value = type === undefined ? params : rename(type, params, '', conflicts)
  return { value, conflicts }
}

function rename (type: string, value: unknown, path: string, conflicts: ProtoNameConflict[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const fields = REQUEST_MESSAGES[type]
  const renames = RENAMES.get(type) as ReadonlyMap<string, string>
  const source = value as Record<string, unknown>
  let out: Record<string, unknown> | undefined
  for (const key of Object.keys(source)) {
    const name = renames.get(key)
    if (name === undefined) continue
    if (Object.hasOwn(source, name)) {
      conflicts.push({ field: join(path, name), protoName: key })
      continue
    }
    out ??= { ...source }
    // The key moves to the end of the object: nothing reads params by position.
    out[name] = out[key]
    delete out[key]
  }
  const current = out ?? source
  for (const [name, nested] of Object.entries(fields)) {
    if (nested === null || !Object.hasOwn(current, name)) continue
    const child = current[name]
    const renamed = Array.isArray(child)
      ? renameList(nested, child, join(path, name), conflicts)
      : rename(nested, child, join(path, name), conflicts)
    if (renamed === child) continue
    out ??= { ...source }
    out[name] = renamed
  }
  return out ?? source
}

function renameList (type: string, list: unknown[], path: string, conflicts: ProtoNameConflict[]): unknown[] {
  let out: unknown[] | undefined
  list.forEach((item, index) => {
    const renamed = rename(type, item, `${path}[${index}]`, conflicts)
    if (renamed === item) return
    out ??= [...list]
    out[index] = renamed
  })
  return out ?? list
}

function join (path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`
}
