/**
 * `decorateRoute()`: the middleware that gives a JSON-RPC route the user wrote negotiation, the echo header and
 * decoration of `res.json` (the Fastify plugin's `config: { converse }`), and `transformResult` for SSE writers.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { ServiceLogger } from '../protocol/backend.js'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { EXTENSIONS_HEADER } from '../core/uri.js'

/** Per-request negotiation result, on `res.locals.converse` for routes behind `decorateRoute()`. */
export interface ConverseLocals {
  agentId: string
  requested: readonly string[]
  activated: readonly string[]
  /** Whether this request activated the converse extension. */
  active: boolean
}

export interface DecorateRouteOptions {
  /** The agent of this route. Default: the `:agentId` route parameter, else the first agent. */
  agentId?: string
}

const NOT_ACTIVE = Object.freeze({ requested: Object.freeze([]), activated: Object.freeze([]), active: false })

export interface RouteDecorator {
  decorateRoute: (options?: DecorateRouteOptions) => RequestHandler
  transformResult: (response: Response, method: string, result: unknown) => Promise<unknown> | unknown
}

export function routeDecorator (extension: ConverseExtension, logFor: (request: Request) => ServiceLogger): RouteDecorator {
  function decorateRoute (routeOptions: DecorateRouteOptions = {}): RequestHandler {
    const fixedAgentId = routeOptions?.agentId
    if (fixedAgentId !== undefined && !extension.agents.has(fixedAgentId)) {
      throw new InvalidOptionError('decorateRoute agentId', 'must name a declared agent')
    }
    return function converseRoute (request: Request, response: Response, next: NextFunction): void {
      const agentId = fixedAgentId ?? (request.params as { agentId?: string }).agentId ?? extension.defaultAgentId
      const negotiated = extension.negotiate(agentId, request.headers['a2a-extensions'])
      const state: ConverseLocals = negotiated === undefined
        ? { agentId, ...NOT_ACTIVE }
        : { agentId, requested: negotiated.requested, activated: negotiated.activated, active: negotiated.active }
      response.locals.converse = state
      if (negotiated?.echo !== undefined) response.setHeader(EXTENSIONS_HEADER, negotiated.echo)
      const json = response.json.bind(response)
      response.json = function converseJson (payload: unknown): Response {
        const rpc = payload as { result?: unknown } | null
        const method = (request.body as { method?: unknown } | undefined)?.method
        if (rpc === null || typeof rpc !== 'object' || !('result' in rpc) || typeof method !== 'string') return json(payload)
        const result = transformResult(response, method, rpc.result)
        if (!(result instanceof Promise)) return json(result === rpc.result ? payload : { ...rpc, result })
        // decorate never rejects; a failing send (an unserializable body) goes to Express's error handling.
        result.then((decorated) => { json({ ...rpc, result: decorated }) }).catch(next)
        return response
      }
      next()
    }
  }

  function transformResult (response: Response, method: string, result: unknown): Promise<unknown> | unknown {
    const state = response.locals.converse as ConverseLocals | undefined
    if (state === undefined) return result
    return extension.transform(method, result, { agentId: state.agentId, negotiated: state, body: response.req.body, log: logFor(response.req) })
  }

  return { decorateRoute, transformResult }
}
