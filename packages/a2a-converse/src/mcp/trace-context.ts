/**
 * W3C trace context from an MCP request's `_meta` (SEP-414: `traceparent`, `tracestate`), as the headers of the A2A
 * call the tool makes, so the caller's trace continues through the A2A service (which reads them as any A2A
 * request's headers). Only well-formed values pass (`w3cTraceHeaders`): a malformed traceparent is dropped, as a W3C
 * receiver would ignore the header, and a tracestate goes only with a traceparent and within the W3C limit.
 */
import { TRACEPARENT_META_KEY, TRACESTATE_META_KEY } from '../peers/mcp.js'
import { w3cTraceHeaders } from '../telemetry/tracing.js'

/** `{ traceparent, tracestate? }` from a request's `_meta`, or nothing when it carries no valid traceparent. */
export function traceHeadersOf (meta: Record<string, unknown> | undefined): Record<string, string> {
  return w3cTraceHeaders(meta?.[TRACEPARENT_META_KEY], meta?.[TRACESTATE_META_KEY]) as Record<string, string>
}
