/**
 * The library's errors: one base class, a stable `code` per kind (ERROR_CODES) so callers branch without parsing
 * messages, and a brand (undici's pattern) so `isConverseError` recognises an error of any copy of the library in the
 * process — `instanceof` fails across two installed versions.
 */
export const ERROR_CODES = Object.freeze({
  AGENT_EXISTS: 'A2A_CONVERSE_AGENT_EXISTS',
  AGENT_LIMIT: 'A2A_CONVERSE_AGENT_LIMIT',
  AGENT_VERSION: 'A2A_CONVERSE_AGENT_VERSION',
  AUTHENTICATION_UNAVAILABLE: 'A2A_CONVERSE_AUTHENTICATION_UNAVAILABLE',
  CAP_REACHED: 'A2A_CONVERSE_CAP_REACHED',
  CONVERSATION_MOVED: 'A2A_CONVERSE_CONVERSATION_MOVED',
  ENVELOPE_SERVICE: 'A2A_CONVERSE_ENVELOPE_SERVICE',
  FOLDER_IN_USE: 'A2A_CONVERSE_FOLDER_IN_USE',
  INVALID_JSON: 'A2A_CONVERSE_INVALID_JSON',
  INVALID_OPTION: 'A2A_CONVERSE_INVALID_OPTION',
  KNOWLEDGE_BASE: 'A2A_CONVERSE_KNOWLEDGE_BASE',
  MCP_INVALID_JSON: 'A2A_CONVERSE_MCP_INVALID_JSON',
  MESSAGE_ID_REUSED: 'A2A_CONVERSE_MESSAGE_ID_REUSED',
  MISSING_PEER: 'A2A_CONVERSE_MISSING_PEER',
  PROVIDER_TIMEOUT: 'A2A_CONVERSE_PROVIDER_TIMEOUT',
  PUSH_CONFIG_REFUSED: 'A2A_CONVERSE_PUSH_CONFIG_REFUSED',
  PUSH_FORBIDDEN_ADDRESS: 'A2A_CONVERSE_PUSH_FORBIDDEN_ADDRESS',
  RATE_LIMITED: 'A2A_CONVERSE_RATE_LIMITED',
  REPLY: 'A2A_CONVERSE_REPLY',
  REQUEST_HOST: 'A2A_CONVERSE_REQUEST_HOST',
  ROUTINE_DECLARATION: 'A2A_CONVERSE_ROUTINE_DECLARATION',
  ROUTINE_STATE: 'A2A_CONVERSE_ROUTINE_STATE',
  SEALED_VALUE: 'A2A_CONVERSE_SEALED_VALUE',
  SIGNING_KEY: 'A2A_CONVERSE_SIGNING_KEY',
  SECRETS_KEY: 'A2A_CONVERSE_SECRETS_KEY',
  SSE_EVENT_TOO_LARGE: 'A2A_CONVERSE_SSE_EVENT_TOO_LARGE',
  STORE_CLOSED: 'A2A_CONVERSE_STORE_CLOSED',
  STORE_UNAVAILABLE: 'A2A_CONVERSE_STORE_UNAVAILABLE',
  TASK_BUSY: 'A2A_CONVERSE_TASK_BUSY',
  TURN_FAILED: 'A2A_CONVERSE_TURN_FAILED',
  UNAUTHENTICATED: 'A2A_CONVERSE_UNAUTHENTICATED',
  UNKNOWN_ROUTINE: 'A2A_CONVERSE_UNKNOWN_ROUTINE',
  UPSTREAM: 'A2A_CONVERSE_UPSTREAM',
  UPSTREAM_CARD: 'A2A_CONVERSE_UPSTREAM_CARD',
  UPSTREAM_CARD_SIGNATURE: 'A2A_CONVERSE_UPSTREAM_CARD_SIGNATURE'
} as const)

export type ErrorCode = typeof ERROR_CODES[keyof typeof ERROR_CODES]

const BRAND = Symbol.for('a2a-converse.error')

export class ConverseError extends Error {
  readonly code: ErrorCode
  constructor (code: ErrorCode, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
    Object.defineProperty(this, BRAND, { value: true })
  }
}

/** Whether `error` is an error of a2a-converse (of any copy of it), and of `code` when one is given. */
export function isConverseError (error: unknown, code?: ErrorCode): error is ConverseError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true &&
    (code === undefined || (error as ConverseError).code === code)
}

/** A routine declaration is invalid; the message names the routine and the field. */
export class RoutineDeclarationError extends ConverseError {
  readonly routine: string
  readonly field: string
  constructor (routine: string, field: string, problem: string) {
    super(ERROR_CODES.ROUTINE_DECLARATION, `routine "${routine}": ${field} ${problem}`)
    this.routine = routine
    this.field = field
  }
}

/** An option passed at registration is invalid; the message names the option. */
export class InvalidOptionError extends ConverseError {
  readonly option: string
  constructor (option: string, problem: string) {
    super(ERROR_CODES.INVALID_OPTION, `option "${option}" ${problem}`)
    this.option = option
  }
}

/** The envelope provider did not answer within its timeout. */
export class ProviderTimeoutError extends ConverseError {
  constructor (timeoutMs: number) {
    super(ERROR_CODES.PROVIDER_TIMEOUT, `envelope provider did not answer within ${timeoutMs} ms`)
  }
}
