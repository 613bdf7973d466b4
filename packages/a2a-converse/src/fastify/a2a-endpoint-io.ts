/**
 * The Fastify A2A door's own I/O, apart from its wiring (a2a-endpoint.ts): its JSON body parser, its error handler
 * (a body or client error answered with the binding's error body), and its open SSE streams, which closing the app
 * ends. Nothing here decides A2A: the service does.
 */
import createError from '@fastify/error'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { HTTP_JSON_PATH } from '../bindings/http-json/binding.js'
import { restErrorBody } from '../bindings/http-json/errors.js'
import type { RequestBody, StreamReply } from '../bindings/jsonrpc/binding.js'
import { writeStream } from '../http/node-stream-writer.js'
import { RateLimitedError } from '../http/rate-limited-error.js'
import { errorResponse, internalError, invalidRequest, rateLimited, type JsonRpcError } from '../protocol/errors.js'

/** The body is not JSON: answered with HTTP 400 and a -32700 body. */
export const InvalidJsonBodyError = createError('A2A_CONVERSE_INVALID_JSON', 'Invalid JSON payload', 400)

export type RouteRequest = FastifyRequest<{ Params: { agentId?: string } }>

/** How the door answers a request with a body: through the JSON-RPC binding, or the HTTP+JSON one. */
export type Answer = (request: RouteRequest, reply: FastifyReply, body: RequestBody) => Promise<unknown>

/** The door's body parser, for every accepted content type: JSON, or nothing for an empty body. */
export function parseJsonBody (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void {
  // An empty body is no body (the official HTTP+JSON client sends Content-Type on a bodiless `:cancel`).
  if (body === '') {
    done(null, undefined)
    return
  }
  let parsed: unknown
  try {
    // JSON.parse makes `__proto__` / `constructor` plain own data members: inert, never a prototype.
    parsed = JSON.parse(body as string)
  } catch {
    done(new InvalidJsonBodyError(), undefined)
    return
  }
  done(null, parsed)
}

/**
 * The door's error handler: a body error Fastify raised before the handler goes to the binding (its own error
 * reply); a rate limiter's refusal is 429, another client error its status, anything else 500 — each in the
 * binding's error body: JSON-RPC's, or HTTP+JSON's (AIP-193) on its routes.
 */
export function endpointErrorHandler (answer: Answer, answerHttpJson: Answer) {
  return (error: FastifyError, request: RouteRequest, reply: FastifyReply) => {
    const body = bodyError(error, request)
    if (body !== undefined) return isHttpJson(request) ? answerHttpJson(request, reply, body) : answer(request, reply, body)
    const send = (status: number, rpcError: JsonRpcError) => isHttpJson(request)
      ? reply.code(status).send(restErrorBody(rpcError, status))
      : reply.code(status).send(errorResponse(null, rpcError))
    // A rate limiter in front of the route (the gateway's): 429, Retry-After already set.
    if (error instanceof RateLimitedError) return send(429, rateLimited(error.retryAfterSec))
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      // A client error raised elsewhere (an auth hook, a bad Content-Length): its status.
      return send(status, invalidRequest([{ field: 'request', description: error.message }], error.message))
    }
    request.log.error({ err: error }, 'A2A endpoint failed')
    return send(500, internalError())
  }
}

/** The door's open streams: each written on the raw response, all ended when the app closes (so close() can finish). */
export function hijackedStreams (): { write: (reply: FastifyReply, result: StreamReply, controller: AbortController) => Promise<FastifyReply>, closeAll: () => Promise<void> } {
  const streams = new Map<AbortController, Promise<void>>()
  return {
    /** Writes SSE frames on the raw response, the stream known to closeAll until it ends. */
    async write (reply, result, controller) {
      reply.hijack()
      // Headers set on the reply (a request id, say) are not written by Fastify once hijacked.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
      }
      const done = writeStream(reply.raw, result, controller)
      streams.set(controller, done)
      await done
      streams.delete(controller)
      return reply
    },
    async closeAll () {
      const open = [...streams]
      for (const [controller] of open) controller.abort()
      await Promise.all(open.map(([, done]) => done))
    }
  }
}

/**
 * The path after <prefix>/a2a/<id>/rest as sent, percent-encoded: the binding decodes each segment once (Fastify's
 * wildcard parameter is decoded, `%2F` included, so a task id with a slash would split).
 */
export function rawTail (request: RouteRequest): string {
  const fixed = (request.routeOptions.url as string).split('/').length - 1
  return `/${request.url.split('?', 1)[0].split('/').slice(fixed).join('/')}`
}

function isHttpJson (request: RouteRequest): boolean {
  return request.routeOptions.url?.endsWith(`${HTTP_JSON_PATH}/*`) === true
}

/** The body errors Fastify raises before the handler, as the service's RequestBody. */
function bodyError (error: FastifyError, request: RouteRequest): RequestBody | undefined {
  switch (error.code) {
    case 'A2A_CONVERSE_INVALID_JSON':
      return { kind: 'invalid_json' }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { kind: 'unsupported_media_type', contentType: request.headers['content-type'] }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'too_large', limit: request.routeOptions.bodyLimit }
    default:
      return undefined
  }
}
