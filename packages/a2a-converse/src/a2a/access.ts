/**
 * Who may call an agent: the options' authenticators checked at construction, and a request's caller decided
 * (401 + WWW-Authenticate; 503 when the identity provider cannot be asked). The service asks here for every call
 * to an agent that requires a caller, and for a door that must know before its first call (the MCP door).
 */
import type { Authenticator } from '../auth/authenticator.js'
import { AuthenticationUnavailableError } from '../auth/errors.js'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import {
  CONVERSE_ERROR_DOMAIN, ERROR_INFO_TYPE, internalError, JsonRpcErrorCode, unauthenticated, type JsonRpcError
} from '../protocol/errors.js'
import type { A2ABackend, Caller, ServiceLogger } from '../protocol/backend.js'
import { logError } from './call-state.js'
import type { ServiceParameters } from './service.js'

/** The challenge of a 401 (RFC 6750 §3). */
export const AUTHENTICATE_CHALLENGE = 'Bearer realm="a2a"'

/** Who may go on: the agent's authenticated caller (none for a walk-in agent), or the error refusing the request. */
export type AccessDecision = { kind: 'allowed', caller?: Caller } | { kind: 'refused', status: number, headers: Record<string, string>, error: JsonRpcError }

/** The error of a call to an agent the service does not serve (bindings answer 404 before calling). */
export function unknownAgent (agentId: string): JsonRpcError {
  return {
    code: JsonRpcErrorCode.ServerError,
    message: `unknown agent "${agentId.slice(0, 128)}"`,
    data: [{ '@type': ERROR_INFO_TYPE, reason: 'AGENT_NOT_FOUND', domain: CONVERSE_ERROR_DOMAIN, metadata: {} }]
  }
}

/** Refuses, at construction, a backend of an undeclared agent and an authenticator of an agent not served here. */
export function checkAgents (
  extension: ConverseExtension, backends: ReadonlyMap<string, A2ABackend>, authenticated: ReadonlyMap<string, Authenticator>
): void {
  for (const agentId of backends.keys()) {
    if (!extension.agents.has(agentId)) throw new InvalidOptionError('backends', `"${agentId}" is not an agent declared to the extension`)
  }
  for (const [agentId, authenticator] of authenticated) {
    if (!backends.has(agentId)) throw new InvalidOptionError('authenticated', `"${agentId}" is not an agent served here`)
    if (typeof authenticator?.authenticate !== 'function') {
      throw new InvalidOptionError('authenticated', `"${agentId}" needs an authenticator (an authenticate(headers) method)`)
    }
  }
}

/**
 * The caller of a request to an agent that requires one, or the refusal. The credential's failure is never told
 * apart, to the client or in the log.
 */
export async function callerOf (
  headers: ServiceParameters, log: ServiceLogger | undefined, authenticator: Authenticator, replyHeaders: Record<string, string>
): Promise<AccessDecision> {
  let caller: Caller | undefined
  try {
    caller = await authenticator.authenticate(headers)
  } catch (error) {
    if (error instanceof AuthenticationUnavailableError) {
      log?.warn({ code: error.code }, 'A2A request not authenticated: the identity provider cannot be reached')
      return { kind: 'refused', status: 503, headers: { ...replyHeaders, 'retry-after': '5' }, error: internalError('authentication is unavailable; try again later') }
    }
  }
  if (caller !== undefined) return { kind: 'allowed', caller }
  const error = unauthenticated()
  logError(log, undefined, error)
  return { kind: 'refused', status: 401, headers: { ...replyHeaders, 'www-authenticate': AUTHENTICATE_CHALLENGE }, error }
}
