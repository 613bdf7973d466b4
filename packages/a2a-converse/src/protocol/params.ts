/**
 * A2A 1.0 params validation (ProtoJSON, §5.5–§5.7): one JSON Schema per method, compiled once with ajv at
 * module load. REQUIRED fields must be present, required arrays non-empty, `oneof` Parts carry exactly one
 * member; unknown fields are ignored (§5.7). Field names are the JSON (lowerCamelCase) names: proto names
 * (`message_id`) were renamed before (core/proto-names.ts).
 *
 * Enums: the full proto names (`ROLE_USER`, `TASK_STATE_WORKING`) and, as every ProtoJSON parser must, their
 * integer values. 0.3 spellings (`user`, `completed`) are rejected.
 *
 * Failures become `google.rpc.BadRequest` field violations with paths relative to `params`
 * (`message.parts[0]`), at most MAX_VIOLATIONS of them. Validation never reads beyond the request and never
 * touches a store.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { FieldViolation } from './errors.js'
import { A2A_METHODS, type A2AMethod } from './methods.js'
import { MAX_ID_LENGTH, MAX_MESSAGE_PARTS, PART_MEMBERS, ROLES, TASK_STATES, UNRECOGNIZED_STATUS } from './param-values.js'
import { toViolations } from './param-violations.js'

export {
  MAX_ID_LENGTH, MAX_MESSAGE_PARTS, MAX_VIOLATIONS, PART_MEMBERS, ROLES, TASK_STATES, UNRECOGNIZED_STATUS, withoutUnsetStatusFilter
} from './param-values.js'

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/

/** RFC 3339 date-time with a real calendar date (no 2026-02-30), as google.protobuf.Timestamp accepts it. */
export function isRfc3339Timestamp (value: string): boolean {
  const match = RFC3339.exec(value)
  if (match === null) return false
  const [year, month, day, hour, minute, second, offsetHour = 0, offsetMinute = 0] = match.slice(1).map((v) => Number(v ?? 0))
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth &&
    hour <= 23 && minute <= 59 && second <= 59 && offsetHour <= 23 && offsetMinute <= 59
}

const string = { type: 'string' } as const
const struct = { type: 'object' } as const
const stringList = { type: 'array', items: string } as const
/**
 * An identifier that may be empty (the SDK makes one): at most MAX_ID_LENGTH characters, no U+0000 and no unpaired
 * surrogate (PostgreSQL cannot hold them, so no store takes them; in other text an unpaired surrogate becomes U+FFFD:
 * well-formed.ts).
 */
const optionalId = { type: 'string', maxLength: MAX_ID_LENGTH, a2aNoNul: true, a2aWellFormed: true } as const
/** An identifier: as optionalId, with at least one non-space character. */
const id = { ...optionalId, pattern: '\\S', a2aMessage: 'must not be empty' } as const
const idList = { type: 'array', items: optionalId } as const
const int32NonNegative = { type: 'integer', minimum: 0, maximum: 2147483647 } as const
const httpUrl = { type: 'string', pattern: '^https?://\\S+$', a2aMessage: 'must be an absolute http(s) URL' } as const

const part = {
  type: 'object',
  a2aExactlyOne: PART_MEMBERS,
  properties: {
    text: string,
    raw: { type: 'string', pattern: '^[A-Za-z0-9+/_-]*={0,2}$', a2aMessage: 'must be base64' },
    url: { type: 'string', minLength: 1 },
    mediaType: string,
    filename: string,
    metadata: struct
  }
} as const

const message = {
  type: 'object',
  required: ['messageId', 'role', 'parts'],
  properties: {
    messageId: id,
    contextId: optionalId,
    taskId: optionalId,
    role: { enum: [...ROLES, 1, 2] },
    parts: { type: 'array', minItems: 1, maxItems: MAX_MESSAGE_PARTS, items: part },
    metadata: struct,
    extensions: stringList,
    referenceTaskIds: idList
  }
} as const

/**
 * What a push config sends as an HTTP header value (`token`, `authentication.credentials`): no control character
 * but tab (RFC 9110 §5.5), so a config that could never be sent is refused when it is made, not retried until it
 * gives up. The scheme is a token (RFC 9110 §11.1).
 */
