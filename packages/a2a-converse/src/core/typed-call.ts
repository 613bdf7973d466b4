/**
 * Reading a typed routine call from a user message: `metadata[URI].call = { toolName, arguments }`, honoured only
 * when the request activated the extension and the message lists the URI in `extensions`. One reader for the
 * request check (a malformed call is -32602 naming the field) and the conversation executor (which runs it).
 */
import { CONVERSE_EXTENSION_URI } from './uri.js'

/** A typed routine call as a message carries it. */
export interface TypedCall {
  toolName: string
  arguments: unknown
}

/** The envelope's `invocation.toolName` holds at most this many characters; a longer name is cut to it. */
export const MAX_TOOL_NAME_LENGTH = 256

/** Where a message's call sits, as a field path relative to the message. */
export const CALL_FIELD = `metadata[${CONVERSE_EXTENSION_URI}].call`

export type TypedCallReading =
  | { kind: 'none' }
  | { kind: 'call', call: TypedCall }
  /** `field` is relative to the message (`metadata[URI].call.toolName`). */
  | { kind: 'invalid', field: string, description: string }

interface CallCarrier {
  extensions?: unknown
  metadata?: unknown
}

/**
 * The message's typed call. `none` when the request did not activate the extension, the message does not list the
 * URI or its `metadata[URI]` has no `call` member: such a message is a plain one. `invalid` when the call is there
 * but is not an object, or its toolName is not a non-empty string.
 */
export function readTypedCall (message: CallCarrier, activated: boolean): TypedCallReading {
  if (!activated || !Array.isArray(message.extensions) || !message.extensions.includes(CONVERSE_EXTENSION_URI)) return { kind: 'none' }
  const metadata = message.metadata
  if (metadata === null || typeof metadata !== 'object') return { kind: 'none' }
  const entry = (metadata as Record<string, unknown>)[CONVERSE_EXTENSION_URI]
  if (entry === null || typeof entry !== 'object' || !Object.hasOwn(entry, 'call')) return { kind: 'none' }
  const call = (entry as { call: unknown }).call
  if (call === null || typeof call !== 'object' || Array.isArray(call)) {
    return { kind: 'invalid', field: CALL_FIELD, description: 'must be an object with toolName and arguments' }
  }
  const { toolName, arguments: args } = call as { toolName?: unknown, arguments?: unknown }
  if (typeof toolName !== 'string' || toolName === '') {
    return { kind: 'invalid', field: `${CALL_FIELD}.toolName`, description: 'must be a non-empty string' }
  }
  return { kind: 'call', call: { toolName: toolName.slice(0, MAX_TOOL_NAME_LENGTH), arguments: args ?? {} } }
}
