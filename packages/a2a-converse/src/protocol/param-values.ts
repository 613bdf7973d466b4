/**
 * The values A2A 1.0 params are checked against (params.ts) and worded with (param-violations.ts): the request
 * bounds, the Part members, the enums' names, and the unset ListTasks status filter the official client sends.
 */

/** At most this many violations are reported: a request with 10 000 bad parts gets a bounded answer. */
export const MAX_VIOLATIONS = 20

/**
 * The longest identifier a request may carry (contextId, taskId, messageId, referenceTaskIds[], a push config id,
 * tenant), in UTF-16 code units as JavaScript counts them: the same limit for the memory and the PostgreSQL stores
 * (whose id columns are text), so both accept exactly the same requests. A realistic `session-<uuid>` is 44.
 */
export const MAX_ID_LENGTH = 128

/**
 * The most parts one message may carry (SendMessage, SendStreamingMessage): a request's work is bounded by its parts
 * (each is checked, decorated, stored and listed again with the task), so one body of 80 000 tiny parts cannot make
 * every later ListTasks slow. Fixed, like MAX_ID_LENGTH: memory and PostgreSQL accept exactly the same messages.
 */
export const MAX_MESSAGE_PARTS = 100

export const PART_MEMBERS = Object.freeze(['text', 'raw', 'url', 'data'])
export const ROLES = Object.freeze(['ROLE_USER', 'ROLE_AGENT'])
export const TASK_STATES = Object.freeze([
  'TASK_STATE_UNSPECIFIED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED'
])

/**
 * What the official @a2a-js/sdk client sends as ListTasks `status` when the caller gave none (its generated
 * toJSON of an unset enum). Accepted, like `TASK_STATE_UNSPECIFIED`, as "no status filter".
 */
export const UNRECOGNIZED_STATUS = 'UNRECOGNIZED'

/** ListTasks params with an unset status filter (unspecified or unrecognized, by name or number) removed. */
export function withoutUnsetStatusFilter (params: Record<string, unknown>): Record<string, unknown> {
  const status = params.status
  if (status !== UNRECOGNIZED_STATUS && status !== 'TASK_STATE_UNSPECIFIED' && status !== 0) return params
  const { status: _unset, ...rest } = params
  return rest
}
