/**
 * The A2A service with its bindings on it — what a door serves: `call` (binding-neutral, src/a2a/service.ts),
 * `handle` (JSON-RPC, §9) and `handleHttpJson` (HTTP+JSON, §11), each a thin mapper over `call`.
 */
import { createA2AService, type A2AService, type A2AServiceOptions } from '../a2a/service.js'
import { answerHttpJson, type HttpJsonReply, type HttpJsonRequest } from './http-json/binding.js'
import { answerJsonRpc, type A2AReply, type A2AServiceRequest } from './jsonrpc/binding.js'

export interface BoundA2AService extends A2AService {
  /** Answers one JSON-RPC request. Never rejects. */
  handle (request: A2AServiceRequest): Promise<A2AReply>
  /** Answers one HTTP+JSON request. Never rejects. */
  handleHttpJson (request: HttpJsonRequest): Promise<HttpJsonReply>
}

export function createBoundA2AService (options: A2AServiceOptions): BoundA2AService {
  const service = createA2AService(options)
  return {
    ...service,
    handle: async (request) => await answerJsonRpc(service, request),
    handleHttpJson: async (request) => await answerHttpJson(service, request)
  }
}
