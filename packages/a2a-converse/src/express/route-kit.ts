/**
 * What every route of the Express door shares: the router's context, reading a body, a handler that never leaks a
 * stack, sending a card and the default logger — so that converse-router.ts, a2a-routes.ts and decorate-route.ts
 * each keep to their job.
 */
import type { Request, RequestHandler, Response } from 'express'
import type { ServiceLogger } from '../protocol/backend.js'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import type { BoundA2AService } from '../bindings/index.js'
import type { RequestBody } from '../bindings/jsonrpc/binding.js'
import { unknownAgentBody } from '../bindings/jsonrpc/binding.js'
import { readRequestBody } from '../http/request-body.js'
import { requestHostErrorBody, RequestHostError } from '../http/request-origin.js'
import { cardReply } from '../http/card-cache.js'
import { JWKS_PATH, type CardSigner } from '../auth/card-signer.js'
import { HTTP_JSON_PATH } from '../bindings/http-json/binding.js'

/** What the router's routes are built from (converse-router.ts makes it once per router). */
export interface RouterContext {
  readonly extension: ConverseExtension
  readonly service: BoundA2AService
  readonly bodyLimit: number
  readonly publicUrl: (request: Request) => string
  readonly mcpPublicUrl: (request: Request) => string
  /** An agent's card as this request sees it (converse-router.ts's `cardFor`). */
  readonly cardFor: (agentId: string, request: Request) => Record<string, unknown> | undefined
  /** The request's own logger (pino-http's `req.log`), else the router's. */
  readonly logFor: (request: Request) => ServiceLogger
}

const STDERR_LOGGER: ServiceLogger = Object.freeze({
  error: (object: object, message: string) => console.error(message, object),
  warn: (object: object, message: string) => console.warn(message, object),
  info: () => {}
})

/** The router's logger: the option, else errors and warnings to stderr. Only an absent one gets the default. */
export function routerLogger (logger: ServiceLogger | undefined): ServiceLogger {
  const chosen = logger === undefined ? STDERR_LOGGER : logger
  if (chosen === null || typeof chosen !== 'object' || ['error', 'warn', 'info'].some((level) => typeof (chosen as unknown as Record<string, unknown>)[level] !== 'function')) {
    throw new InvalidOptionError('logger', 'must be a pino-compatible logger (error, warn and info methods)')
  }
  return chosen
}

/** `logFor` of a router: a request's own logger wins. */
export function loggerOf (fallback: ServiceLogger): (request: Request) => ServiceLogger {
  return (request) => {
    const own = (request as Request & { log?: ServiceLogger }).log
    return own !== undefined && typeof own.error === 'function' ? own : fallback
  }
}

/**
 * The request's body: what a parser mounted before the router already read (absent when it left none), else read
 * by the A2A endpoint's rules; undefined when the client left before sending all of it (nothing to answer).
 */
export async function bodyOf (request: Request, bodyLimit: number): Promise<RequestBody | undefined> {
  if (!request.readableEnded) return await readRequestBody(request, bodyLimit)
  return request.body === undefined ? { kind: 'absent' } : { kind: 'json', value: request.body }
}

/** 404 with the JSON-RPC body naming the agent. */
export function unknownAgent (response: Response, agentId: string): void {
  response.status(404).json(unknownAgentBody(agentId))
}

/**
 * A route handler whose failures (a user's publicUrl function throwing, an unserializable reply) are logged
 * and answered 500 without a stack — never Express's default HTML error page.
 */
export function guarded (
  handler: (request: Request, response: Response) => void | Promise<void>,
  logFor: (request: Request) => ServiceLogger,
  fail: (response: Response) => void = (response) => {
    response.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  }
): RequestHandler {
  return async function converseHandler (request, response) {
    try {
      await handler(request, response)
    } catch (error) {
      // Nothing is written before a handler's last step, so the headers are still unsent here.
      if (error instanceof RequestHostError) {
        response.status(400).json(requestHostErrorBody(error))
        return
      }
      logFor(request).error({ err: error }, 'a2a-converse route failed')
      fail(response)
    }
  }
}

/** The card signed last (its JWKS at `jku`), when the router signs; else as it is. */
export async function signed (signer: CardSigner | undefined, card: Record<string, unknown>, jku: string): Promise<Record<string, unknown>> {
  return signer === undefined ? card : await signer.sign(card, jku)
}

/** A card with its cache validators (http/card-cache.ts), or 304 when the client holds it already. */
export function sendCard (request: Request, response: Response, card: Record<string, unknown>, varies: boolean, fromRequest: boolean): void {
  const { status, headers, body } = cardReply(card, request.headers['if-none-match'], varies, fromRequest)
  response.status(status).set(headers)
  if (body === undefined) response.end()
  else response.send(body)
}

/** The tail of an HTTP+JSON request's baseUrl (the sub-router at <mount>/a2a/<id>/rest): what is left is the mount. */
const HTTP_JSON_MOUNT = new RegExp(`/a2a/[^/]+${HTTP_JSON_PATH}$`)

/**
 * The extended card signed as the well-known cards are, its jku under the router's mount (an HTTP+JSON request is in
 * the sub-router at <mount>/a2a/<id>/rest, whose baseUrl says so); undefined when the router does not sign.
 */
export function extendedCardSigner (signer: CardSigner | undefined, publicUrl: (request: Request) => string) {
  if (signer === undefined) return undefined
  return async (card: Record<string, unknown>, request: Request) => {
    const mount = request.baseUrl.replace(HTTP_JSON_MOUNT, '')
    return await signer.sign(card, `${publicUrl(request)}${mount}${JWKS_PATH}`)
  }
}
