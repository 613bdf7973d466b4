/**
 * A2A 0.3 wire shapes (the 0.3.0 JSON schema, specification/json/a2a.json), as far as the translation reads or
 * writes them. The SDK's compat layer has the same types but does not export them; its converters work on the
 * SDK's own 1.0 objects, not on the ProtoJSON the service speaks, so this binding translates ProtoJSON itself.
 */

/** 0.3 JSON-RPC methods and the A2A 1.0 method each one is (A2A 1.0 §9.4 names). */
export const V03_METHODS = Object.freeze({
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard'
} as const)

export type V03Method = keyof typeof V03_METHODS
export type V1MethodOf03 = typeof V03_METHODS[V03Method]

export function isV03Method (method: string): method is V03Method {
  return Object.hasOwn(V03_METHODS, method)
}

/** The 0.3 service parameter that carries extension URIs (1.0 dropped the `X-`). */
export const V03_EXTENSIONS_HEADER = 'X-A2A-Extensions'

/** 0.3 task states (lower case) by their 1.0 ProtoJSON enum name. */
export const V03_TASK_STATES: Readonly<Record<string, string>> = Object.freeze({
  TASK_STATE_UNSPECIFIED: 'unknown',
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required'
})

/**
 * The metadata flag the SDK's compat layer sets on a 0.3 data part whose 1.0 value is not an object (0.3 data is
 * always an object): `{ data: { value }, metadata: { data_part_compat: true } }`. Read and written the same way here.
 */
export const DATA_PART_COMPAT_FLAG = 'data_part_compat'

type Metadata = Record<string, unknown>

export type V03Part =
  | { kind: 'text', text: string, metadata?: Metadata }
  | { kind: 'file', file: { bytes: string, mimeType?: string, name?: string } | { uri: string, mimeType?: string, name?: string }, metadata?: Metadata }
  | { kind: 'data', data: Record<string, unknown>, metadata?: Metadata }

export interface V03Message {
  kind: 'message'
  messageId: string
  role: 'user' | 'agent'
  parts: V03Part[]
  contextId?: string
  taskId?: string
  metadata?: Metadata
  extensions?: string[]
  referenceTaskIds?: string[]
}

export interface V03Artifact {
  artifactId: string
  parts: V03Part[]
  name?: string
  description?: string
  metadata?: Metadata
  extensions?: string[]
}

export interface V03TaskStatus {
  state: string
  message?: V03Message
  timestamp?: string
}

export interface V03Task {
  kind: 'task'
  id: string
  contextId: string
  status: V03TaskStatus
  history?: V03Message[]
  artifacts?: V03Artifact[]
  metadata?: Metadata
}

export interface V03StatusUpdate {
  kind: 'status-update'
  taskId: string
  contextId: string
  status: V03TaskStatus
  final: boolean
  metadata?: Metadata
}

export interface V03ArtifactUpdate {
  kind: 'artifact-update'
  taskId: string
  contextId: string
  artifact: V03Artifact
  append?: boolean
  lastChunk?: boolean
  metadata?: Metadata
}

export interface V03PushConfig {
  id?: string
  url: string
  token?: string
  authentication?: { schemes: string[], credentials?: string }
}

export interface V03TaskPushConfig {
  taskId: string
  pushNotificationConfig: V03PushConfig
}

export type V03Result = V03Message | V03Task | V03StatusUpdate | V03ArtifactUpdate