const headerValue = { type: 'string', pattern: '^[^\\x00-\\x08\\x0A-\\x1F\\x7F]*$', a2aMessage: 'must not contain control characters (it is sent as an HTTP header value)' } as const
const authScheme = { type: 'string', maxLength: MAX_ID_LENGTH, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", a2aMessage: 'must be an HTTP authentication scheme (a token, e.g. Bearer)' } as const

const authentication = {
  type: 'object',
  required: ['scheme'],
  properties: { scheme: authScheme, credentials: headerValue }
} as const

const pushConfigMembers = {
  tenant: optionalId,
  id: optionalId,
  taskId: optionalId,
  url: httpUrl,
  token: headerValue,
  authentication
} as const

const sendMessage = {
  type: 'object',
  required: ['message'],
  properties: {
    tenant: optionalId,
    message,
    configuration: {
      type: 'object',
      properties: {
        acceptedOutputModes: stringList,
        taskPushNotificationConfig: { type: 'object', required: ['url'], properties: pushConfigMembers },
        historyLength: int32NonNegative,
        returnImmediately: { type: 'boolean' }
      }
    },
    metadata: struct
  }
} as const

const taskById = (extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required: ['id'],
  properties: { tenant: optionalId, id, ...extra }
})

const pushConfigById = {
  type: 'object',
  required: ['taskId', 'id'],
  properties: { tenant: optionalId, taskId: id, id }
} as const

const SCHEMAS: Record<A2AMethod, object> = {
  SendMessage: sendMessage,
  SendStreamingMessage: sendMessage,
  GetTask: taskById({ historyLength: int32NonNegative }),
  ListTasks: {
    type: 'object',
    properties: {
      tenant: optionalId,
      contextId: optionalId,
      status: { enum: [...TASK_STATES, 0, 1, 2, 3, 4, 5, 6, 7, 8, UNRECOGNIZED_STATUS] },
      pageSize: { type: 'integer', minimum: 1, maximum: 100 },
      pageToken: string,
      historyLength: int32NonNegative,
      statusTimestampAfter: { type: 'string', a2aTimestamp: true },
      includeArtifacts: { type: 'boolean' }
    }
  },
  CancelTask: taskById({ metadata: struct }),
  SubscribeToTask: taskById(),
  CreateTaskPushNotificationConfig: {
    type: 'object',
    required: ['taskId', 'url'],
    properties: { ...pushConfigMembers, taskId: id }
  },
  GetTaskPushNotificationConfig: pushConfigById,
  DeleteTaskPushNotificationConfig: pushConfigById,
  ListTaskPushNotificationConfigs: {
    type: 'object',
    required: ['taskId'],
    properties: { tenant: optionalId, taskId: id, pageSize: { type: 'integer', minimum: 0, maximum: 100 }, pageToken: string }
  },
  GetExtendedAgentCard: { type: 'object', properties: { tenant: optionalId } }
}

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true })
ajv.addKeyword({ keyword: 'a2aMessage', schemaType: 'string' })
ajv.addKeyword({
  keyword: 'a2aExactlyOne',
  type: 'object',
  schemaType: 'array',
  validate: (members: readonly string[], data: Record<string, unknown>) =>
    members.filter((member) => Object.hasOwn(data, member)).length === 1
})
ajv.addKeyword({
  keyword: 'a2aNoNul',
  type: 'string',
  schemaType: 'boolean',
  validate: (_schema: boolean, data: string) => !data.includes('\0')
})
ajv.addKeyword({
  keyword: 'a2aWellFormed',
  type: 'string',
  schemaType: 'boolean',
  validate: (_schema: boolean, data: string) => data.isWellFormed()
})
ajv.addKeyword({
  keyword: 'a2aTimestamp',
  type: 'string',
  schemaType: 'boolean',
  validate: (_schema: boolean, data: string) => isRfc3339Timestamp(data)
})

const VALIDATORS = new Map<A2AMethod, ValidateFunction>(A2A_METHODS.map((method) => [method, ajv.compile(SCHEMAS[method])]))

/** The JSON Schema of a method's params (for documentation and tests). */
export function paramsSchema (method: A2AMethod): object {
  return SCHEMAS[method]
}

/**
 * The params' violations, or undefined when they are valid. Params that are absent count as `{}` for
 * GetExtendedAgentCard (its request has only an optional tenant) and as missing everywhere else.
 */
export function validateParams (method: A2AMethod, params: unknown): FieldViolation[] | undefined {
  const value = params === undefined && method === 'GetExtendedAgentCard' ? {} : params
  const validate = VALIDATORS.get(method) as ValidateFunction
  if (validate(value)) return undefined
  return toViolations(validate.errors as ErrorObject[])
}
