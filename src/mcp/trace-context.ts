/**
 * W3C trace context from an MCP request's `_meta` (SEP-414: `traceparent`, `tracestate`), as the headers of the A2A
 * call the tool makes, so the caller's trace continues through the A2A service (which reads them as any A2A
 * request's headers). Only well-formed values pass: a malformed traceparent is dropped, as a W3C receiver would
 * ignore the header, and a tracestate goes only with a traceparent and within the W3C limit (512 characters).
 */
import { TRACEPARENT_META_KEY, TRACESTATE_META_KEY } from '@modelcontextprotocol/server'

/** version-traceId-parentId-flags, lower-case hex; an all-zero trace or parent id is invalid (W3C Trace Context §3.2). */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
const TRACESTATE_LIMIT = 512

/** `{ traceparent, tracestate? }` from a request's `_meta`, or nothing when it carries no valid traceparent. */
export function traceHeadersOf (meta: Record<string, unknown> | undefined): Record<string, string> {
  const traceparent = meta?.[TRACEPARENT_META_KEY]
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return {}
  const tracestate = meta?.[TRACESTATE_META_KEY]
  if (typeof tracestate !== 'string' || tracestate.length > TRACESTATE_LIMIT || tracestate.trim() === '') return { traceparent }
  return { traceparent, tracestate }
}
