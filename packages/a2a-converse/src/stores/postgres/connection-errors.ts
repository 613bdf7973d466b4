/**
 * Which driver errors mean "the database is not reachable" (as opposed to a bad query or a constraint), and their
 * mapping to StoreUnavailableError.
 */
import { StoreUnavailableError } from '../errors.js'

/** Socket-level failures: refused, reset, unreachable, unresolvable, timed out. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'
])
/** admin_shutdown, crash_shutdown, cannot_connect_now (SQLSTATE class 08, connection_exception, is matched by prefix). */
const SERVER_GONE_CODES = new Set(['57P01', '57P02', '57P03'])
/** too_many_connections, query_canceled (statement_timeout): reachable in principle, not answering in bounded time. */
const NOT_ANSWERING_CODES = new Set(['53300', '57014'])
/**
 * disk_full, io_error: the database cannot write its files (a full disk during a turn). The write failed whole (its
 * transaction rolled back); once there is room again the store works as before, so the caller is told to retry.
 */
const CANNOT_WRITE_CODES = new Set(['53100', '58030'])
/** pg and pg-pool report lost or timed-out connections with these messages (no code). */
const CONNECTION_MESSAGES = /connection terminated|timeout exceeded when trying to connect|not queryable/i

function codeOf (error: Error): string | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/**
 * True when the error says the connection could not be made or was lost: nothing can have been done on it since,
 * so an operation that had not started its work yet may be retried on a fresh connection.
 */
export function isConnectionFailure (error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = codeOf(error)
  if (code !== undefined && (NETWORK_CODES.has(code) || SERVER_GONE_CODES.has(code) || code.startsWith('08'))) return true
  // Node reports a failed connection to a host with several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError.
  if (error instanceof AggregateError && error.errors.some(isConnectionFailure)) return true
  return CONNECTION_MESSAGES.test(error.message)
}

/**
 * True when the server answered the statement with an error (a SQLSTATE: a constraint, a refusal such as the owner's
 * cap) and the connection is as before — not lost, not timed out, not out of room: an autocommit statement leaves
 * nothing open, so the connection can go back to its pool.
 */
export function isStatementError (error: unknown): boolean {
  return error instanceof Error && /^[0-9A-Z]{5}$/.test(codeOf(error) ?? '') && !isUnavailable(error)
}

/**
 * True when the database is unreachable, not answering within its bounds (a connection failure or a timeout), or
 * cannot write its files (a full disk).
 */
export function isUnavailable (error: unknown): boolean {
  if (isConnectionFailure(error)) return true
  const code = error instanceof Error ? codeOf(error) : undefined
  return code !== undefined && (NOT_ANSWERING_CODES.has(code) || CANNOT_WRITE_CODES.has(code))
}

/** True when the database failed to write its files (disk_full, io_error). `error`: what a driver threw (an Error). */
export function isWriteFailure (error: unknown): boolean {
  return CANNOT_WRITE_CODES.has(codeOf(error as Error) as string)
}

/** StoreUnavailableError for an unavailable database, else the error itself. */
export function toStoreError (error: unknown): unknown {
  return isUnavailable(error) ? new StoreUnavailableError(error) : error
}
