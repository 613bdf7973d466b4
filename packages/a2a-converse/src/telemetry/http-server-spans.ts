/**
 * The HTTP SERVER span of a plain HTTP request (the operator API: plugins/operator-api.ts), per the OpenTelemetry
 * semantic conventions for HTTP (stable): named `{method} {route}` with the route's template, never its values;
 * `http.request.method`, `http.route`, `url.scheme`, `http.response.status_code`; `error.type` (the status code) and
 * status ERROR only for a 5xx (a server span's rule: a 4xx is the client's). A child of the request's W3C trace
 * context. Fastify-free: the door's hooks hand in what they read.
 *
 * The span is never made the active context (nothing under it needs one: docs/observability.md, "The gateway app
 * registers no context manager"). With no SDK registered, starting it is the API's no-op tracer and ending it does
 * nothing more.
 */
import { ATTR, type Attributes } from './attributes.js'
import { extractTraceContext, SpanKind, SpanStatusCode, startSpan, type Context, type HeaderRecord, type Span } from './tracing.js'

// The stable HTTP conventions' names, spelled here rather than loading @opentelemetry/semantic-conventions (10 MB
// installed for six strings); test/library/telemetry/units.test.ts compares them with that package's constants.
export const ATTR_ERROR_TYPE = 'error.type'
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method'
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code'
export const ATTR_HTTP_ROUTE = 'http.route'
export const ATTR_URL_SCHEME = 'url.scheme'
export const HTTP_REQUEST_METHOD_VALUE_OTHER = '_OTHER'

/** The methods the conventions know (RFC 9110 and PATCH); any other is `_OTHER`, never the caller's text. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])

export interface HttpServerRequest {
  method: string
  /** The matched route's template (`/api/v1/agents/:agentId/events`); absent when no route matched. */
  route?: string
  /** `http` or `https` (as the server sees it, or as a trusted proxy says). */
  scheme: string
  headers: HeaderRecord
  /** The agent the request names, only when it is one the gateway serves (never the caller's text). */
  agentId?: string
  /** When the request began (ms since the epoch), for a span started late; default now. */
  startTime?: number
}

/**
 * The request's SERVER span, a child of its `traceparent` (a root without one), and the context holding it (the parent
 * of the work the request does); end it with endHttpServerSpan.
 */
export function startHttpServerSpan (request: HttpServerRequest): { span: Span, context: Context } {
  const known = KNOWN_METHODS.has(request.method)
  const method = known ? request.method : HTTP_REQUEST_METHOD_VALUE_OTHER
  const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: request.scheme }
  // An unknown method's span is `HTTP` (the conventions' name when the method is `_OTHER`).
  let name = known ? method : 'HTTP'
  if (request.route !== undefined) {
    name = `${name} ${request.route}`
    attributes[ATTR_HTTP_ROUTE] = request.route
  }
  if (request.agentId !== undefined) attributes[ATTR.agentId] = request.agentId
  return startSpan(name, SpanKind.SERVER, attributes, extractTraceContext(request.headers), request.startTime)
}

/** Ends the span with the response's status code (none when no response was sent: the client left first). */
export function endHttpServerSpan (span: Span, statusCode: number | undefined): void {
  if (statusCode !== undefined && span.isRecording()) {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode)
    if (statusCode >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(statusCode))
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
  }
  span.end()
}
