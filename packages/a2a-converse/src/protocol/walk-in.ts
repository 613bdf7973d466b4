/**
 * What a walk-in may ask for (docs/identities.md, "Walk-ins are strangers"). A request without a caller, on an agent
 * that takes walk-ins, has no scope of its own: it reaches only what it holds an unguessable handle to — a task id
 * (the server's UUID) or a contextId that is a UUID, as the gateway and the official SDKs issue them. So:
 *
 * - a walk-in's contextId (SendMessage / SendStreamingMessage `message.contextId`, ListTasks `contextId`) must be a
 *   UUID. A2A 1.0 §3.4.1: a server that does not accept a client-chosen contextId MUST reject it and MUST NOT put
 *   another in its place — "alice-private" can be guessed, so it is refused, never replaced;
 * - a walk-in's ListTasks names one conversation: without a contextId there is nothing it may see.
 *
 * Empty strings count as absent (the official client sends `""` for an unset field). Callers with a credential keep
 * any contextId: their conversations are their own already.
 */
import type { FieldViolation } from './errors.js'
import type { A2AMethod } from './methods.js'

/** 8-4-4-4-12 hex digits, either case (RFC 9562's text form; any version). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const WALK_IN_CONTEXT_ID = "a walk-in's contextId must be a UUID (omit it and the server issues one)"
export const WALK_IN_LIST = 'a walk-in lists the tasks of one conversation: give its contextId'

/** The violations of a walk-in's request whose params are valid otherwise, or undefined. */
export function walkInViolations (method: A2AMethod, params: unknown): FieldViolation[] | undefined {
  switch (method) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      return contextIdViolation('message.contextId', (params as { message: { contextId?: string } }).message.contextId)
    case 'ListTasks': {
      const contextId = (params as { contextId?: string }).contextId
      if (contextId === undefined || contextId === '') return [{ field: 'contextId', description: WALK_IN_LIST }]
      return contextIdViolation('contextId', contextId)
    }
    default:
      return undefined
  }
}

function contextIdViolation (field: string, contextId: string | undefined): FieldViolation[] | undefined {
  if (contextId === undefined || contextId === '' || UUID_PATTERN.test(contextId)) return undefined
  return [{ field, description: WALK_IN_CONTEXT_ID }]
}
