/**
 * The converse plugin's per-route hooks, opt-in as @fastify/rate-limit's are: a route marked `config: { converse }`
 * gets the extension negotiated on its request (the echo header, `request.converse`) and its JSON-RPC result
 * decorated before serialization; routes without the mark get no hooks at all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ConverseExtension } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { EXTENSIONS_HEADER } from '../core/uri.js'
import type { ConverseApi, ConverseRequestState, ConverseRouteConfig } from './converse-plugin.js'

const NOT_ACTIVE: Omit<ConverseRequestState, 'agentId'> = Object.freeze({ requested: [], activated: [], active: false })

/** The onRequest hook of one marked route: its config is read once, here, not per request. */
function converseRequestHook (extension: ConverseExtension, config: ConverseRouteConfig) {
  const fixedAgentId = config === true ? undefined : config.agentId
  return function onConverseRequest (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const agentId = fixedAgentId ?? String((request.params as { agentId?: string }).agentId ?? extension.defaultAgentId)
    const negotiated = extension.negotiate(agentId, request.headers['a2a-extensions'])
    if (negotiated === undefined) {
      request.converse = { agentId, ...NOT_ACTIVE }
      return done()
    }
    const { requested, activated, active, echo } = negotiated
    request.converse = { agentId, requested, activated, active }
    if (echo !== undefined) reply.header(EXTENSIONS_HEADER, echo)
    done()
  }
}

/**
 * The preSerialization hook of the marked routes. Callback style, so a reply decorated synchronously (a sync
 * provider) costs no promise.
 */
function converseSerializationHook (transformResult: ConverseApi['transformResult']) {
  return function onConverseSerialization (
    request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void
  ): void {
    const response = payload as { result?: unknown } | null
    if (response === null || typeof response !== 'object' || !('result' in response)) return done(null, payload)
    const method = (request.body as { method?: unknown } | undefined)?.method
    if (typeof method !== 'string') return done(null, payload)
    const original = response.result
    const finish = (result: unknown) => done(null, result === original ? payload : { ...response, result })
    const result = transformResult(request, method, original)
    // decorate never rejects; `done` as the rejection handler only guards against the unforeseen.
    if (result instanceof Promise) result.then(finish, done)
    else finish(result)
  }
}

/** Adds the hooks to every route registered from now on whose config marks it. */
export function addConverseHooks (fastify: FastifyInstance, extension: ConverseExtension, transformResult: ConverseApi['transformResult']): void {
  const onSerialization = converseSerializationHook(transformResult)
  fastify.addHook('onRoute', (route) => {
    const config = route.config?.converse
    if (config === undefined) return
    if (config !== true && (config === null || typeof config !== 'object' || !extension.agents.has(config.agentId))) {
      throw new InvalidOptionError(`config.converse of ${route.method} ${route.url}`, 'must be true or { agentId } naming a declared agent')
    }
    route.onRequest = [...toArray(route.onRequest), converseRequestHook(extension, config)]
    route.preSerialization = [...toArray(route.preSerialization), onSerialization]
  })
}

function toArray<T> (value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}
